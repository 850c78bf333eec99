-- The accounting period of an intent: the month of its booking date, or
-- YYYY-13 for postings into a year's adjustment period (closing entries
-- made while the year's months are locked).
ALTER TABLE intents ADD COLUMN period text NOT NULL DEFAULT ''
    CHECK (period = '' OR period ~ '^[0-9]{4}-(0[1-9]|1[0-3])$');
