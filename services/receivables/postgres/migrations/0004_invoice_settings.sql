-- Invoicing settings (issue 12): the account payments go to (payment
-- means 58, SEPA credit transfer, on every invoice; XRechnung requires
-- it) and the seller contact XRechnung requires (BT-41 to BT-43). Texts
-- are NULL when not set.
ALTER TABLE settings
    ADD COLUMN payment_iban  text CHECK (payment_iban ~ '^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$'),
    ADD COLUMN payment_bic   text CHECK (payment_bic ~ '^[A-Z]{6}[A-Z0-9]{2}([A-Z0-9]{3})?$'),
    ADD COLUMN contact_name  text CHECK (length(contact_name) BETWEEN 1 AND 200),
    ADD COLUMN contact_email text CHECK (length(contact_email) BETWEEN 3 AND 254),
    ADD COLUMN contact_phone text CHECK (length(contact_phone) BETWEEN 3 AND 40);

-- The legal ground of a tax-exempt (category E) invoice's lines (BT-120),
-- given with the request and printed on the invoice.
ALTER TABLE sales_invoices ADD COLUMN exemption_reason text CHECK (length(exemption_reason) BETWEEN 1 AND 1000);
