package gateway

// MCP tools. A tool is a description of one route of Routes for an agent, and
// a tool call takes the route's pipeline like the REST call does: the same
// scope check, service, error rendering, audit record (surface "mcp") and
// metrics. Arguments named like the route's path parameters fill the path;
// the others form the query string of a GET, which takes only what the
// schema declares, and the JSON body of any other method.

type tool struct {
	Name        string
	Description string
	Route       string // "METHOD /pattern" of a route in Routes
	Schema      map[string]any
}

func obj(required []string, props map[string]any) map[string]any {
	s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

func str(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }
func integer(desc string) map[string]any {
	return map[string]any{"type": "integer", "description": desc}
}
func number(desc string) map[string]any { return map[string]any{"type": "number", "description": desc} }
func boolean(desc string) map[string]any {
	return map[string]any{"type": "boolean", "description": desc}
}

var idemArg = str("optional Idempotency-Key: a retry with the same key and arguments returns the first result instead of acting twice")

var bookingLine = obj([]string{"account_debit", "account_credit", "amount"}, map[string]any{
	"account_debit":      str("SKR04 account debited, e.g. 6815"),
	"account_credit":     str("SKR04 account credited, e.g. 1800"),
	"amount":             number("EUR, positive, at most 2 decimals; the GROSS amount when tax_code is an input or output VAT code"),
	"tax_code":           str("optional tax code, e.g. VSt19 (input VAT 19 %) or USt19 (output VAT 19 %); see list_tax_codes"),
	"description":        str("optional line text; defaults to the booking description"),
	"external_reference": str("optional document number (Belegnummer)"),
	"fx_currency":        str("optional ISO currency of a foreign-currency amount"),
	"fx_amount":          number("optional foreign-currency amount"),
})

func debtorAddress(required []string) map[string]any {
	return obj(required, map[string]any{
		"street":  str("street and house number"),
		"zip":     str("postal code"),
		"city":    str("city"),
		"country": str("ISO 3166-1 alpha-2 code, default DE"),
	})
}

var paymentTerms = obj(nil, map[string]any{
	"days":               integer("payment due this many days after the invoice date, 0 to 365, default 14"),
	"cash_discount_rate": number("Skonto in percent, 0 to 100 with at most 2 decimals, default 0"),
	"cash_discount_days": integer("days within which the Skonto applies, 0 to 365; with a rate fewer than days"),
})

// vendorAddress is a vendor's optional address; every part is optional.
var vendorAddress = obj(nil, map[string]any{
	"street":  str("street and house number; empty to remove"),
	"zip":     str("postal code; empty to remove"),
	"city":    str("city; empty to remove"),
	"country": str("ISO 3166-1 alpha-2 code, e.g. DE; empty to remove"),
})

var tools = []tool{
	{"whoami", "Who the credential belongs to: tenant, key or user, scopes.", "GET /v1/auth/me", obj(nil, map[string]any{})},
	{"search_accounts", "Find SKR04 accounts by number prefix or name part (e.g. 'bank', '68').", "GET /v1/accounts/search",
		obj([]string{"q"}, map[string]any{"q": str("number prefix or part of the name"), "type": str("asset, liability, equity, revenue or expense"), "limit": integer("1 to 100")})},
	{"list_tax_codes", "The tenant's tax codes with rates, VAT accounts and DATEV BU keys.", "GET /v1/tax-codes",
		obj(nil, map[string]any{"include_inactive": boolean("true to include deactivated codes")})},
	{"post_booking", "Post a double-entry booking (GoBD: append-only; correct mistakes with reverse_intent). A line with an input/output VAT code is gross and is split into net and tax: 119.00 with VSt19 on 6815/1800 posts 100.00 to 6815 and 19.00 to 1406.",
		"POST /v1/bookings",
		obj([]string{"booking_date", "description", "lines"}, map[string]any{
			"booking_date":         str("YYYY-MM-DD"),
			"description":          str("booking text (Buchungstext)"),
			"lines":                map[string]any{"type": "array", "minItems": 1, "maxItems": 500, "items": bookingLine},
			"skip_duplicate_check": boolean("post even if an identical booking (date, text, accounts, amounts) exists"),
			"period":               str("optional YYYY-13 to post into the year's adjustment period"),
			"idempotency_key":      idemArg,
		})},
	{"list_journal", "List journal entries in journal-number order with filters.", "GET /v1/journal",
		obj(nil, map[string]any{"account": str("account number"), "startDate": str("YYYY-MM-DD"), "endDate": str("YYYY-MM-DD"),
			"search": str("text in description, account numbers or references"), "externalReference": str("exact document number"),
			"limit": integer("1 to 1000, default 200"), "offset": integer("default 0")})},
	{"get_intent", "One booking (intent) with its journal entries, totals and links to reversals.", "GET /v1/journal/{intent_id}",
		obj([]string{"intent_id"}, map[string]any{"intent_id": str("UUID of the intent")})},
	{"reverse_intent", "Reverse a booking with a mirrored booking linked to it (Storno). Reversing twice or reversing a reversal is refused.", "POST /v1/journal/reverse",
		obj([]string{"intent_id"}, map[string]any{"intent_id": str("UUID of the intent to reverse"), "reason": str("why"),
			"booking_date": str("optional YYYY-MM-DD in an open period; defaults to the original date"), "idempotency_key": idemArg})},
	{"verify_journal", "Check the journal's SHA-256 hash chain from the newest signed checkpoint (or all of it) and report the first broken entry, if any.", "GET /v1/journal/verify",
		obj(nil, map[string]any{"full": boolean("true to recompute the whole chain from the first event")})},
	{"account_entries", "Entries and balance of one account in a date range.", "GET /v1/accounts/{number}/entries",
		obj([]string{"number"}, map[string]any{"number": str("account number"), "startDate": str("YYYY-MM-DD"), "endDate": str("YYYY-MM-DD"), "limit": integer("1 to 1000")})},
	{"list_review_queue", "Booking proposals waiting for review.", "GET /v1/review-queue",
		obj(nil, map[string]any{"status": str("pending (default), confirmed, overridden or all"), "limit": integer("1 to 200"), "offset": integer("default 0")})},
	{"adjust_review_item", "Change a proposal with a plain instruction, e.g. 'Konto 6805 statt 6815', '7 % statt 19 %', 'Datum 2025-03-31', 'aufteilen 60/40 auf 6805 und 6815'.", "POST /v1/review-queue/{id}/adjust",
		obj([]string{"id", "instruction"}, map[string]any{"id": str("review item id"), "instruction": str("the change in plain words"), "idempotency_key": idemArg})},
	{"confirm_review_item", "Post a reviewed proposal as it stands.", "POST /v1/review-queue/{id}/confirm",
		obj([]string{"id"}, map[string]any{"id": str("review item id"), "skip_duplicate_check": boolean("post even if a duplicate is suspected"), "idempotency_key": idemArg})},
	{"list_bank_accounts", "The tenant's bank accounts with IBAN, BIC, currency and the SKR04 asset account each is linked to.", "GET /v1/bank-accounts", obj(nil, map[string]any{})},
	{"get_bank_account", "One bank account with IBAN, BIC, currency and its linked SKR04 asset account.", "GET /v1/bank-accounts/{id}",
		obj([]string{"id"}, map[string]any{"id": str("bank account id (UUID)")})},
	{"create_bank_account", "Add a bank account and link it to an SKR04 asset account of the chart (e.g. 1800 Bank). The IBAN is checked (country length, check digits) and stored without spaces; each IBAN and each ledger account can have one bank account only.", "POST /v1/bank-accounts",
		obj([]string{"name", "iban", "account_number"}, map[string]any{
			"name":            str("display name, e.g. Girokonto Sparkasse"),
			"iban":            str("IBAN, spaces allowed, e.g. DE89 3704 0044 0532 0130 00"),
			"bic":             str("optional BIC of 8 or 11 characters, e.g. COBADEFFXXX"),
			"account_number":  str("SKR04 asset account to link, 1 to 8 digits, e.g. 1800; not linked to another bank account"),
			"currency":        str("optional ISO 4217 code, default EUR"),
			"idempotency_key": idemArg,
		})},
	{"list_bank_transactions", "Bank transactions, newest booking first: date, signed amount (positive money in, negative out), counterparty, reference and status (open, reconciled or evidenced).", "GET /v1/bank-transactions",
		obj(nil, map[string]any{
			"bank_account_id": str("optional bank account id (UUID); see list_bank_accounts"),
			"from":            str("optional first booking date, YYYY-MM-DD"),
			"to":              str("optional last booking date, YYYY-MM-DD"),
			"status":          str("optional: open, reconciled or evidenced"),
			"search":          str("optional text found in the counterparty name or IBAN, the reference or the bank reference"),
			"limit":           integer("1 to 500, default 100"),
			"offset":          integer("default 0"),
		})},
	{"import_bank_transactions", "Import up to 1000 bank transactions into a bank account. Rows already imported (same bank reference, or same date, amount, counterparty IBAN and reference) are skipped; rows breaking a rule are reported with their index and field while the others import.", "POST /v1/bank-transactions",
		obj([]string{"bank_account_id", "transactions"}, map[string]any{
			"bank_account_id": str("bank account id (UUID); see list_bank_accounts"),
			"transactions": map[string]any{"type": "array", "minItems": 1, "maxItems": 1000, "description": "the transactions, 1 to 1000",
				"items": obj([]string{"tx_date", "amount"}, map[string]any{
					"tx_date":           str("booking date YYYY-MM-DD"),
					"amount":            number("signed amount, at most 2 decimals: positive is money in, negative money out"),
					"currency":          str("optional ISO 4217 code; the bank account's currency (default EUR)"),
					"counterparty_name": str("optional name of the counterparty"),
					"counterparty_iban": str("optional IBAN of the counterparty"),
					"reference":         str("optional payment reference (Verwendungszweck)"),
					"bank_reference":    str("optional reference the bank gives the transaction"),
					"tx_type":           str("optional transaction type, e.g. SEPA-UEBERWEISUNG"),
					"value_date":        str("optional value date YYYY-MM-DD"),
				})},
			"idempotency_key": idemArg,
		})},
	{"reconcile_bank_transaction", "Reconcile a bank transaction against a ledger intent: a booking already on the bank's ledger account (candidate_kind bank_booking: linked, nothing posted) or an open receivable or payable (the clearing booking bank account <-> open-item account is posted for the transaction's amount). Money in settles receivables, money out payables, at most the amount still open.", "POST /v1/bank-transactions/{id}/reconcile",
		obj([]string{"id", "intent_id"}, map[string]any{
			"id":                str("bank transaction id (UUID); see list_bank_transactions"),
			"intent_id":         str("the ledger intent to reconcile against (UUID)"),
			"candidate_kind":    str("optional: bank_booking, open_receivable or open_liability"),
			"open_item_account": str("optional account of the open item, e.g. 1200; needed when the intent left open items on several accounts"),
			"idempotency_key":   idemArg,
		})},
	{"unmatch_bank_transaction", "Undo a bank transaction's reconciliation: a clearing booking is reversed in the ledger, the link or allocation goes and the transaction is open again. For a transaction of a match group the whole group is undone: all its transactions are open again.", "POST /v1/bank-transactions/{id}/unmatch",
		obj([]string{"id"}, map[string]any{
			"id":              str("bank transaction id (UUID)"),
			"idempotency_key": idemArg,
		})},
	{"create_bank_match_group", "Reconcile several bank transactions of one bank account (all money in, or all money out) against several open receivables or payables with ONE clearing booking: one customer transfer paying two invoices, two part payments of one invoice, a payment less bank fees, a payment less cash discount (Skonto), a foreign-currency invoice paid in EUR. allocations give each open item its share of the bank money (their sum must equal the transactions' total); settled_document_amount says how much of the item is settled (required for a foreign-currency item, in its currency; for an EUR item when more is settled than paid, e.g. 119.00 settled by 116.62). adjustments balance the rest: fees (6855 debit), write-offs, cash discount granted (4730 debit) or received (5730 credit); a cash discount on a taxed invoice is split into net and VAT correction automatically, FX gains and losses go to 4840/6880 automatically. The booking must balance to the cent, else GROUP_NOT_BALANCED names the difference. Unmatching any transaction of the group undoes the whole group.", "POST /v1/bank-match-groups",
		obj([]string{"bank_transaction_ids", "allocations"}, map[string]any{
			"bank_transaction_ids": map[string]any{"type": "array", "minItems": 1, "maxItems": 100, "items": str("bank transaction id (UUID)"),
				"description": "the open transactions paid together, 1 to 100, one bank account, one direction"},
			"allocations": map[string]any{"type": "array", "minItems": 1, "maxItems": 100, "description": "the open items settled, 1 to 100; see suggest_bank_matches",
				"items": obj([]string{"intent_id", "candidate_kind", "open_item_account", "allocated_bank_amount"}, map[string]any{
					"intent_id":               str("the ledger intent of the open item (UUID)"),
					"candidate_kind":          str("open_receivable (money in) or open_liability (money out)"),
					"open_item_account":       str("the open item's account, e.g. 1200 or 3300"),
					"allocated_bank_amount":   number("EUR of the bank money given to this item, at most 2 decimals"),
					"settled_document_amount": number("optional amount of the item settled, in its document currency; required for a foreign-currency item"),
				})},
			"adjustments": map[string]any{"type": "array", "maxItems": 50, "description": "optional extra lines, 0 to 50",
				"items": obj([]string{"account_number", "posting_side", "amount"}, map[string]any{
					"account_number": str("account of the chart, e.g. 6855 bank fees, 4730 cash discount granted, 5730 cash discount received"),
					"posting_side":   str("debit or credit"),
					"amount":         number("EUR, positive, at most 2 decimals; a cash discount's gross amount"),
					"description":    str("optional text of the line"),
				})},
			"idempotency_key": idemArg,
		})},
	{"bank_reconciliation_status", "Reconciliation status of one bank account for a date range: how many transactions are open, reconciled or evidenced with their sums, the last statement's closing balance, statements whose balances do not add up (both figures), the bank balance at the end of the range against the linked SKR04 account's ledger balance and the difference, and the newest open transactions.", "GET /v1/bank-accounts/{id}/reconciliation",
		obj([]string{"id"}, map[string]any{
			"id":    str("bank account id (UUID); see list_bank_accounts"),
			"from":  str("optional first booking date, YYYY-MM-DD"),
			"to":    str("optional last booking date, YYYY-MM-DD; default today"),
			"limit": integer("1 to 500, default 50: the most open transactions and failed statements listed"),
		})},
	{"suggest_bank_matches", "Matching suggestions for the open transactions of a bank account, best first: each names a journal intent (an open receivable or payable with its account, or a booking already on the bank's ledger account) with a score from 0 to 1 and the reasons (amount, invoice number in the payment reference, counterparty, date). At most 5 per transaction.", "GET /v1/bank-transactions/suggestions",
		obj([]string{"bank_account_id"}, map[string]any{
			"bank_account_id": str("bank account id (UUID); see list_bank_accounts"),
			"period":          str("optional month YYYY-MM: only transactions booked in it"),
			"limit":           integer("1 to 1000, default 100: the most suggestions in the answer"),
		})},
	{"get_bank_import", "One import of bank transactions (JSON or statement file): its state, rows done, imported and skipped counts and refused rows; batch_id of an import result is its id.", "GET /v1/bank-imports/{id}",
		obj([]string{"id"}, map[string]any{"id": str("import id (UUID), the batch_id of an import result")})},
	{"list_debtors", "The tenant's debtors (customers it invoices), by name: customer number, address, VAT ID, e-mail, payment terms (days, Skonto rate and days), Leitweg-ID for XRechnung, receivable account, active or not.", "GET /v1/debtors",
		obj(nil, map[string]any{
			"search":    str("optional text found in the name, customer number or VAT ID, case-blind"),
			"is_active": boolean("optional: true for active debtors only, false for deactivated ones"),
			"limit":     integer("1 to 500, default 100"),
			"offset":    integer("default 0"),
		})},
	{"get_debtor", "One debtor with address, VAT ID, payment terms, Leitweg-ID and receivable account.", "GET /v1/debtors/{id}",
		obj([]string{"id"}, map[string]any{"id": str("debtor id (UUID); see list_debtors")})},
	{"create_debtor", "Add a debtor (customer). Street, zip and city are required, the country defaults to DE. Without customer_number the next free number K-10001, K-10002, … is assigned. The VAT ID is checked against its EU country's format, a Leitweg-ID (buyer reference of a public authority for XRechnung) against its check digits, a receivable_account (default 1200) against the chart.", "POST /v1/debtors",
		obj([]string{"name", "address"}, map[string]any{
			"customer_number":    str("optional, 1 to 20 letters, digits or - _ / .; unique in the tenant"),
			"name":               str("name of the company or person, e.g. Muster GmbH"),
			"address":            debtorAddress([]string{"street", "zip", "city"}),
			"vat_id":             str("optional EU VAT ID (USt-IdNr.) with its country prefix, e.g. DE123456789, ATU12345678"),
			"email":              str("optional e-mail address for invoices"),
			"payment_terms":      paymentTerms,
			"leitweg_id":         str("optional Leitweg-ID of a public authority, e.g. 04011000-1234512345-06"),
			"receivable_account": str("optional SKR04 asset account receivables post to, default 1200"),
			"idempotency_key":    idemArg,
		})},
	{"update_debtor", "Change a debtor: give only the fields to change (address and payment_terms field by field). An empty vat_id, email or leitweg_id removes it; is_active false deactivates the debtor (debtors are never deleted).", "PATCH /v1/debtors/{id}",
		obj([]string{"id"}, map[string]any{
			"id":                 str("debtor id (UUID); see list_debtors"),
			"customer_number":    str("1 to 20 letters, digits or - _ / .; unique in the tenant"),
			"name":               str("name of the company or person"),
			"address":            debtorAddress(nil),
			"vat_id":             str("EU VAT ID with its country prefix; empty to remove"),
			"email":              str("e-mail address for invoices; empty to remove"),
			"payment_terms":      paymentTerms,
			"leitweg_id":         str("Leitweg-ID; empty to remove"),
			"receivable_account": str("SKR04 asset account receivables post to"),
			"is_active":          boolean("false to deactivate, true to activate again"),
			"idempotency_key":    idemArg,
		})},
	{"list_vendors", "The tenant's vendors (suppliers whose invoices it receives, Kreditoren), by name: tax number, VAT ID, IBAN and BIC, address, default expense account, notes, active or not, and open_amount (what is still open of their posted incoming invoices).", "GET /v1/vendors",
		obj(nil, map[string]any{
			"search":    str("optional text found in the name or VAT ID, case-blind"),
			"is_active": boolean("optional: true for active vendors only, false for deactivated ones"),
			"limit":     integer("1 to 500, default 50"),
			"offset":    integer("default 0"),
		})},
	{"list_inbox", "The payables inbox: documents received by e-mail (the inbound-email webhook) or uploaded, newest first, of one status, each with the short result of its latest extraction (vendor name, gross total), the vendor match and the §14 UStG compliance check (null until extracted).", "GET /v1/inbox",
		obj(nil, map[string]any{
			"status": map[string]any{"type": "string", "enum": []string{"pending", "processing", "confirmed", "rejected"}, "description": "default pending"},
			"limit":  integer("1 to 200, default 50"),
			"offset": integer("default 0"),
		})},
	{"list_ingestion_log", "The payables ingestion log: one row per attachment received (inbound e-mail or upload), newest first, with its outcome (ingested, skipped_duplicate with the original inbox item, rejected_invalid with the reason, failed), sender, subject, file name, declared type, size and SHA-256.", "GET /v1/payables/ingestion-log",
		obj(nil, map[string]any{
			"outcome": map[string]any{"type": "string", "enum": []string{"ingested", "skipped_duplicate", "rejected_invalid", "failed"}, "description": "optional: only rows of this outcome"},
			"limit":   integer("1 to 200, default 100"),
			"offset":  integer("default 0"),
		})},
	{"get_vendor", "One vendor with tax number, VAT ID, bank details, address, default account, notes and open amount.", "GET /v1/vendors/{id}",
		obj([]string{"id"}, map[string]any{"id": str("vendor id (UUID); see list_vendors")})},
	{"create_vendor", "Add a vendor (supplier). Only the name is required. A name another vendor has (ignoring case, umlaut spelling, punctuation and legal form: Müller GmbH = MUELLER GMBH = Müller) is DUPLICATE_NAME, likewise DUPLICATE_TAX_ID and DUPLICATE_VAT_ID. The VAT ID is checked against its EU country's format, the IBAN by its check digits, default_account against the chart.", "POST /v1/vendors",
		obj([]string{"name"}, map[string]any{
			"name":            str("name of the company or person, at most 255 characters, e.g. Bürobedarf Nord GmbH"),
			"tax_id":          str("optional German tax number (Steuernummer), digits and /, e.g. 143/123/45678"),
			"vat_id":          str("optional EU VAT ID (USt-IdNr.) with its country prefix, e.g. DE123456789"),
			"iban":            str("optional IBAN the vendor is paid to (spaces allowed)"),
			"bic":             str("optional BIC, 8 or 11 characters"),
			"address":         vendorAddress,
			"default_account": str("optional SKR04 account its invoices are posted to, e.g. 5400 or 6815; must exist in the chart"),
			"notes":           str("optional notes, at most 2000 characters"),
			"idempotency_key": idemArg,
		})},
	{"upload_to_inbox", "Put one incoming invoice into the payables inbox, as an e-mail attachment would come: a PDF, JPG, PNG or XML e-invoice (CII or UBL) of at most 10 MiB, given as base64. It is stored as a document, an inbox item is made and its extraction (e-invoice data, text layer or OCR) queued; list_inbox and list_invoice_review_cases show the result. The same file again is 409 DUPLICATE_DOCUMENT, so a retry is safe; a type the content contradicts 400 MIME_MISMATCH.", "POST /v1/inbox",
		obj([]string{"file_base64", "filename"}, map[string]any{
			"file_base64":  map[string]any{"type": "string", "contentEncoding": "base64", "minLength": 4, "description": "the file's bytes, standard base64"},
			"filename":     map[string]any{"type": "string", "minLength": 1, "maxLength": 255, "description": "the file's name, e.g. rechnung-4711.pdf; its extension gives the type when content_type is not set"},
			"content_type": map[string]any{"type": "string", "enum": []string{"application/pdf", "image/jpeg", "image/png", "application/xml", "text/xml"}, "description": "optional: the file's type"}})},
	{"upload_document", "Store a receipt or invoice as a ledger document (GoBD archive) to attach to bookings: a PDF, JPG or PNG of at most 10 MiB, given as base64; deduplicated by its SHA-256, so the same file answers the document already stored. Answers the document id to pass as document_id.", "POST /v1/documents",
		obj([]string{"file_base64", "filename"}, map[string]any{
			"file_base64":     map[string]any{"type": "string", "contentEncoding": "base64", "minLength": 4, "description": "the file's bytes, standard base64"},
			"filename":        map[string]any{"type": "string", "minLength": 1, "maxLength": 255, "description": "the file's name, e.g. beleg.pdf; its extension gives the type when content_type is not set"},
			"content_type":    map[string]any{"type": "string", "enum": []string{"application/pdf", "image/jpeg", "image/png"}, "description": "optional: the file's type"},
			"idempotency_key": idemArg})},
	{"extract_document", "Read an uploaded document (see POST /v1/documents) as an incoming invoice and answer the OCR result: vendor name, VAT ID, IBAN and address, invoice number and dates, net, tax and gross totals with the tax breakdown, line items, payment terms and reference. E-invoices (ZUGFeRD/Factur-X, XRechnung) are read exactly from their data. The result is also stored on the document. NOT_FOUND: no such document; FILE_NOT_FOUND: its file is gone; INVALID_INPUT: the document is no readable invoice; OCR_FAILED: reading failed.", "POST /v1/ocr/extract",
		obj([]string{"document_id"}, map[string]any{"document_id": str("document id (UUID) as POST /v1/documents answered it")})},
	{"update_vendor", "Change a vendor: give only the fields to change (address part by part). An empty tax_id, vat_id, iban, bic, default_account or notes removes it; is_active false deactivates the vendor (vendors are never deleted).", "PATCH /v1/vendors/{id}",
		obj([]string{"id"}, map[string]any{
			"id":              str("vendor id (UUID); see list_vendors"),
			"name":            str("name of the company or person"),
			"tax_id":          str("German tax number; empty to remove"),
			"vat_id":          str("EU VAT ID with its country prefix; empty to remove"),
			"iban":            str("IBAN; empty to remove"),
			"bic":             str("BIC; empty to remove"),
			"address":         vendorAddress,
			"default_account": str("SKR04 account its invoices are posted to; empty to remove"),
			"notes":           str("notes; empty to remove"),
			"is_active":       boolean("false to deactivate, true to activate again"),
			"idempotency_key": idemArg,
		})},
	{"list_invoice_review_cases", "The invoice review queue (Eingangsrechnungen zur Prüfung): each case is an extracted incoming invoice awaiting a human decision, with its queue_state (approval: complete and §14-compliant, ready to approve; correction: fields missing, checks failed or no vendor; exception: a likely duplicate or not an invoice; approved; rejected; posting_failed: the ledger refused the posting), the normalised invoice (vendor, number, dates, lines with expense account and VAT rate, totals), vendor candidates, the issues to correct and posting errors.", "GET /v1/invoice-review-cases",
		obj(nil, map[string]any{
			"queue_state": str("optional: approval, correction, exception, approved, rejected or posting_failed"),
			"limit":       integer("1 to 200, default 50"),
			"offset":      integer("default 0"),
		})},
	{"get_invoice_review_case", "One invoice review case with its duplicate hints (same vendor and number: strong; same gross and date: a hint), vendor suggestions (a vendor to create when none matched) and the §14 UStG compliance check.", "GET /v1/invoice-review-cases/{id}",
		obj([]string{"id"}, map[string]any{"id": str("review case id (UUID); see list_invoice_review_cases")})},
	{"approve_invoice_review_case", "Approve a review case: creates the incoming invoice and posts it to the ledger (each line's account debited with input VAT VSt19/VSt7, or §13b self-assessment on reverse charge, against creditor account 3300). Refused for incomplete cases (400, correct them first) and approved or rejected ones (409). A ledger refusal (locked period, missing account) answers its error and leaves the case in posting_failed; approve again after fixing it.", "POST /v1/invoice-review-cases/{id}/approve",
		obj([]string{"id"}, map[string]any{"id": str("review case id (UUID)"), "idempotency_key": idemArg})},
	{"correct_invoice_review_case", "Correct a review case's invoice: give only the fields to change; lines replace all lines. The checks run again and put the case in approval, correction or exception.", "POST /v1/invoice-review-cases/{id}/correct",
		obj([]string{"id"}, map[string]any{
			"id":             str("review case id (UUID)"),
			"vendor_id":      str("the vendor (UUID); see list_vendors"),
			"invoice_number": str("the vendor's invoice number"),
			"invoice_date":   str("YYYY-MM-DD"),
			"due_date":       str("YYYY-MM-DD"),
			"currency":       str("ISO 4217 code; only EUR is booked"),
			"reverse_charge": boolean("true when the tenant owes the VAT (§13b UStG)"),
			"lines": map[string]any{"type": "array", "description": "all lines of the invoice", "items": obj([]string{"tax_rate", "net"}, map[string]any{
				"description": str("what was bought"),
				"account":     str("optional SKR04 expense or asset account; default the vendor's default account, else 6300"),
				"tax_rate":    number("19, 7 or 0"),
				"net":         number("net amount, at most 2 decimals"),
			})},
			"total_gross":     number("the gross the document states; the lines must add up to it"),
			"idempotency_key": idemArg,
		})},
	{"reject_invoice_review_case", "Reject a review case with a reason (spam, not ours, a duplicate): nothing is booked, its inbox item becomes rejected.", "POST /v1/invoice-review-cases/{id}/reject",
		obj([]string{"id", "reason"}, map[string]any{
			"id":              str("review case id (UUID)"),
			"reason":          str("why, 1 to 1000 characters"),
			"idempotency_key": idemArg,
		})},
	{"list_incoming_invoices", "The tenant's incoming invoices (Eingangsrechnungen), newest first: vendor, number, dates, gross, status (draft: not yet posted; open; partially_paid; paid; overdue: something remains past the due date) and the amount remaining.", "GET /v1/invoices",
		obj(nil, map[string]any{
			"vendor_id":  str("optional vendor id (UUID); see list_vendors"),
			"status":     str("optional: draft, open, partially_paid, paid or overdue"),
			"start_date": str("optional YYYY-MM-DD: invoice date from"),
			"end_date":   str("optional YYYY-MM-DD: invoice date up to"),
			"limit":      integer("1 to 500, default 100"),
			"offset":     integer("default 0"),
		})},
	{"get_incoming_invoice", "One incoming invoice with its lines, VAT breakdown, paid amount, booking intent and review case.", "GET /v1/invoices/{id}",
		obj([]string{"id"}, map[string]any{"id": str("invoice id (UUID); see list_incoming_invoices")})},
	{"payables_open_items", "Open payables (Offene Posten Kreditoren) by vendor: per vendor the total still open and the open invoices.", "GET /v1/invoices/open-items",
		obj(nil, map[string]any{})},
	{"list_payment_runs", "The tenant's payment runs (SEPA credit transfers of open incoming invoices), newest first: status (draft, approved, exported, completed, cancelled), execution date, bank account paid from, total amount, cash discount taken and number of invoices.", "GET /v1/payment-runs",
		obj(nil, map[string]any{
			"status": str("optional: draft, approved, exported, completed or cancelled"),
			"limit":  integer("1 to 500, default 100"),
			"offset": integer("default 0"),
		})},
	{"get_payment_run", "One payment run with its items: per invoice the vendor, IBAN and BIC paid to, amount transferred, cash discount (Skonto) taken, remittance text and end-to-end id.", "GET /v1/payment-runs/{id}",
		obj([]string{"id"}, map[string]any{"id": str("payment run id (UUID); see list_payment_runs")})},
	{"create_payment_run", "Prepare a payment run (status draft): one SEPA credit transfer per open posted incoming invoice from one of the tenant's bank accounts on the execution date. Each pays what is still open of the invoice less the cash discount (Skonto) still open at the execution date. Every vendor needs a valid IBAN (else VENDOR_IBAN_MISSING); an invoice already in a draft, approved or exported run is INVOICE_ALREADY_IN_ACTIVE_RUN; an invoice that is not open and posted is INVOICE_NOT_FOUND; an unknown bank account BANK_ACCOUNT_NOT_FOUND.", "POST /v1/payment-runs",
		obj([]string{"bank_account_id", "execution_date", "invoice_ids"}, map[string]any{
			"bank_account_id": str("bank account paid from (UUID); see list_bank_accounts"),
			"execution_date":  str("requested execution date YYYY-MM-DD, today or later"),
			"invoice_ids":     map[string]any{"type": "array", "items": str("incoming invoice id (UUID)"), "description": "the invoices to pay, 1 to 1000, each once"},
			"label":           str("optional label, at most 140 characters"),
			"idempotency_key": idemArg,
		})},
	{"approve_payment_run", "Release a draft payment run for export (draft -> approved). Needs kreditoren:review and someone other than who prepared it (four eyes): the same key or user releasing its own run is FORBIDDEN unless it holds the admin scope (the tenant's owner).", "POST /v1/payment-runs/{id}/approve",
		obj([]string{"id"}, map[string]any{"id": str("payment run id (UUID); see list_payment_runs"), "idempotency_key": idemArg})},
	{"export_payment_run", "Write the SEPA file (pain.001.001.09 XML) of an approved payment run for upload to the bank (approved -> exported). Exporting again answers the same file.", "POST /v1/payment-runs/{id}/export",
		obj([]string{"id"}, map[string]any{"id": str("payment run id (UUID); see list_payment_runs")})},
	{"complete_payment_run", "Record that the bank executed an exported payment run (exported -> completed): its invoices stay with the run, so no other run pays them again; they count as paid once the bank statement's transfers are reconciled.", "POST /v1/payment-runs/{id}/complete",
		obj([]string{"id"}, map[string]any{"id": str("payment run id (UUID); see list_payment_runs"), "idempotency_key": idemArg})},
	{"cancel_payment_run", "Cancel a draft, approved or exported payment run; its invoices may then go into another run. A file already given to the bank must be withdrawn there too.", "POST /v1/payment-runs/{id}/cancel",
		obj([]string{"id"}, map[string]any{"id": str("payment run id (UUID); see list_payment_runs"), "idempotency_key": idemArg})},
	{"return_payment_run_transfer", "Record that the bank sent back the transfer of one invoice of a completed payment run (a SEPA return: account closed, wrong IBAN). The run keeps the item, marked returned with the reason; the invoice may then go into another run (fix the vendor's IBAN first). Only completed runs (else INVALID_STATE_TRANSITION); an invoice not in the run is NOT_FOUND; a transfer already recorded as returned CONFLICT.", "POST /v1/payment-runs/{id}/returns",
		obj([]string{"id", "invoice_id"}, map[string]any{"id": str("payment run id (UUID); see list_payment_runs"), "invoice_id": str("the invoice whose transfer came back (UUID)"),
			"reason": str("optional: the bank's return reason, e.g. AC04 account closed (1 to 500 characters)"), "idempotency_key": idemArg})},
	{"list_outgoing_invoices", "The tenant's sales invoices and credit notes, newest first: customer, number, dates, gross, type and status (draft; open, partially_paid (something paid or credited), paid (nothing remains), overdue (nothing paid, past the due date); pending or void) with the amount still open.", "GET /v1/outgoing-invoices",
		obj(nil, map[string]any{
			"customer_id": str("optional debtor id (UUID); see list_debtors"),
			"status":      str("optional: draft, open, partially_paid, paid or overdue"),
			"type":        str("optional: invoice or credit_note"),
			"start_date":  str("optional YYYY-MM-DD: invoice date from"),
			"end_date":    str("optional YYYY-MM-DD: invoice date up to"),
			"limit":       integer("1 to 500, default 100"),
			"offset":      integer("default 0"),
		})},
	{"receivables_open_items", "Open receivables (Offene Posten Debitoren) by customer: per customer the open gross less payments, the credit notes netted against it, the net amount open and the open invoices.", "GET /v1/outgoing-invoices/open-items",
		obj(nil, map[string]any{})},
	{"create_sales_invoice", "Create a sales invoice (Ausgangsrechnung) for a debtor and issue it: the next gapless number (RE-2025-00001), the ZUGFeRD/XRechnung e-invoice and PDF, the PDF stored as a ledger document and the receivable posted (debtor's receivable account to revenue, VAT split off by the tax code). draft true only stores it (finalize_sales_invoice later). Each line names tax_code (USt19, USt7, IGL0, AUS0, STF0) or tax_rate 19/7/0 with tax_category S (default), Z, E, AE, K, G.", "POST /v1/sales-invoices",
		obj([]string{"debtor_id", "invoice_date", "line_items"}, map[string]any{
			"debtor_id":    str("debtor id (UUID); see list_debtors"),
			"invoice_date": str("YYYY-MM-DD"),
			"due_date":     str("optional YYYY-MM-DD; default invoice date plus the debtor's payment days"),
			"line_items": map[string]any{"type": "array", "description": "1 to 500 lines", "items": obj([]string{"description", "quantity", "unit_price"}, map[string]any{
				"description":  str("what was supplied, 1 to 1000 characters"),
				"quantity":     number("positive, at most 4 decimals"),
				"unit":         str("optional UN/ECE Rec. 20 unit code: C62 piece (default), HUR hour, DAY, KGM"),
				"unit_price":   number("net price per unit, at most 4 decimals"),
				"tax_code":     str("a sales tax code: USt19, USt7, IGL0 (intra-community), AUS0 (export), STF0 (exempt); or give tax_rate"),
				"tax_rate":     number("19, 7 or 0 (instead of tax_code)"),
				"tax_category": str("with tax_rate: S (default), Z, E, AE (reverse charge), K (intra-community), G (export)"),
				"discount":     number("optional line allowance amount"),
			})},
			"delivery_date":    str("optional YYYY-MM-DD time of supply; default the invoice date"),
			"service_period":   obj([]string{"start", "end"}, map[string]any{"start": str("YYYY-MM-DD"), "end": str("YYYY-MM-DD")}),
			"notes":            str("optional text printed on the invoice"),
			"buyer_reference":  str("optional buyer reference; default the debtor's Leitweg-ID"),
			"currency":         str("optional ISO 4217 code, default EUR"),
			"exchange_rate":    number("EUR per 1 unit of a foreign currency; required with one"),
			"exemption_reason": str("legal ground of tax-exempt (E) lines"),
			"draft":            boolean("true to store a draft without number or posting"),
			"idempotency_key":  idemArg,
		})},
	{"list_sales_invoices", "The tenant's sales invoices, newest first, with number, debtor, dates, totals, paid and remaining amounts and status (draft, pending, open, partially_paid, paid, overdue, void).", "GET /v1/sales-invoices",
		obj(nil, map[string]any{
			"debtor_id": str("optional debtor id (UUID)"),
			"status":    str("optional: draft, pending, open, partially_paid, paid, overdue or void"),
			"from":      str("optional first invoice date YYYY-MM-DD"),
			"to":        str("optional last invoice date YYYY-MM-DD"),
			"limit":     integer("1 to 500, default 100"),
			"offset":    integer("default 0"),
		})},
	{"get_sales_invoice", "One sales invoice with its lines, VAT breakdown, totals, payments and status.", "GET /v1/sales-invoices/{id}",
		obj([]string{"id"}, map[string]any{"id": str("invoice id (UUID); see list_sales_invoices")})},
	{"finalize_sales_invoice", "Issue a draft sales invoice (number, e-invoice, PDF, posting), or resume one left pending by an outage.", "POST /v1/sales-invoices/{id}/finalize",
		obj([]string{"id"}, map[string]any{"id": str("invoice id (UUID)"), "idempotency_key": idemArg})},
	{"cancel_sales_invoice", "Cancel (Storno) an issued sales invoice with nothing paid or credited: issues a credit note (type 381) over its full gross with its own number, naming the invoice, with XML and PDF, and reverses the invoice's receivable in the ledger. Drafts are not cancelled (just not finalised); a paid invoice cannot be cancelled (refunds are not supported).", "POST /v1/sales-invoices/{id}/cancel",
		obj([]string{"id"}, map[string]any{"id": str("invoice id (UUID); see list_outgoing_invoices"), "idempotency_key": idemArg})},
	{"create_credit_note", "Issue a partial credit note (Gutschrift, type 381) for an issued sales invoice: whole lines, part of a line's quantity, or a net amount off a line (price reduction), with a reason. It gets its own number, XML and PDF, is posted as its own booking (revenue and VAT debited, receivable credited) and lowers what is open of the invoice; it may not credit more than is still open. To cancel a whole unpaid invoice use cancel_sales_invoice.", "POST /v1/sales-invoices/{id}/credit-notes",
		obj([]string{"id", "line_items", "reason"}, map[string]any{
			"id": str("invoice id (UUID); see list_outgoing_invoices"),
			"line_items": map[string]any{"type": "array", "description": "what to credit, per line of the invoice", "items": obj([]string{"line"}, map[string]any{
				"line":     integer("the invoice's line, from 1"),
				"quantity": number("optional: credit this quantity of the line at its unit price"),
				"amount":   number("optional: credit this net amount off the line (price reduction)"),
			})},
			"reason":          str("why, printed on the credit note, e.g. Rücksendung von 2 Stück"),
			"idempotency_key": idemArg,
		})},
	{"get_receivables_settings", "The invoicing settings: invoice number prefix, IBAN/BIC payments go to, seller contact name, e-mail and phone.", "GET /v1/receivables/settings",
		obj(nil, map[string]any{})},
	{"put_receivables_settings", "Change the invoicing settings; give only the fields to change, an empty text removes it. XRechnung invoices need the IBAN and the contact.", "PUT /v1/receivables/settings",
		obj(nil, map[string]any{
			"invoice_number_prefix": str("up to 10 letters, digits or - _ / ., e.g. RE-"),
			"payment_iban":          str("IBAN payments go to"),
			"payment_bic":           str("BIC of that account"),
			"contact_name":          str("seller contact person"),
			"contact_email":         str("seller contact e-mail"),
			"contact_phone":         str("seller contact phone"),
			"idempotency_key":       idemArg,
		})},
	{"list_periods", "Accounting periods with their lock status and booking counts.", "GET /v1/periods", obj(nil, map[string]any{})},
	{"soft_lock_period", "Soft-lock a month (YYYY-MM): no postings until reopened.", "POST /v1/periods/{period}/soft-lock",
		obj([]string{"period"}, map[string]any{"period": str("YYYY-MM")})},
	{"get_report", "A report: susa (Summen- und Saldenliste), trial_balance, guv (profit and loss, HGB §275) or bilanz (balance sheet, HGB §266).", "GET /v1/reports",
		obj([]string{"type"}, map[string]any{"type": str("susa, trial_balance, guv or bilanz"), "period": str("YYYY-MM (month and year to date), YYYY (fiscal year) or omitted (current fiscal year)")})},
}
