-- Matching suggestions read every open transaction of one bank account;
-- once most are reconciled, the open ones are a small part of the
-- account's history, so they get their own partial index.
CREATE INDEX transactions_open ON transactions (tenant_id, bank_account_id, booking_date, id) WHERE status = 'open';
