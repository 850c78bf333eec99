package natsrpc_test

import (
	"encoding/json"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/pkg/testkit"
	"github.com/ledgerplatform/ledger/services/ledger"
	"github.com/ledgerplatform/ledger/services/ledger/internal/ledgertest"
	"github.com/ledgerplatform/ledger/services/ledger/ledgerd"
	"github.com/ledgerplatform/ledger/services/ledger/postgres"
)

// startLedger runs one test's ledger daemon on testkit.RPC, seeding new
// tenants with seed.
func startLedger(t *testing.T, seed ledger.Seed) *testkit.RPC {
	t.Helper()
	h := testkit.NewRPC(t, postgres.Migrations)
	h.Start(ledgerd.WithSeed(seed, ledgerd.Config{Keys: ledgertest.CheckpointKeys(t)}), nil)
	return h
}

// drHarness runs one test's ledger daemon (a small chart) on testkit.RPC.
type drHarness struct {
	rpc    *testkit.RPC
	tenant string
	claims *auth.Claims
}

func newDRHarness(t *testing.T) *drHarness {
	t.Helper()
	h := &drHarness{rpc: startLedger(t, ledgertest.Seed)}
	h.tenant, h.claims = drClaims()
	return h
}

func drClaims() (string, *auth.Claims) {
	tenant := uuid.NewString()
	return tenant, &auth.Claims{TenantID: tenant, KeyID: uuid.NewString(), KeyPrefix: "lgr_testtest", Label: "test", Scopes: []string{"admin"}, Surface: "api"}
}

// drRq is one request; body is sent as is when []byte, else as JSON.
type drRq struct {
	as *auth.Claims
	// service, when set, sends as that service does on its own, for the
	// tenant of as (internal commands).
	service     string
	id          string // the path parameter id
	query       url.Values
	contentType string
	body        any
	idemKey     string
}

type drReply struct {
	status      int
	code        string
	body        []byte
	contentType string
	disposition string
}

func (h *drHarness) call(t *testing.T, subject string, r drRq) drReply {
	t.Helper()
	rq := testkit.Rq{As: r.as, Service: r.service, Query: r.query, Body: r.body, IdempotencyKey: r.idemKey, ContentType: r.contentType}
	if r.id != "" {
		rq.Params = map[string]string{"id": r.id}
	}
	resp := h.rpc.Call(subject, rq)
	return drReply{status: resp.Status, code: resp.Code, body: resp.Body, contentType: resp.Raw.ContentType, disposition: resp.Raw.Disposition}
}

// ok calls subject as the harness tenant, wants status and decodes into out.
func (h *drHarness) ok(t *testing.T, subject string, r drRq, status int, out any) drReply {
	t.Helper()
	if r.as == nil {
		r.as = h.claims
	}
	got := h.call(t, subject, r)
	if got.status != status || got.code != "" {
		t.Fatalf("%s: status %d %s %s, want %d", subject, got.status, got.code, got.body, status)
	}
	if out != nil {
		if err := json.Unmarshal(got.body, out); err != nil {
			t.Fatalf("%s: decode %s: %v", subject, got.body, err)
		}
	}
	return got
}

// fails calls subject as the harness tenant and wants the error.
func (h *drHarness) fails(t *testing.T, subject string, r drRq, status int, code string) errs.Body {
	t.Helper()
	if r.as == nil {
		r.as = h.claims
	}
	got := h.call(t, subject, r)
	if got.status != status || got.code != code {
		t.Fatalf("%s: status %d %s %s, want %d %s", subject, got.status, got.code, got.body, status, code)
	}
	var b errs.Body
	_ = json.Unmarshal(got.body, &b)
	return b
}

func drUpload(t *testing.T, parts ...ledgertest.Part) drRq {
	ct, body := ledgertest.Form(t, parts...)
	return drRq{contentType: ct, body: body}
}

// uploadPDF uploads drPDF as name (of type mime) and wants status.
func (h *drHarness) uploadPDF(t *testing.T, name, mime string, status int) drDocumentBody {
	t.Helper()
	var doc drDocumentBody
	h.ok(t, ledgerv1.SubjectDocumentsUpload, drUpload(t, ledgertest.File(name, mime, drPDF)), status, &doc)
	return doc
}

var (
	drPDF = []byte("%PDF-1.7\n%âãÏÓ\n1 0 obj << >> endobj\n%%EOF\n")
	drPNG = []byte{0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 0x0D, 'I', 'H', 'D', 'R', 1, 2, 3}
)

type drDocumentBody struct {
	ID           string `json:"id"`
	MimeType     string `json:"mime_type"`
	OriginalName string `json:"original_name"`
	SizeBytes    int64  `json:"size_bytes"`
	SHA256       string `json:"sha256"`
}

type drPostedBody struct {
	IntentID   string `json:"intent_id"`
	EventCount int    `json:"event_count"`
	DocumentID string `json:"document_id"`
}

const drDraftJSON = `{"booking_date":"2025-03-15","description":"Büromaterial","lines":[{"account_debit":"6815","account_credit":"1800","amount":119.00,"tax_code":"VSt19"}],"confidence":0.8,"reasons":["vendor match"]}`

// createItem queues a draft over the internal subject.
func (h *drHarness) createItem(t *testing.T, in ledgerv1.ReviewItemInput, status int) ledgerv1.ReviewItemCreated {
	t.Helper()
	// The bank sends it: the tenant travels as its signed principal's.
	as := h.claims
	if in.TenantID != "" {
		as = &auth.Claims{TenantID: in.TenantID}
	}
	in.TenantID = ""
	if in.SourceType == "" {
		in.SourceType = "manual"
	}
	if in.Suggestion == nil {
		in.Suggestion = json.RawMessage(drDraftJSON)
	}
	var out ledgerv1.ReviewItemCreated
	got := h.call(t, ledgerv1.SubjectReviewCreate, drRq{service: "bank", as: as, body: in})
	if got.status != status || got.code != "" {
		t.Fatalf("create: %d %s %s, want %d", got.status, got.code, got.body, status)
	}
	if err := json.Unmarshal(got.body, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

type drItemBody struct {
	ID            string          `json:"id"`
	Status        string          `json:"status"`
	LouSuggestion json.RawMessage `json:"lou_suggestion"`
	IntentID      *string         `json:"intent_id"`
	Document      *drDocumentBody `json:"document"`
}

func drIDs(items []drItemBody) []string {
	out := []string{}
	for _, it := range items {
		out = append(out, it.ID)
	}
	return out
}

// chartRPC runs the ledger's daemon (SKR04 chart) on testkit.RPC.
type chartRPC struct {
	h      *testkit.RPC
	claims *auth.Claims
}

func newChartRPC(t *testing.T) *chartRPC {
	t.Helper()
	return &chartRPC{h: startLedger(t, ledgerd.Seed),
		claims: &auth.Claims{TenantID: uuid.NewString(), KeyID: uuid.NewString(), KeyPrefix: "lgr_rpc", Label: "rpc", Scopes: []string{"admin"}, Surface: "api"}}
}

// chartCall is one request of the route table.
type chartCall struct {
	name    string
	subject string
	param   string // the path parameter (number or code)
	query   string
	body    string
	key     string // Idempotency-Key
	anon    bool   // send no claims
	status  int
	code    string         // machine code of an error reply
	want    map[string]any // expected top-level fields of a success body (subset)
	fields  []string       // detail fields of an error reply
}

func (c *chartRPC) do(t *testing.T, tc chartCall) (*natsx.Reply, map[string]any) {
	t.Helper()
	rq := testkit.Rq{Body: tc.body, IdempotencyKey: tc.key}
	if !tc.anon {
		rq.As = c.claims
	}
	if tc.param != "" {
		name := "number"
		if tc.subject == ledgerv1.SubjectTaxCodesUpdate {
			name = "code"
		}
		rq.Params = map[string]string{name: tc.param}
	}
	if tc.query != "" {
		q, err := url.ParseQuery(tc.query)
		if err != nil {
			t.Fatal(err)
		}
		rq.Query = q
	}
	reply := c.h.Call(tc.subject, rq).Raw
	var body map[string]any
	if err := json.Unmarshal(reply.Body, &body); err != nil {
		t.Fatalf("%s: reply %q: %v", tc.name, reply.Body, err)
	}
	return reply, body
}

func (c *chartRPC) run(t *testing.T, calls []chartCall) {
	t.Helper()
	for _, tc := range calls {
		reply, body := c.do(t, tc)
		if reply.Status != tc.status || reply.ErrCode != tc.code {
			t.Errorf("%s: status %d %q, want %d %q: %s", tc.name, reply.Status, reply.ErrCode, tc.status, tc.code, reply.Body)
			continue
		}
		if tc.code != "" {
			var b errs.Body
			_ = json.Unmarshal(reply.Body, &b)
			var fields []string
			for _, d := range b.Details {
				fields = append(fields, d.Field)
			}
			if b.Code != tc.code || b.Error == "" {
				t.Errorf("%s: error body %s", tc.name, reply.Body)
			}
			if diff := cmp.Diff(tc.fields, fields); diff != "" {
				t.Errorf("%s: detail fields (-want +got):\n%s", tc.name, diff)
			}
			continue
		}
		if tc.want == nil {
			continue
		}
		got := map[string]any{}
		for k := range tc.want {
			got[k] = body[k]
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s: body (-want +got):\n%s", tc.name, diff)
		}
	}
}

// chartHitNumbers lists the numbers of an accounts array in a body.
func chartHitNumbers(body map[string]any, key string) []any {
	var out []any
	for _, a := range body[key].([]any) {
		out = append(out, a.(map[string]any)["number"])
	}
	return out
}
