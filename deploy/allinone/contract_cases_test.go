package allinone_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"testing"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
)

// ---- the happy path of every operation ----
//
// happyCases is keyed by operationId: the contract test fails for an
// operation of the document that has no entry here. Each case builds a
// valid request from a tenant's fixtures; built from another tenant's
// fixtures, its path ids are that tenant's objects (foreign ids for the
// battery).

type happyReq struct {
	token     string
	params    map[string]string
	query     url.Values
	body      any  // JSON body; nil for none
	example   bool // send the document's request example as the body
	multipart []part
	headers   []string
}

type happyCase struct {
	name  string
	build func(f *fixture) happyReq
	// battery is the request the battery mutates, when it must differ from
	// the happy one: a target still pending, a body that changes something
	// (so a wrongly accepted mutation shows as a state change instead of
	// hiding behind DUPLICATE_BOOKING or NO_CHANGES).
	battery func(f *fixture) happyReq
	// noForeign: the path ids are not objects of a tenant (operator routes,
	// names the caller chooses).
	noForeign bool
	// mcp adjusts the arguments of the operation's MCP tool when the REST
	// request cannot simply be repeated (a second posting, a new target).
	mcp func(f *fixture, args map[string]any)
	// last: destructive, run after every other happy path.
	last bool
}

// fixture is what one tenant holds before the happy paths run.
type fixture struct {
	p                                   *platform
	label                               string
	tenant, admin                       string
	email, password                     string
	session, logoutSession              string
	batterySession                      string // a live session for logout's battery
	userB, userDel                      string
	keyID, keyDel                       string
	inviteToken                         string
	intent, intentReversed              string
	intentToReverse, intentSpare        string
	intentMCP, intentDoc                string
	doc                                 string
	rvMain, rvConfirm, rvOverride       string
	rvDelete, rvDeleteConfirmed         string
	rvConfirmed, rvOverridden           string
	rvBattery, rvMCP                    string
	task, job, grantClient, grantRevoke string
	bankReader, journalReader           string // keys lacking most scopes
	tenantDel                           string // operator: a tenant to deactivate
	bankAccount, bankTx                 string
	debtor                              string
	vendor                              string
	caseApprove, caseApproveMCP         string // review cases (payables_review_e2e_test.go)
	caseReject, caseRejectMCP           string
	caseCorrect, incomingInvoice        string
	webhookRoller                       string        // admin of a tenant of its own, whose webhook secret the secret route rolls
	invoiceDoc                          string        // a ZUGFeRD invoice as a document, for extraction
	salesInvoice, salesDraft            string        // an issued sales invoice and a draft
	cancelInvoice, cancelInvoiceMCP     string        // issued invoices to cancel (receivables_openitems_e2e_test.go)
	creditInvoice                       string        // an issued invoice to credit
	rec                                 *reconFixture // reconciliation and evidence (contract_reconcile_test.go)
	runs                                *runsFixture  // payment runs (contract_payruns_test.go)
	operatorKey                         string
}

const fixturePassword = "correct horse battery staple"

// webhookSecret is a fixture's inbound-email webhook secret, stored by its
// hash as the secret route stores one.
func webhookSecret(label string) string { return "whsec_contract_" + label }

func pdfOf(tag string) []byte {
	return append(append([]byte{}, tinyPDF...), []byte("% "+tag+"\n")...)
}

// newFixture creates a tenant and everything its happy paths refer to.
func newFixture(t *testing.T, p *platform, label string) *fixture {
	t.Helper()
	f := &fixture{p: p, label: label, operatorKey: p.key, password: fixturePassword}
	f.admin, f.tenant = p.newTenant("Contract " + label + " GmbH")
	a := f.admin
	p.must(200, "PATCH", "/v1/tenant", a, map[string]any{"datev_consultant_number": "1234567", "datev_client_number": "42"})

	// Users: one with a password and sessions, two to change and remove, an open invitation.
	f.email = "login-" + label + "@example.com"
	inv := p.must(201, "POST", "/v1/users/invite", a, map[string]any{"email": f.email, "role": "accountant"})
	p.must(200, "POST", "/v1/auth/setup-password", "", map[string]any{"token": inv.str("invite_token"), "password": f.password})
	f.session = p.must(200, "POST", "/v1/auth/login", "", map[string]any{"email": f.email, "password": f.password}).str("token")
	f.logoutSession = p.must(200, "POST", "/v1/auth/login", "", map[string]any{"email": f.email, "password": f.password}).str("token")
	f.batterySession = p.must(200, "POST", "/v1/auth/login", "", map[string]any{"email": f.email, "password": f.password}).str("token")
	f.userB = p.must(201, "POST", "/v1/users/invite", a, map[string]any{"email": "b-" + label + "@example.com", "role": "viewer"}).str("user_id")
	f.userDel = p.must(201, "POST", "/v1/users/invite", a, map[string]any{"email": "del-" + label + "@example.com", "role": "viewer"}).str("user_id")
	f.inviteToken = p.must(201, "POST", "/v1/users/invite", a, map[string]any{"email": "setup-" + label + "@example.com", "role": "viewer"}).str("invite_token")
	_, f.keyID = p.newKey(a, "journal:read")
	_, f.keyDel = p.newKey(a, "journal:read")
	f.bankReader, _ = p.newKey(a, "bank:read")
	f.journalReader, _ = p.newKey(a, "journal:read")

	// The journal: plain, reversed, with a document; spares for the reversal routes.
	book := func(date, desc string, lines ...map[string]any) string {
		return p.book(a, bookingBody(date, desc, lines...)).IntentID
	}
	f.intent = book("2025-03-10", "Fixture Büro", bline("6815", "1800", "119.00", "tax_code", "VSt19", "external_reference", "RE-1",
		"description", "Papier", "fx_currency", "USD", "fx_amount", json.Number("130.25"), "custom_metadata", map[string]any{"source": "fixture", "n": 1}))
	book("2025-02-03", "Fixture Einlage", bline("1800", "2900", "5000.00"))
	book("2025-03-11", "Fixture Erlös", bline("1800", "4400", "238.00", "tax_code", "USt19"))
	f.intentReversed = book("2025-03-12", "Fixture storniert", bline("6310", "1800", "500.00"))
	p.must(201, "POST", "/v1/journal/reverse", a, map[string]any{"intent_id": f.intentReversed, "reason": "Fixture"})
	f.intentToReverse = book("2025-03-13", "Fixture zu stornieren", bline("6310", "1800", "10.00"))
	f.intentSpare = book("2025-03-13", "Fixture Ersatz", bline("6310", "1800", "11.00"))
	f.intentMCP = book("2025-03-13", "Fixture MCP", bline("6310", "1800", "12.00"))
	f.doc = p.upload(201, "/v1/documents", a, fileField("fixture.pdf", "application/pdf", pdfOf("doc "+label))).str("id")
	f.intentDoc = p.upload(201, "/v1/bookings/with-document", a, fileField("rechnung.pdf", "application/pdf", pdfOf("booked "+label)),
		textField("booking_date", "2025-03-15"), textField("description", "Fixture mit Beleg"), textField("intent_category", "office"),
		textField("lines", `[{"account_debit":"6815","account_credit":"1800","amount":59.50,"tax_code":"VSt19"}]`)).str("intent_id")

	// The review queue: items for each route and each state.
	draft := func(desc string) json.RawMessage {
		return json.RawMessage(fmt.Sprintf(`{"booking_date":"2025-03-20","description":%q,"lines":[{"account_debit":"6815","account_credit":"1800","amount":119.00,"tax_code":"VSt19"}],"confidence":0.8,"reasons":["vendor match"]}`, desc))
	}
	review := func(src, desc string, doc bool) string {
		in := ledgerv1.ReviewItemInput{TenantID: f.tenant, SourceType: "bank_transaction", SourceID: src, Suggestion: draft(desc), CreatedBy: "service:bank"}
		if doc {
			in.SourceType, in.DocumentID = "document", f.doc
		}
		return p.createReview(in).ID
	}
	f.rvMain = review("main", "Fixture Haupt", true)
	f.rvConfirm = review("confirm", "Fixture bestätigen", false)
	f.rvOverride = review("override", "Fixture ersetzen", false)
	f.rvDelete = review("delete", "Fixture löschen", false)
	f.rvDeleteConfirmed = review("delete-confirmed", "Fixture bestätigt löschen", false)
	f.rvConfirmed = review("confirmed", "Fixture bestätigt", true)
	f.rvOverridden = review("overridden", "Fixture ersetzt", false)
	f.rvBattery = review("battery", "Fixture Batterie", false)
	f.rvMCP = review("mcp", "Fixture MCP", false)
	p.must(201, "POST", "/v1/review-queue/"+f.rvDeleteConfirmed+"/confirm", a, nil)
	p.must(201, "POST", "/v1/review-queue/"+f.rvConfirmed+"/confirm", a, nil)
	p.must(201, "POST", "/v1/review-queue/"+f.rvOverridden+"/override", a, map[string]any{
		"booking_draft": bookingBody("2025-03-21", "Fixture statt dessen", bline("6805", "1800", "119.00", "tax_code", "VSt19"))})

	// Periods and the closing checklist.
	p.must(200, "POST", "/v1/periods/2024-07/soft-lock", a, nil)
	f.task = p.must(201, "POST", "/v1/closing/tasks", a, map[string]any{"period": "2025-02", "title": "Fixture Abgrenzung", "assignee": "Bea", "due_date": "2025-03-05"}).str("id")

	// An export job, done; a bank account; OAuth: a client and two apps' grants.
	f.job = p.must(202, "POST", "/v1/reports/exports", a, map[string]any{"type": "datev", "from": "2025-01-01", "to": "2025-12-31"}).str("id")
	p.waitExportJob(a, f.job)
	ctx := context.Background()
	f.bankAccount = p.must(201, "POST", "/v1/bank-accounts", a, map[string]any{"name": "Girokonto", "iban": "DE89370400440532013000",
		"bic": "COBADEFFXXX", "account_number": "1800"}).str("id")
	p.must(201, "POST", "/v1/bank-transactions", a, bankImport(f, "Fixture Miete"))
	f.bankTx = p.must(200, "GET", "/v1/bank-transactions", a, nil).list("transactions")[0]["id"].(string)
	// An open receivable the imported 595.00 pays, so suggestions have one to answer.
	book("2025-03-01", "Fixture Ausgangsrechnung AR-7781", bline("1200", "4400", "595.00", "tax_code", "USt19", "external_reference", "AR-7781"))
	f.rec = newReconFixture(t, p, f)
	f.debtor = p.must(201, "POST", "/v1/debtors", a, map[string]any{"name": "Fixture Kunde " + label,
		"address": map[string]any{"street": "Hauptstr. 1", "zip": "10115", "city": "Berlin"}, "vat_id": "DE123456789",
		"payment_terms": map[string]any{"days": 30, "cash_discount_rate": json.Number("2"), "cash_discount_days": 10}}).str("id")
	f.webhookRoller, _ = p.newTenant("Contract Webhook " + label + " GmbH")
	if _, err := p.owner.Exec(context.Background(), `INSERT INTO payables.webhook_secrets (tenant_id, secret_sha256)
		VALUES ($1, sha256(convert_to($2, 'UTF8')))`, f.tenant, webhookSecret(label)); err != nil {
		t.Fatal(err)
	}
	f.vendor = p.must(201, "POST", "/v1/vendors", a, map[string]any{"name": "Fixture Lieferant " + label, "tax_id": "21/815/08150",
		"vat_id": "DE123456789", "iban": "DE89370400440532013000", "bic": "COBADEFFXXX",
		"address": map[string]any{"street": "Hafenstr. 1", "zip": "20457", "city": "Hamburg"}, "default_account": "6815"}).str("id")
	f.reviewFixture()
	f.runs = newRunsFixture(t, p, f)
	f.invoiceDoc = p.upload(201, "/v1/documents", a, fileField("zugferd.pdf", "application/pdf", einvoiceSample(t, "mustang-EN16931_Einfach.pdf"))).str("id")
	// Sales invoices: the seller's master data and payment account, an issued invoice and a draft.
	invoiceSeller(p, a)
	invoiceSettings(p, a)
	f.salesInvoice = p.must(201, "POST", "/v1/sales-invoices", a, map[string]any{"debtor_id": f.debtor, "invoice_date": "2025-03-03",
		"line_items": []any{item("Fixture Beratung", "2", "150", "tax_code", "USt19", "unit", "HUR")}}).str("invoice_id")
	f.salesDraft = p.must(201, "POST", "/v1/sales-invoices", a, map[string]any{"debtor_id": f.debtor, "invoice_date": "2025-03-04", "draft": true,
		"line_items": []any{item("Fixture Entwurf", "1", "80", "tax_rate", 7)}}).str("invoice_id")
	f.cancelInvoice, f.cancelInvoiceMCP, f.creditInvoice = cancelFixture(p, f.admin, f.debtor)
	f.grantClient, f.grantRevoke = "app-"+label, "app-del-"+label
	for _, c := range []string{f.grantClient, f.grantRevoke} {
		if _, err := p.owner.Exec(ctx, "INSERT INTO identity.oauth_grants (tenant_id, client_id, client_name, scopes) VALUES ($1, $2, $3, '{journal:read}')", f.tenant, c, "App "+c); err != nil {
			t.Fatal(err)
		}
	}
	p.must(201, "PUT", "/v1/oauth/clients/client-"+label, a, map[string]any{"name": "Fixture client", "redirect_uris": []string{"https://app.example.com/cb"}, "scopes": []string{"journal:read"}})
	_, f.tenantDel = p.newTenant("Contract " + label + " to deactivate")
	return f
}

// bankImport is a JSON import of two transactions into the fixture's bank
// account, one with reference.
func bankImport(f *fixture, reference string) map[string]any {
	return map[string]any{"bank_account_id": f.bankAccount, "transactions": []any{
		map[string]any{"tx_date": "2025-03-03", "amount": json.Number("-1190.00"), "currency": "EUR", "counterparty_name": "Vermieter GmbH",
			"counterparty_iban": "DE44 5001 0517 5407 3249 31", "reference": reference, "bank_reference": "REF-" + reference, "tx_type": "SEPA-UEBERWEISUNG", "value_date": "2025-03-04"},
		map[string]any{"tx_date": "2025-03-05", "amount": json.Number("595.00"), "reference": reference + " Eingang"},
	}}
}

// as is a request with the tenant's admin key.
func (f *fixture) as(r happyReq) happyReq { r.token = f.admin; return r }

func qs(kv ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Add(kv[i], kv[i+1])
	}
	return v
}

func pathID(name, value string) map[string]string { return map[string]string{name: value} }

func getAs(f *fixture, query url.Values) happyReq { return f.as(happyReq{query: query}) }

var happyCases = map[string][]happyCase{
	// Auth.
	"login": {{build: func(f *fixture) happyReq {
		return happyReq{body: map[string]any{"email": f.email, "password": f.password}}
	}, noForeign: true}},
	"forgotPassword": {{build: func(f *fixture) happyReq {
		return happyReq{body: map[string]any{"email": f.email}}
	}, noForeign: true}},
	"setupPassword": {{build: func(f *fixture) happyReq {
		return happyReq{body: map[string]any{"token": f.inviteToken, "password": "another good passphrase"}}
	}, noForeign: true}},
	"verifyToken": {
		{name: "api key", build: func(f *fixture) happyReq { return f.as(happyReq{body: map[string]any{"token": f.admin}}) }, noForeign: true},
		{name: "session", build: func(f *fixture) happyReq { return f.as(happyReq{body: map[string]any{"token": f.session}}) }, noForeign: true},
		{name: "invalid", build: func(f *fixture) happyReq { return f.as(happyReq{body: map[string]any{"token": "lgr_nothing"}}) }, noForeign: true},
		{name: "own", build: func(f *fixture) happyReq { return happyReq{token: f.session} }, noForeign: true},
	},
	"logout": {{build: func(f *fixture) happyReq { return happyReq{token: f.logoutSession} },
		battery: func(f *fixture) happyReq { return happyReq{token: f.batterySession} }, noForeign: true, last: true}},
	"getMe": {
		{name: "api key", build: func(f *fixture) happyReq { return getAs(f, nil) }},
		{name: "session", build: func(f *fixture) happyReq { return happyReq{token: f.session} }},
	},

	// API keys, users, tenant.
	"listApiKeys": {{build: func(f *fixture) happyReq { return getAs(f, nil) }}},
	"createApiKey": {
		{name: "scopes", build: func(f *fixture) happyReq {
			return f.as(happyReq{body: map[string]any{"label": "ci", "scopes": []string{"journal:read", "journal:write"}}})
		}},
		{name: "role and rate limit", build: func(f *fixture) happyReq {
			return f.as(happyReq{body: map[string]any{"label": "fast", "role": "viewer", "rate_limit_per_minute": 600}})
		}},
	},
	"deleteApiKey": {{build: func(f *fixture) happyReq { return f.as(happyReq{params: pathID("id", f.keyDel)}) }, last: true}},
	"listUsers":    {{build: func(f *fixture) happyReq { return getAs(f, nil) }}},
	"inviteUser": {{build: func(f *fixture) happyReq {
		return f.as(happyReq{body: map[string]any{"email": "new-" + f.label + "@example.com", "role": "viewer"}})
	}, battery: func(f *fixture) happyReq {
		return f.as(happyReq{body: map[string]any{"email": "battery-" + f.label + "@example.com", "role": "viewer"}})
	}}},
	"updateUser": {{build: func(f *fixture) happyReq {
		return f.as(happyReq{params: pathID("id", f.userB), body: map[string]any{"role": "accountant"}})
	}, battery: func(f *fixture) happyReq {
		return f.as(happyReq{params: pathID("id", f.userB), body: map[string]any{"role": "viewer", "is_active": false}})
	}}},
	"deleteUser": {{build: func(f *fixture) happyReq { return f.as(happyReq{params: pathID("id", f.userDel)}) }, last: true}},
	"getTenant":  {{build: func(f *fixture) happyReq { return getAs(f, nil) }}},
	"updateTenant": {{build: func(f *fixture) happyReq {
		return f.as(happyReq{body: map[string]any{"legal_form": "GmbH", "vat_id": "DE123456789", "tax_id": "12/345/67890",
			"address": map[string]any{"street": "Hauptstr. 1", "zip": "10115", "city": "Berlin", "country": "DE"}}})
	}, battery: func(f *fixture) happyReq {
		return f.as(happyReq{body: map[string]any{"legal_form": "AG", "company_name": "Batterie AG", "fiscal_year_start_month": 1,
			"address": map[string]any{"street": "Nebenstr. 2", "zip": "20095", "city": "Hamburg", "country": "DE"}}})
	}}},

	// OAuth.
	"listOAuthApps":    {{build: func(f *fixture) happyReq { return getAs(f, nil) }}},
	"revokeOAuthApp":   {{build: func(f *fixture) happyReq { return f.as(happyReq{params: pathID("clientId", f.grantRevoke)}) }, last: true}},
	"listOAuthClients": {{build: func(f *fixture) happyReq { return getAs(f, nil) }}},
	"putOAuthClient": {
		{name: "create", build: func(f *fixture) happyReq {
			return f.as(happyReq{params: pathID("clientId", "new-client"), body: map[string]any{"name": "New app", "redirect_uris": []string{"https://new.example.com/cb", "http://localhost:8000/cb"}, "scopes": []string{"journal:read"}}})
		}, noForeign: true},
		{name: "update", build: func(f *fixture) happyReq {
			return f.as(happyReq{params: pathID("clientId", "client-"+f.label), body: map[string]any{"name": "Renamed", "redirect_uris": []string{"https://app.example.com/cb"}, "scopes": []string{"journal:read"}}})
		}, noForeign: true},
	},

	// Operator.
	"listTenants": {{build: func(f *fixture) happyReq { return happyReq{token: f.operatorKey, query: qs("limit", "50")} }, noForeign: true}},
	"createTenant": {{build: func(f *fixture) happyReq {
		return happyReq{token: f.operatorKey, body: map[string]any{"company_name": "Neu " + f.label + " GmbH", "legal_form": "GmbH", "fiscal_year_start_month": 7}}
	}, noForeign: true}},
	"deactivateTenant": {{build: func(f *fixture) happyReq { return happyReq{token: f.operatorKey, params: pathID("id", f.tenantDel)} }, noForeign: true, last: true}},
	"listAuditLog":     {{build: func(f *fixture) happyReq { return getAs(f, qs("limit", "20")) }}},

	// Bookings, documents, journal.
	"createBooking": {{build: func(f *fixture) happyReq { return f.as(happyReq{example: true}) },
		battery: func(f *fixture) happyReq {
			return f.as(happyReq{body: map[string]any{"booking_date": "2025-03-14", "description": "Batterie", "skip_duplicate_check": true,
				"lines": []any{map[string]any{"account_debit": "6815", "account_credit": "1800", "amount": json.Number("119.00"), "tax_code": "VSt19",
					"description": "Zeile", "external_reference": "RE-9", "fx_currency": "USD", "fx_amount": json.Number("130.5"), "custom_metadata": map[string]any{"k": "v"}}}}})
		},
		mcp: func(f *fixture, args map[string]any) { args["description"] = "Büromaterial März über MCP" }}},
	"createBookingWithDocument": {{build: func(f *fixture) happyReq {
		return f.as(happyReq{multipart: []part{fileField("beleg.pdf", "application/pdf", pdfOf("happy wd "+f.label)),
			textField("booking_date", "2025-03-14"), textField("description", "Büromaterial mit Beleg"), textField("intent_category", "office"),
			textField("lines", `[{"account_debit":"6815","account_credit":"1800","amount":119.00,"tax_code":"VSt19"}]`), textField("skip_duplicate_check", "false")}})
	}, battery: func(f *fixture) happyReq {
		return f.as(happyReq{multipart: []part{fileField("beleg.pdf", "application/pdf", pdfOf("battery wd "+f.label)),
			textField("booking_date", "2025-03-14"), textField("description", "Batterie mit Beleg"), textField("intent_category", "office"),
			textField("lines", `[{"account_debit":"6815","account_credit":"1800","amount":119.00,"tax_code":"VSt19"}]`), textField("skip_duplicate_check", "true")}})
	}}},
	"uploadDocument": {
		{name: "new", build: func(f *fixture) happyReq {
			return f.as(happyReq{multipart: []part{fileField("scan.png", "image/png", pngOf(3))}})
		}, battery: func(f *fixture) happyReq {
			return f.as(happyReq{multipart: []part{fileField("scan.pdf", "application/pdf", pdfOf("battery upload "+f.label))}})
		}, mcp: func(f *fixture, args map[string]any) {
			args["file_base64"], args["filename"] = base64.StdEncoding.EncodeToString(pngOf(4)), "scan-mcp.png"
		}},
		{name: "known", build: func(f *fixture) happyReq {
			return f.as(happyReq{multipart: []part{fileField("again.pdf", "application/pdf", pdfOf("doc "+f.label))}})
		}},
	},
	"getDocumentFile": {{build: func(f *fixture) happyReq { return f.as(happyReq{params: pathID("id", f.doc)}) }}},
	"listJournal": {
		{name: "filtered", build: func(f *fixture) happyReq {
			return getAs(f, qs("account", "1800", "startDate", "2025-01-01", "endDate", "2025-12-31", "search", "Fixture", "limit", "50", "offset", "0"))
		}},
		{name: "reference", build: func(f *fixture) happyReq { return getAs(f, qs("externalReference", "RE-1")) }},
	},
	"verifyJournal": {
		{name: "incremental", build: func(f *fixture) happyReq { return getAs(f, nil) }},
		{name: "full", build: func(f *fixture) happyReq { return getAs(f, qs("full", "true")) }},
	},
	"getIntent": {
		{name: "plain", build: func(f *fixture) happyReq { return f.as(happyReq{params: pathID("intent_id", f.intent)}) }},
		{name: "reversed", build: func(f *fixture) happyReq { return f.as(happyReq{params: pathID("intent_id", f.intentReversed)}) }},
		{name: "with document", build: func(f *fixture) happyReq { return f.as(happyReq{params: pathID("intent_id", f.intentDoc)}) }},
	},
	"reverseIntent": {{build: func(f *fixture) happyReq {
		return f.as(happyReq{body: map[string]any{"intent_id": f.intentToReverse, "reason": "falsch gebucht", "booking_date": "2025-03-31"}})
	}, battery: func(f *fixture) happyReq {
		return f.as(happyReq{body: map[string]any{"intent_id": f.intentSpare, "reason": "Batterie", "booking_date": "2025-03-31"}})
	}, mcp: func(f *fixture, args map[string]any) { args["intent_id"] = f.intentMCP }}},

	// Review queue.
	"listReviewItems": {
		{name: "pending", build: func(f *fixture) happyReq { return getAs(f, nil) }},
		{name: "all", build: func(f *fixture) happyReq { return getAs(f, qs("status", "all", "limit", "200", "offset", "0")) }},
	},
	"countReviewItems": {{build: func(f *fixture) happyReq { return getAs(f, qs("status", "all")) }}},
	"nextReviewItem": {
		{name: "first", build: func(f *fixture) happyReq { return getAs(f, nil) }},
		{name: "after", build: func(f *fixture) happyReq { return getAs(f, qs("after_id", f.rvMain)) }},
	},
	"getReviewItem": {
		{name: "with document", build: func(f *fixture) happyReq { return f.as(happyReq{params: pathID("id", f.rvMain)}) }},
		{name: "confirmed", build: func(f *fixture) happyReq { return f.as(happyReq{params: pathID("id", f.rvConfirmed)}) }},
		{name: "overridden", build: func(f *fixture) happyReq { return f.as(happyReq{params: pathID("id", f.rvOverridden)}) }},
	},
	"deleteReviewItem": {
		{name: "pending", build: func(f *fixture) happyReq { return f.as(happyReq{params: pathID("id", f.rvDelete)}) }, last: true},
		{name: "confirmed", build: func(f *fixture) happyReq { return f.as(happyReq{params: pathID("id", f.rvDeleteConfirmed)}) }, last: true},
	},
	"adjustReviewItem": {{build: func(f *fixture) happyReq { return f.as(happyReq{params: pathID("id", f.rvMain), example: true}) },
		mcp: func(f *fixture, args map[string]any) { args["id"] = f.rvMCP },
		battery: func(f *fixture) happyReq {
			return f.as(happyReq{params: pathID("id", f.rvBattery), body: map[string]any{"instruction": "Datum 2025-03-30"}})
		}}},
	"confirmReviewItem": {{build: func(f *fixture) happyReq {
		return f.as(happyReq{params: pathID("id", f.rvConfirm), body: map[string]any{"skip_duplicate_check": true}})
	}, battery: func(f *fixture) happyReq {
		return f.as(happyReq{params: pathID("id", f.rvBattery), body: map[string]any{"skip_duplicate_check": true}})
	}, mcp: func(f *fixture, args map[string]any) { args["id"] = f.rvMCP }}},
	"updateReviewDraft": {{build: func(f *fixture) happyReq {
		return f.as(happyReq{params: pathID("id", f.rvMain), body: map[string]any{"lou_suggestion": map[string]any{
			"booking_date": "2025-03-22", "description": "Neuer Entwurf", "confidence": 0.5, "reasons": []string{"corrected"},
			"lines": []any{map[string]any{"account_debit": "6805", "account_credit": "1800", "amount": json.Number("119.00"), "tax_code": "VSt19"}}}}})
	}, battery: func(f *fixture) happyReq {
		return f.as(happyReq{params: pathID("id", f.rvBattery), body: map[string]any{"lou_suggestion": map[string]any{
			"booking_date": "2025-03-23", "description": "Batterie-Entwurf", "confidence": 0.4, "reasons": []string{"battery"},
			"lines": []any{map[string]any{"account_debit": "6805", "account_credit": "1800", "amount": json.Number("120.00"), "tax_code": "VSt19"}}}}})
	}}},
	"overrideReviewItem": {{build: func(f *fixture) happyReq {
		return f.as(happyReq{params: pathID("id", f.rvOverride), body: map[string]any{"booking_draft": bookingBody("2025-03-24", "Stattdessen", bline("6805", "1800", "119.00", "tax_code", "VSt19"))}})
	}, battery: func(f *fixture) happyReq {
		b := bookingBody("2025-03-24", "Batterie stattdessen", bline("6805", "1800", "119.00", "tax_code", "VSt19"))
		return f.as(happyReq{params: pathID("id", f.rvBattery), body: map[string]any{"booking_draft": b, "skip_duplicate_check": true}})
	}}},

	// Chart, tax codes, bank.
	"listAccounts": {
		{name: "all", build: func(f *fixture) happyReq { return getAs(f, nil) }},
		{name: "filtered", build: func(f *fixture) happyReq {
			return getAs(f, qs("q", "bank", "type", "asset", "limit", "10", "offset", "0"))
		}},
	},
	"createAccount": {{build: func(f *fixture) happyReq { return f.as(happyReq{example: true}) },
		battery: func(f *fixture) happyReq {
			return f.as(happyReq{body: map[string]any{"number": "6899", "name": "Batterie", "type": "expense", "category": "Sonstiges", "report_group": "GuV"}})
		}}},
	"searchAccounts": {{build: func(f *fixture) happyReq { return getAs(f, qs("q", "68", "type", "expense", "limit", "5")) }}},
	"listAccountEntries": {{build: func(f *fixture) happyReq {
		return f.as(happyReq{params: pathID("number", "1800"), query: qs("startDate", "2025-01-01", "endDate", "2025-12-31", "limit", "100")})
	}}},
	"listTaxCodes": {{build: func(f *fixture) happyReq { return getAs(f, qs("include_inactive", "true")) }}},
	"updateTaxCode": {{noForeign: true, build: func(f *fixture) happyReq { return f.as(happyReq{params: pathID("code", "IGE7"), example: true}) },
		battery: func(f *fixture) happyReq {
			return f.as(happyReq{params: pathID("code", "RC7"), body: map[string]any{"label": "Batterie", "description": "Batterie", "rate": json.Number("7.5"), "vat_account": "1407", "self_assess_account": "3837", "is_active": true}})
		}}},
	"listBankAccounts": {{build: func(f *fixture) happyReq { return getAs(f, nil) }}},
	"createBankAccount": {{build: func(f *fixture) happyReq { return f.as(happyReq{example: true}) },
		battery: func(f *fixture) happyReq {
			return f.as(happyReq{body: map[string]any{"name": "Batterie", "iban": "DE44 5001 0517 5407 3249 31", "bic": "INGDDEFFXXX", "account_number": "1820", "currency": "EUR"}})
		},
		mcp: func(f *fixture, args map[string]any) {
			args["iban"], args["account_number"] = "DE59100100100000123456", "1830"
		}}},
	"getBankAccount": {{build: func(f *fixture) happyReq { return f.as(happyReq{params: pathID("id", f.bankAccount)}) }}},
	"updateBankAccount": {{build: func(f *fixture) happyReq { return f.as(happyReq{params: pathID("id", f.bankAccount), example: true}) },
		battery: func(f *fixture) happyReq {
			return f.as(happyReq{params: pathID("id", f.bankAccount), body: map[string]any{"name": "Batterie"}})
		}}},
	"listBankTransactions": {
		{name: "filtered", build: func(f *fixture) happyReq {
			return getAs(f, qs("bank_account_id", f.bankAccount, "from", "2025-03-01", "to", "2025-03-31", "status", "open", "search", "Miete", "limit", "10", "offset", "0"))
		}},
		{name: "default", build: func(f *fixture) happyReq { return getAs(f, nil) }},
	},
	"importBankTransactions": {{build: func(f *fixture) happyReq { return f.as(happyReq{body: bankImport(f, "Happy Miete")}) },
		battery: func(f *fixture) happyReq { return f.as(happyReq{body: bankImport(f, "Batterie Miete")}) }}},
	"getBankTransaction": {{build: func(f *fixture) happyReq { return f.as(happyReq{params: pathID("id", f.bankTx)}) }}},
	"getBankReconciliation": {
		{name: "range", build: func(f *fixture) happyReq {
			return f.as(happyReq{params: pathID("id", f.bankAccount), query: qs("from", "2025-03-01", "to", "2025-03-31", "limit", "10")})
		}},
		{name: "default", build: func(f *fixture) happyReq { return f.as(happyReq{params: pathID("id", f.bankAccount)}) }},
	},
	"getBankBalanceHistory": {
		{name: "days", build: func(f *fixture) happyReq { return getAs(f, qs("days", "30")) }},
		{name: "default", build: func(f *fixture) happyReq { return getAs(f, nil) }},
	},
	"suggestBankMatches": {
		{name: "period", build: func(f *fixture) happyReq {
			return getAs(f, qs("bank_account_id", f.bankAccount, "period", "2025-03", "limit", "10"))
		}},
		{name: "default", build: func(f *fixture) happyReq { return getAs(f, qs("bank_account_id", f.bankAccount)) }},
	},
	"uploadBankStatement": {{build: func(f *fixture) happyReq {
		return f.as(happyReq{params: pathID("id", f.bankAccount), multipart: []part{statementPart("auszug.sta", happyMT940(f, "upload"))}})
	}}},
	"importBankStatementFile": {{build: func(f *fixture) happyReq {
		return f.as(happyReq{multipart: []part{statementPart("auszug.sta", happyMT940(f, "by-iban"))}})
	}}},
	"getBankImport": {{build: func(f *fixture) happyReq { return f.as(happyReq{params: pathID("id", f.bankImportID())}) }}},

	// Debtors.
	"listDebtors": {
		{name: "filtered", build: func(f *fixture) happyReq {
			return getAs(f, qs("search", "fixture", "is_active", "true", "limit", "10", "offset", "0"))
		}},
		{name: "default", build: func(f *fixture) happyReq { return getAs(f, nil) }},
	},
	"createDebtor": {{build: func(f *fixture) happyReq { return f.as(happyReq{example: true}) },
		battery: func(f *fixture) happyReq {
			return f.as(happyReq{body: map[string]any{"customer_number": "B-1", "name": "Batterie GmbH",
				"address": map[string]any{"street": "Batteriestr. 1", "zip": "20095", "city": "Hamburg", "country": "DE"},
				"vat_id":  "ATU12345678", "email": "batterie@example.de", "leitweg_id": "991-33333TEST-33", "receivable_account": "1200",
				"payment_terms": map[string]any{"days": 20, "cash_discount_rate": json.Number("3"), "cash_discount_days": 5}}})
		}}},
	// Outgoing invoices and open items.
	"listOutgoingInvoices": {
		{name: "filtered", build: func(f *fixture) happyReq {
			return getAs(f, qs("customer_id", f.debtor, "status", "open", "type", "invoice", "start_date", "2025-01-01", "end_date", "2025-12-31",
				"limit", "10", "offset", "0"))
		}},
		{name: "default", build: func(f *fixture) happyReq { return getAs(f, nil) }},
	},
	"listReceivablesOpenItems": {{build: func(f *fixture) happyReq { return getAs(f, nil) }}},
	"listSalesInvoiceOpenItems": {
		{name: "filtered", build: func(f *fixture) happyReq { return getAs(f, qs("debtor_id", f.debtor, "period", "2025-03")) }},
		{name: "default", build: func(f *fixture) happyReq { return getAs(f, nil) }},
	},
	"cancelSalesInvoice": {{build: func(f *fixture) happyReq { return f.as(happyReq{params: pathID("id", f.cancelInvoice)}) },
		mcp: func(f *fixture, args map[string]any) { args["id"] = f.cancelInvoiceMCP }}},
	"createCreditNote": {{build: func(f *fixture) happyReq { return f.as(happyReq{params: pathID("id", f.creditInvoice), example: true}) }}},
	"getDebtor":        {{build: func(f *fixture) happyReq { return f.as(happyReq{params: pathID("id", f.debtor)}) }}},
	"updateDebtor": {{build: func(f *fixture) happyReq { return f.as(happyReq{params: pathID("id", f.debtor), example: true}) },
		battery: func(f *fixture) happyReq {
			return f.as(happyReq{params: pathID("id", f.debtor), body: map[string]any{"customer_number": "B-2", "name": "Batterie",
				"address": map[string]any{"street": "Batteriestr. 2", "zip": "20095", "city": "Hamburg", "country": "AT"},
				"vat_id":  "", "email": "", "leitweg_id": "992-90009-96", "receivable_account": "1200", "is_active": false,
				"payment_terms": map[string]any{"days": 25, "cash_discount_rate": json.Number("1.5"), "cash_discount_days": 7}}})
		},
		mcp: func(f *fixture, args map[string]any) { args["name"] = "Fixture Kunde per MCP" }}},

	// Vendors.
	"listVendors": {
		{name: "filtered", build: func(f *fixture) happyReq {
			return getAs(f, qs("search", "fixture", "is_active", "true", "limit", "10", "offset", "0"))
		}},
		{name: "default", build: func(f *fixture) happyReq { return getAs(f, nil) }},
	},
	// The MCP run creates another vendor: the same name, tax number or VAT
	// ID again would be a duplicate.
	"createVendor": {{build: func(f *fixture) happyReq { return f.as(happyReq{example: true}) },
		battery: func(f *fixture) happyReq {
			return f.as(happyReq{body: map[string]any{"name": "Batterie Lieferant GmbH", "tax_id": "2181508150005", "vat_id": "ATU12345678",
				"iban": "AT611904300234573201", "bic": "BKAUATWW", "default_account": "5400", "notes": "Batterie",
				"address": map[string]any{"street": "Batteriestr. 1", "zip": "1010", "city": "Wien", "country": "AT"}}})
		},
		mcp: func(f *fixture, args map[string]any) {
			args["name"], args["tax_id"], args["vat_id"] = "Fixture Lieferant per MCP", "143/123/99999", "DE111111111"
		}}},
	// Invoice review cases and incoming invoices.
	"listInvoiceReviewCases": {
		{name: "filtered", build: func(f *fixture) happyReq {
			return getAs(f, qs("queue_state", "approval", "limit", "10", "offset", "0"))
		}},
		{name: "default", build: func(f *fixture) happyReq { return getAs(f, nil) }},
	},
	"getInvoiceReviewCase": {{build: func(f *fixture) happyReq { return f.as(happyReq{params: pathID("id", f.caseCorrect)}) }}},
	"approveInvoiceReviewCase": {{build: func(f *fixture) happyReq { return f.as(happyReq{params: pathID("id", f.caseApprove)}) },
		mcp: func(f *fixture, args map[string]any) { args["id"] = f.caseApproveMCP }}},
	"correctInvoiceReviewCase": {{build: func(f *fixture) happyReq {
		return f.as(happyReq{params: pathID("id", f.caseCorrect), example: true})
	}}},
	"rejectInvoiceReviewCase": {{build: func(f *fixture) happyReq { return f.as(happyReq{params: pathID("id", f.caseReject), example: true}) },
		mcp: func(f *fixture, args map[string]any) { args["id"] = f.caseRejectMCP }}},
	"listIncomingInvoices": {
		{name: "filtered", build: func(f *fixture) happyReq {
			return getAs(f, qs("vendor_id", f.vendor, "status", "overdue", "start_date", "2026-01-01", "end_date", "2026-12-31", "limit", "10", "offset", "0"))
		}},
		{name: "default", build: func(f *fixture) happyReq { return getAs(f, nil) }},
	},
	"getIncomingInvoice":    {{build: func(f *fixture) happyReq { return f.as(happyReq{params: pathID("id", f.incomingInvoice)}) }}},
	"listPayablesOpenItems": {{build: func(f *fixture) happyReq { return getAs(f, nil) }}},
	"getVendor":             {{build: func(f *fixture) happyReq { return f.as(happyReq{params: pathID("id", f.vendor)}) }}},
	// The payables inbox. The secret route rolls the secret of a tenant of
	// its own, so that the fixture's known secret holds for the webhook.
	"rollInboundEmailSecret": {{build: func(f *fixture) happyReq { return happyReq{token: f.webhookRoller} }}},
	"inboundEmail": {{build: func(f *fixture) happyReq {
		secret := webhookSecret(f.label)
		mail := testMail(f.p.t, "Rechnung "+f.label, mailPart{"rechnung-" + f.label + ".pdf", "application/pdf", pdfOf("inbox " + f.label)})
		return happyReq{params: pathID("tenant_id", f.tenant), headers: []string{"X-Webhook-Secret", secret},
			multipart: []part{textField("sender", "lieferant@example.com"), textField("body-mime", string(mail))}}
	}}},
	"listIngestionLog": {
		{name: "filtered", build: func(f *fixture) happyReq {
			return getAs(f, qs("outcome", "ingested", "outcome", "skipped_duplicate", "limit", "10", "offset", "0"))
		}},
		{name: "default", build: func(f *fixture) happyReq { return getAs(f, nil) }},
	},
	"listInbox": {
		{name: "filtered", build: func(f *fixture) happyReq { return getAs(f, qs("status", "pending", "limit", "10", "offset", "0")) }},
		{name: "default", build: func(f *fixture) happyReq { return getAs(f, nil) }},
	},
	"uploadToInbox": {{build: func(f *fixture) happyReq {
		return f.as(happyReq{multipart: []part{fileField("eingang.pdf", "application/pdf", pdfOf("inbox upload "+f.label))}})
	}, battery: func(f *fixture) happyReq {
		return f.as(happyReq{multipart: []part{fileField("eingang.pdf", "application/pdf", pdfOf("inbox battery "+f.label))}})
	}, mcp: func(f *fixture, args map[string]any) {
		args["file_base64"], args["filename"] = base64.StdEncoding.EncodeToString(pdfOf("inbox mcp "+f.label)), "eingang-mcp.pdf"
	}}},
	"extractDocument": {{build: func(f *fixture) happyReq { return f.as(happyReq{body: map[string]any{"document_id": f.invoiceDoc}}) }}},
	"updateVendor": {{build: func(f *fixture) happyReq { return f.as(happyReq{params: pathID("id", f.vendor), example: true}) },
		battery: func(f *fixture) happyReq {
			return f.as(happyReq{params: pathID("id", f.vendor), body: map[string]any{"name": "Batterie Lieferant", "tax_id": "",
				"vat_id": "", "iban": "", "bic": "", "default_account": "5400", "notes": "geändert", "is_active": false,
				"address": map[string]any{"street": "Batteriestr. 2", "zip": "1010", "city": "Wien", "country": "AT"}}})
		},
		mcp: func(f *fixture, args map[string]any) { args["name"] = "Fixture Lieferant per MCP geändert" }}},
	// Sales invoices.
	"createSalesInvoice": {{build: func(f *fixture) happyReq {
		return f.as(happyReq{body: map[string]any{"debtor_id": f.debtor, "invoice_date": "2025-03-05", "due_date": "2025-04-30",
			"service_period": map[string]any{"start": "2025-02-01", "end": "2025-02-28"}, "notes": "Fixture", "currency": "EUR",
			"line_items": []any{item("Fixture Wartung", "3", "40.5", "tax_code", "USt19", "unit", "HUR", "discount", json.Number("1.5")),
				item("Fixture Buch", "1", "20", "tax_rate", 7, "tax_category", "S")}}})
	}}},
	"listSalesInvoices": {
		{name: "filtered", build: func(f *fixture) happyReq {
			return getAs(f, qs("debtor_id", f.debtor, "status", "open", "from", "2025-01-01", "to", "2025-12-31", "limit", "10", "offset", "0"))
		}},
		{name: "default", build: func(f *fixture) happyReq { return getAs(f, nil) }},
	},
	"getSalesInvoice":        {{build: func(f *fixture) happyReq { return f.as(happyReq{params: pathID("id", f.salesInvoice)}) }}},
	"finalizeSalesInvoice":   {{build: func(f *fixture) happyReq { return f.as(happyReq{params: pathID("id", f.salesDraft)}) }}},
	"getSalesInvoicePDF":     {{build: func(f *fixture) happyReq { return f.as(happyReq{params: pathID("id", f.salesInvoice)}) }}},
	"getSalesInvoiceXML":     {{build: func(f *fixture) happyReq { return f.as(happyReq{params: pathID("id", f.salesInvoice)}) }}},
	"getReceivablesSettings": {{build: func(f *fixture) happyReq { return getAs(f, nil) }}},
	"putReceivablesSettings": {{build: func(f *fixture) happyReq {
		return f.as(happyReq{body: map[string]any{"payment_iban": "DE89370400440532013000", "payment_bic": "COBADEFFXXX", "contact_name": "Max Fixture",
			"contact_email": "max@fixture.example", "contact_phone": "+49 40 555", "invoice_number_prefix": "AR-"}})
	}, mcp: func(f *fixture, args map[string]any) { args["contact_name"] = "Mia Fixture" }}},

	// Periods and closing.
	"listPeriods":            {{build: func(f *fixture) happyReq { return getAs(f, nil) }}},
	"softLockPeriod":         {{build: func(f *fixture) happyReq { return f.as(happyReq{params: pathID("period", "2024-05")}) }, mcp: func(f *fixture, args map[string]any) { args["period"] = "2024-09" }}},
	"lockPeriod":             {{build: func(f *fixture) happyReq { return f.as(happyReq{params: pathID("period", "2024-06")}) }}},
	"reopenPeriod":           {{build: func(f *fixture) happyReq { return f.as(happyReq{params: pathID("period", "2024-07")}) }}},
	"createAdjustmentPeriod": {{build: func(f *fixture) happyReq { return f.as(happyReq{params: pathID("year", "2023")}) }}},
	"listClosingTasks": {
		{name: "manual", build: func(f *fixture) happyReq { return getAs(f, qs("period", "2025-02")) }},
		{name: "default", build: func(f *fixture) happyReq { return getAs(f, nil) }},
	},
	"createClosingTask": {{build: func(f *fixture) happyReq { return f.as(happyReq{example: true}) }}},
	"updateClosingTask": {{build: func(f *fixture) happyReq { return f.as(happyReq{params: pathID("id", f.task), example: true}) },
		battery: func(f *fixture) happyReq {
			return f.as(happyReq{params: pathID("id", f.task), body: map[string]any{"status": "in_progress", "title": "Batterie", "assignee": "Cem", "note": "Batterie", "due_date": "2025-03-07"}})
		}}},

	// Reports.
	"getReport": {
		{name: "susa", build: func(f *fixture) happyReq { return getAs(f, qs("type", "susa", "period", "2025-03")) }},
		{name: "trial_balance", build: func(f *fixture) happyReq { return getAs(f, qs("type", "trial_balance", "period", "2025")) }},
		{name: "guv", build: func(f *fixture) happyReq { return getAs(f, qs("type", "guv", "period", "2025-03")) }},
		{name: "bilanz", build: func(f *fixture) happyReq { return getAs(f, qs("type", "bilanz", "period", "2025-03")) }},
	},
	"exportDatev":      {{build: func(f *fixture) happyReq { return getAs(f, qs("from", "2025-01-01", "to", "2025-03-31")) }}},
	"exportGobd":       {{build: func(f *fixture) happyReq { return getAs(f, qs("year", "2025")) }}},
	"createExportJob":  {{build: func(f *fixture) happyReq { return f.as(happyReq{body: map[string]any{"type": "gobd", "year": "2025"}}) }}},
	"getExportJob":     {{build: func(f *fixture) happyReq { return f.as(happyReq{params: pathID("id", f.job)}) }}},
	"getExportJobFile": {{build: func(f *fixture) happyReq { return f.as(happyReq{params: pathID("id", f.job)}) }}},
}
