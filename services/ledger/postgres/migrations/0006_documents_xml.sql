-- XML e-invoices (CII, UBL) as documents: the payables inbox stores the
-- e-invoices it receives. Only services may upload them (the service
-- checks the root element); POST /v1/documents stays PDF, JPG and PNG.
ALTER TABLE documents DROP CONSTRAINT documents_mime_type_check;
ALTER TABLE documents ADD CONSTRAINT documents_mime_type_check
    CHECK (mime_type IN ('application/pdf', 'image/jpeg', 'image/png', 'application/xml'));
