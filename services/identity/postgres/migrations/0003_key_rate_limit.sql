-- An API key may carry its own requests-per-minute limit, set by an admin
-- when the key is created; NULL keeps the gateway's platform default. The
-- operator's maximum is enforced by the service, since it is configuration.
ALTER TABLE api_keys ADD COLUMN rate_limit_per_minute int CHECK (rate_limit_per_minute > 0);
