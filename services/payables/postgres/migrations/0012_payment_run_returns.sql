-- A transfer of a completed run that the bank sent back (a closed
-- account, a wrong IBAN: a SEPA return) is recorded on its item: the item
-- is no longer active, so the invoice may go into another run, and the
-- completed run keeps the record of what it tried to pay.
ALTER TABLE payment_run_items
    ADD COLUMN returned_at   timestamptz,
    ADD COLUMN return_reason text CHECK (length(return_reason) BETWEEN 1 AND 500),
    ADD CONSTRAINT payment_run_items_returned CHECK (returned_at IS NULL OR NOT active),
    ADD CONSTRAINT payment_run_items_return_reason CHECK (return_reason IS NULL OR returned_at IS NOT NULL);
