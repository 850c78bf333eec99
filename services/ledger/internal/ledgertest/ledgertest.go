// Package ledgertest holds what the ledger's domain, store and route tests
// share: a fresh migrated database, small charts, multipart bodies and a
// few assertions.
package ledgertest

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"mime/multipart"
	"net/textproto"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/testkit"
	"github.com/ledgerplatform/ledger/services/ledger"
	"github.com/ledgerplatform/ledger/services/ledger/postgres"
)

// DB is a fresh database with the ledger's migrations: pool runs as the
// service role ledger_svc with at most conns connections, owner as the
// database's owner, for looking behind the service. Both close with the
// test.
func DB(t testing.TB, conns int32) (pool, owner *pgxpool.Pool) {
	t.Helper()
	url := testkit.Postgres(t, postgres.Migrations)
	ctx := context.Background()
	pool, err := db.Open(ctx, url, "ledger_svc", conns)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	owner, err = pgxpool.New(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(owner.Close)
	return pool, owner
}

// Env is one test's ledger on its own database (see DB), with a tenant and
// an admin API key's claims for it.
type Env struct {
	Svc    *ledger.Service
	Store  *postgres.Store
	Pool   *pgxpool.Pool // as ledger_svc
	Owner  *pgxpool.Pool
	Keys   ledger.CheckpointKeys
	Tenant string
	Claims *auth.Claims
}

// NewEnv is a ledger seeding new tenants with seed, its pool holding at
// most conns connections.
func NewEnv(t testing.TB, conns int32, seed ledger.Seed) *Env {
	t.Helper()
	pool, owner := DB(t, conns)
	store := Store(pool)
	e := &Env{Store: store, Pool: pool, Owner: owner, Keys: CheckpointKeys(t)}
	e.Svc = ledger.New(store, seed, e.Keys)
	e.Tenant, e.Claims = NewTenant()
	return e
}

// CheckpointKeys is a fresh checkpoint key, known to nothing else.
func CheckpointKeys(t testing.TB) ledger.CheckpointKeys {
	t.Helper()
	seed := make([]byte, ed25519.SeedSize)
	if _, err := rand.Read(seed); err != nil {
		t.Fatal(err)
	}
	signer, err := ledger.NewSigner(seed)
	if err != nil {
		t.Fatal(err)
	}
	return ledger.NewCheckpointKeys(signer, nil)
}

// NewTenant is a new tenant id and an admin API key's claims for it.
func NewTenant() (string, *auth.Claims) {
	tenant := uuid.NewString()
	return tenant, &auth.Claims{TenantID: tenant, KeyID: uuid.NewString(), KeyPrefix: "lgr_abcdefgh", Label: "test key", Scopes: []string{"admin"}, Surface: "api"}
}

// Count runs a count query as the owner, across tenants.
func (e *Env) Count(t testing.TB, sql string, args ...any) int {
	t.Helper()
	return testkit.Count(t, e.Owner, sql, args...)
}

// Store is the ledger's store on pool, logging quietly.
func Store(pool *pgxpool.Pool) *postgres.Store {
	return postgres.New(pool, testkit.QuietLog())
}

// Acc is an account of a test chart.
func Acc(number, name, typ string) ledger.Account {
	return ledger.Account{Number: number, Name: name, Type: typ}
}

// Seed is a small chart: the accounts and tax codes of office purchases,
// sales, telephone and bank, without a database.
func Seed() ([]ledger.Account, []ledger.TaxCode) {
	return []ledger.Account{
			Acc("1200", "Forderungen", ledger.Asset), Acc("1401", "Vorsteuer 7 %", ledger.Asset), Acc("1406", "Vorsteuer 19 %", ledger.Asset),
			Acc("1800", "Bank", ledger.Asset), Acc("3300", "Verbindlichkeiten LuL", ledger.Liability), Acc("3801", "Umsatzsteuer 7 %", ledger.Liability),
			Acc("3806", "Umsatzsteuer 19 %", ledger.Liability), Acc("4400", "Erlöse 19 %", ledger.Revenue),
			Acc("6805", "Telefon", ledger.Expense), Acc("6815", "Bürobedarf", ledger.Expense),
		}, []ledger.TaxCode{
			{Code: "VSt19", Label: "Vorsteuer 19 %", Kind: ledger.TaxInput, Rate: money.MustParse("19"), VATAccount: "1406", DATEVKey: "9"},
			{Code: "VSt7", Label: "Vorsteuer 7 %", Kind: ledger.TaxInput, Rate: money.MustParse("7"), VATAccount: "1401", DATEVKey: "8"},
			{Code: "USt19", Label: "Umsatzsteuer 19 %", Kind: ledger.TaxOutput, Rate: money.MustParse("19"), VATAccount: "3806", DATEVKey: "3"},
			{Code: "USt7", Label: "Umsatzsteuer 7 %", Kind: ledger.TaxOutput, Rate: money.MustParse("7"), VATAccount: "3801", DATEVKey: "2"},
		}
}

// Line is a booking line; tax may be "".
func Line(debit, credit, amount, tax string) ledger.Line {
	return ledger.Line{AccountDebit: debit, AccountCredit: credit, Amount: money.MustParse(amount), TaxCode: tax}
}

// Strings maps xs to the string f picks from each, never nil.
func Strings[T any](xs []T, f func(T) string) []string {
	out := make([]string, 0, len(xs))
	for _, x := range xs {
		out = append(out, f(x))
	}
	return out
}

// Code is the machine code of err, "" for nil.
func Code(err error) string {
	if err == nil {
		return ""
	}
	return errs.CodeOf(err)
}

// WantCode fails the test unless err carries code ("" for no error).
func WantCode(t testing.TB, err error, code string) {
	t.Helper()
	if got := Code(err); got != code {
		t.Fatalf("error = %v (code %q), want code %q", err, got, code)
	}
}

// SHA is the hex SHA-256 of b, as the ledger stores a document's hash.
func SHA(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// Refused fails the test unless every statement fails both as ledger_svc
// and as the owner (role postgres): append-only tables refuse everyone.
func Refused(t testing.TB, owner *pgxpool.Pool, statements ...string) {
	t.Helper()
	ctx := context.Background()
	for _, q := range statements {
		for _, role := range []string{"ledger_svc", "postgres"} {
			tx, err := owner.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Exec(ctx, "SET LOCAL ROLE "+role); err != nil {
				t.Fatal(err)
			}
			_, err = tx.Exec(ctx, q)
			tx.Rollback(ctx)
			if err == nil {
				t.Errorf("%s as %s succeeded", q, role)
			}
		}
	}
}

// Part is one part of a multipart body; a part with a filename (or File
// true) is sent as a file.
type Part struct {
	Field, Filename, ContentType string
	Content                      []byte
	File                         bool
}

// File is a file part in the field "file"; ct may be "".
func File(name, ct string, content []byte) Part {
	return Part{Field: "file", Filename: name, ContentType: ct, Content: content, File: true}
}

// Field is a plain form field.
func Field(name, value string) Part { return Part{Field: name, Content: []byte(value)} }

// Form builds a multipart/form-data body and its Content-Type.
func Form(t testing.TB, parts ...Part) (contentType string, body []byte) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		cd := `form-data; name="` + p.Field + `"`
		if p.Filename != "" || p.File {
			cd += `; filename="` + p.Filename + `"`
		}
		h.Set("Content-Disposition", cd)
		if p.ContentType != "" {
			h.Set("Content-Type", p.ContentType)
		}
		pw, err := w.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		pw.Write(p.Content)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return w.FormDataContentType(), buf.Bytes()
}
