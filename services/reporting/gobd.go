package reporting

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"context"
	_ "embed"
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
)

// The GoBD export is the data carrier of the tax audit's data access Z3
// (Datenträgerüberlassung): a ZIP with index.xml, which describes the tables
// in the GDPdU format of the Federal Ministry of Finance (its DTD is in the
// archive too), and the tables as CSV: the fiscal year's journal, the chart
// of accounts, the tax codes, the state of the journal's hash chain and its
// signed checkpoints.
//
// A ZIP cannot be cut into stateless chunks, so the first request writes the
// whole archive, in constant memory, into numbered pieces of blobSize bytes
// (ExportStore), answers with the first piece and a cursor "<export id>:1";
// each later request returns one piece, and the last one deletes the export.
// Exports nobody finished fetching are dropped after blobTTL.

//go:embed gdpdu/gdpdu-01-09-2004.dtd
var gdpduDTD []byte

const (
	gdpduDTDName    = "gdpdu-01-09-2004.dtd"
	gobdContentType = "application/zip"
)

// GoBD column types.
type gobdType int

const (
	gobdText   gobdType = iota // AlphaNumeric
	gobdInt                    // Numeric
	gobdAmount                 // Numeric, Accuracy 2
	gobdDate                   // Date DD.MM.YYYY
)

type gobdColumn struct {
	name string
	typ  gobdType
	desc string
}

type gobdForeignKey struct{ column, table, key string }

type gobdTable struct {
	url, name, desc string
	key             *gobdColumn // primary key, written first
	cols            []gobdColumn
	fks             []gobdForeignKey
	validity        bool // the table covers the fiscal year
}

var (
	gobdJournal = gobdTable{
		url: "journal.csv", name: "Journal", validity: true,
		desc: "Alle Journalereignisse des Wirtschaftsjahres in Journalreihenfolge; je Ereignis eine Soll- und eine Habenbuchung desselben Betrags",
		key:  &gobdColumn{"journal_number", gobdInt, "Journalnummer, je Mandant lückenlos fortlaufend"},
		cols: []gobdColumn{
			{"event_id", gobdText, "ID des Journalereignisses"},
			{"intent_id", gobdText, "ID des Buchungsvorgangs, zu dem das Ereignis gehört"},
			{"booking_date", gobdDate, "Buchungsdatum"},
			{"period", gobdText, "Buchungsperiode JJJJ-MM, JJJJ-13 für die Abschlussperiode"},
			{"account_debit", gobdText, "Sollkonto"},
			{"account_credit", gobdText, "Habenkonto"},
			{"amount", gobdAmount, "Betrag in EUR"},
			{"tax_code", gobdText, "Steuerschlüssel des Ereignisses"},
			{"description", gobdText, "Buchungstext"},
			{"external_reference", gobdText, "Belegnummer oder externe Referenz"},
			{"document_id", gobdText, "ID des archivierten Belegs"},
			{"source", gobdText, "Herkunft des Buchungsvorgangs (api, reversal, review_queue, bank, ...)"},
			{"captured_at", gobdText, "Erfassungszeitpunkt, ISO 8601 in UTC"},
		},
		fks: []gobdForeignKey{{"account_debit", "Kontenplan", "number"}, {"account_credit", "Kontenplan", "number"}, {"tax_code", "Steuerschluessel", "code"}},
	}
	gobdAccounts = gobdTable{
		url: "accounts.csv", name: "Kontenplan", desc: "Kontenplan (SKR04) zum Zeitpunkt des Exports",
		key: &gobdColumn{"number", gobdText, "Kontonummer"},
		cols: []gobdColumn{
			{"name", gobdText, "Kontobezeichnung"},
			{"type", gobdText, "Kontoart: asset, liability, equity, revenue, expense"},
			{"category", gobdText, "Kategorie"},
			{"report_group", gobdText, "Gruppe in Bilanz und GuV"},
		},
	}
	gobdTaxCodes = gobdTable{
		url: "tax_codes.csv", name: "Steuerschluessel", desc: "Steuerschlüssel zum Zeitpunkt des Exports",
		key: &gobdColumn{"code", gobdText, "Steuerschlüssel"},
		cols: []gobdColumn{
			{"label", gobdText, "Bezeichnung"},
			{"kind", gobdText, "Art: output, input, reverse_charge, ic_acquisition, exempt"},
			{"rate", gobdAmount, "Steuersatz in Prozent"},
			{"datev_bu_key", gobdText, "DATEV-BU-Schlüssel"},
		},
	}
	gobdChain = gobdTable{
		url: "chain.csv", name: "Hashkette", validity: true,
		desc: "Prüfung der SHA-256-Hashkette des Journals beim Export: jedes Ereignis ist mit dem Hash seines Vorgängers verkettet; head_hash ist der Hash des Ereignisses mit der Journalnummer chain_events",
		cols: []gobdColumn{
			{"verified_at", gobdText, "Zeitpunkt der Prüfung, ISO 8601 in UTC"},
			{"chain_ok", gobdText, "Ergebnis der Prüfung: ja oder nein"},
			{"chain_events", gobdInt, "Anzahl geprüfter Ereignisse (alle Wirtschaftsjahre) und damit letzte Journalnummer des Exports"},
			{"head_hash", gobdText, "Hash des letzten geprüften Ereignisses (hex)"},
			{"first_broken_journal_number", gobdInt, "Erste Journalnummer mit fehlerhafter Verkettung, leer wenn keine"},
			{"reason", gobdText, "Grund einer fehlgeschlagenen Prüfung"},
			{"fiscal_year_from", gobdDate, "Beginn des Wirtschaftsjahres"},
			{"fiscal_year_to", gobdDate, "Ende des Wirtschaftsjahres"},
			{"journal_rows", gobdInt, "Anzahl der Zeilen in journal.csv"},
			{"first_journal_number", gobdInt, "Erste Journalnummer in journal.csv"},
			{"last_journal_number", gobdInt, "Letzte Journalnummer in journal.csv"},
		},
	}
	gobdCheckpoints = gobdTable{
		url: "checkpoints.csv", name: "Pruefpunkte",
		desc: "Signierte Prüfpunkte der Hashkette bis zur geprüften Journalnummer chain_events (alle Wirtschaftsjahre): der Hash des Ereignisses mit der Journalnummer, " +
			"signiert mit Ed25519 von einem Schlüssel außerhalb der Datenbank. Signiert ist die Bytefolge der Felder \"ledger-checkpoint-v1\", tenant_id, journal_number (dezimal), " +
			"hash (hex), signed_at, reason und key_id, jedem seine Länge in Bytes als 4-Byte-Big-Endian-Zahl vorangestellt. Ein Prüfpunkt ist gültig, wenn die Signatur mit public_key " +
			"verifiziert und hash dem Hash des Ereignisses journal_number gleicht",
		cols: []gobdColumn{
			{"journal_number", gobdInt, "Journalnummer des signierten Ereignisses"},
			{"hash", gobdText, "Hash des Ereignisses (hex), wie signiert"},
			{"signed_at", gobdText, "Zeitpunkt der Signatur, ISO 8601 in UTC mit Mikrosekunden, wie signiert"},
			{"reason", gobdText, "Anlass: schedule (regelmäßig) oder lock JJJJ-MM Status (Periodensperre)"},
			{"tenant_id", gobdText, "ID des Mandanten, wie signiert"},
			{"key_id", gobdText, "Kennung des Schlüssels: die ersten 8 Bytes des SHA-256 des öffentlichen Schlüssels (hex)"},
			{"public_key", gobdText, "Öffentlicher Ed25519-Schlüssel (hex), leer wenn dem Ledger unbekannt"},
			{"signature", gobdText, "Ed25519-Signatur (hex)"},
			{"signature_ok", gobdText, "Prüfung der Signatur durch das Ledger beim Export: ja oder nein"},
		},
	}
	gobdTables = []*gobdTable{&gobdJournal, &gobdAccounts, &gobdTaxCodes, &gobdChain, &gobdCheckpoints}
)

// GoBDExport returns one chunk of the GoBD export of the caller's fiscal
// year (YYYY, named by the calendar year it ends in, like the reports);
// cursor is "" for the first chunk and the
// previous chunk's Next after.
func (s *Service) GoBDExport(ctx context.Context, year, cursor string) (ExportChunk, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return ExportChunk{}, err
	}
	if err := checkGoBDYear(year); err != nil {
		return ExportChunk{}, err
	}
	out := ExportChunk{ContentType: gobdContentType, Filename: gobdFilename(year)}
	if cursor != "" {
		return s.gobdPiece(ctx, tenant, cursor, out)
	}
	if _, err := s.store.DeleteExportsBefore(ctx, s.now().Add(-blobTTL)); err != nil {
		return ExportChunk{}, errs.Wrap("drop expired exports", err)
	}
	ten, start, err := s.gobdYear(ctx, year)
	if err != nil {
		return ExportChunk{}, err
	}
	id := uuid.NewString()
	w := &pieceWriter{ctx: ctx, store: s.store, tenant: tenant, id: id, size: s.export.blobSize(), keepFirst: true}
	err = s.writeGoBD(ctx, w, tenant, ten, start, nil)
	if err == nil {
		err = w.Close()
	}
	if err != nil {
		if w.seq > 1 {
			_ = s.store.DeleteExport(context.WithoutCancel(ctx), tenant, id)
		}
		return ExportChunk{}, err
	}
	out.Data = w.first
	if w.seq > 1 {
		out.Next = id + ":1"
	}
	return out, nil
}

func gobdFilename(year string) string { return "gobd-export-" + year + ".zip" }

// checkGoBDYear checks the form of a GoBD export's year.
func checkGoBDYear(year string) error {
	y, err := strconv.Atoi(year)
	if !yearRe.MatchString(year) || err != nil || y < MinYear || y > MaxYear {
		return errs.Invalid("year must be a fiscal year YYYY", errs.Field("year", fmt.Sprintf("required, YYYY from %d to %d", MinYear, MaxYear)))
	}
	return nil
}

// gobdYear checks a GoBD export's year against the caller's tenant and
// returns the tenant and the first day of the fiscal year.
func (s *Service) gobdYear(ctx context.Context, year string) (identityv1.Tenant, time.Time, error) {
	if err := checkGoBDYear(year); err != nil {
		return identityv1.Tenant{}, time.Time{}, err
	}
	y, _ := strconv.Atoi(year)
	ten, err := s.tenants.Tenant(ctx)
	if err != nil {
		return ten, time.Time{}, errs.Wrap("tenant", err)
	}
	// Fiscal year y is named by the calendar year it ends in (fiscal.go).
	first, _ := fiscalSpan(y, ten.FiscalYearStartMonth)
	start, _ := time.Parse("2006-01", first)
	if start.After(s.now()) {
		return ten, time.Time{}, errs.Invalid("the fiscal year has not begun", errs.Field("year", "fiscal year "+year+" begins "+start.Format(time.DateOnly)))
	}
	if s.export.verifier == nil {
		return ten, time.Time{}, fmt.Errorf("reporting: GoBD export: no chain verifier (SetChainVerifier)")
	}
	return ten, start, nil
}

// gobdPiece answers a later chunk: the stored piece the cursor names.
func (s *Service) gobdPiece(ctx context.Context, tenant, cursor string, out ExportChunk) (ExportChunk, error) {
	id, seqText, _ := strings.Cut(cursor, ":")
	seq, err := strconv.Atoi(seqText)
	if uuid.Validate(id) != nil || err != nil || seq < 1 {
		return ExportChunk{}, errs.Invalid("malformed export cursor", errs.Field("cursor", "not a cursor of this export"))
	}
	data, last, err := s.store.ExportBlob(ctx, tenant, id, seq)
	if errs.Is(err, errs.NotFound) {
		return ExportChunk{}, errExportGone
	}
	if err != nil {
		return ExportChunk{}, errs.Wrap("export piece", err)
	}
	out.Data = data
	if !last {
		out.Next = id + ":" + strconv.Itoa(seq+1)
	} else if err := s.store.DeleteExport(ctx, tenant, id); err != nil {
		return ExportChunk{}, errs.Wrap("drop finished export", err)
	}
	return out, nil
}

// writeGoBD writes the archive of the fiscal year starting at start to w;
// progress, if not nil, learns the journal rows written after each page.
func (s *Service) writeGoBD(ctx context.Context, w io.Writer, tenant string, ten identityv1.Tenant, start time.Time, progress func(rows int64) error) error {
	end := start.AddDate(1, 0, -1)
	now := s.now()
	chain, err := s.export.verifier.Verify(ctx)
	if err != nil {
		return errs.Wrap("verify journal chain", err)
	}
	checkpoints, err := s.export.verifier.Checkpoints(ctx)
	if err != nil {
		return errs.Wrap("chain checkpoints", err)
	}
	accounts, err := s.ledger.Accounts(ctx)
	if err != nil {
		return errs.Wrap("accounts", err)
	}
	codes, err := s.ledger.TaxCodes(ctx)
	if err != nil {
		return errs.Wrap("tax codes", err)
	}

	zw := zip.NewWriter(w)
	zw.RegisterCompressor(zip.Deflate, func(out io.Writer) (io.WriteCloser, error) {
		return flate.NewWriter(out, flate.BestSpeed)
	})
	create := func(name string) (io.Writer, error) {
		return zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate, Modified: now})
	}
	// table writes a CSV table: the column names, then the records.
	table := func(t *gobdTable, records func(*csvOut) error) error {
		f, err := create(t.url)
		if err != nil {
			return err
		}
		c := &csvOut{w: f}
		c.header(t)
		if err := records(c); err != nil {
			return err
		}
		return c.flush()
	}
	for _, f := range []struct {
		name string
		data []byte
	}{{"index.xml", gobdIndex(ten, start, end, now)}, {gdpduDTDName, gdpduDTD}} {
		w, err := create(f.name)
		if err == nil {
			_, err = w.Write(f.data)
		}
		if err != nil {
			return err
		}
	}
	var rows, first, last int64
	for _, t := range []struct {
		table   *gobdTable
		records func(*csvOut) error
	}{
		{&gobdAccounts, eachRecord(accounts, func(c *csvOut, a *Account) *csvOut {
			return c.text(a.Number).text(a.Name).text(a.Type).text(a.Category).text(a.ReportGroup)
		})},
		{&gobdTaxCodes, eachRecord(codes, func(c *csvOut, t *TaxCode) *csvOut {
			return c.text(t.Code).text(t.Label).text(t.Kind).amount(t.Rate).text(t.DATEVKey)
		})},
		{&gobdJournal, func(c *csvOut) error {
			if chain.Events == 0 {
				return nil
			}
			req := ledgerv1.JournalFeedRequest{TenantID: tenant, Limit: s.export.pageSize(), From: start.Format(time.DateOnly), To: end.Format(time.DateOnly)}
			return s.feedPages(ctx, req, chain.Events, func(lines []ledgerv1.JournalLine) error {
				for i := range lines {
					l := &lines[i]
					err := c.raw(strconv.FormatInt(l.JournalNumber, 10)).text(l.ID).text(l.IntentID).date(l.BookingDate).text(l.Period).
						text(l.AccountDebit).text(l.AccountCredit).amount(l.Amount).text(deref(l.TaxCode)).text(l.Description).
						text(deref(l.ExternalReference)).text(deref(l.DocumentID)).text(l.Source).text(l.CapturedAt.UTC().Format(time.RFC3339Nano)).
						end()
					if err != nil {
						return err
					}
					if rows == 0 {
						first = l.JournalNumber
					}
					rows, last = rows+1, l.JournalNumber
				}
				if progress != nil {
					return progress(rows)
				}
				return nil
			})
		}},
		{&gobdChain, func(c *csvOut) error {
			ok, broken := "nein", ""
			if chain.OK {
				ok = "ja"
			}
			if chain.FirstBroken != nil {
				broken = strconv.FormatInt(*chain.FirstBroken, 10)
			}
			return c.text(now.UTC().Format(time.RFC3339)).text(ok).raw(strconv.FormatInt(chain.Events, 10)).text(chain.HeadHash).
				raw(broken).text(chain.Reason).date(start.Format(time.DateOnly)).date(end.Format(time.DateOnly)).
				raw(strconv.FormatInt(rows, 10)).raw(optional(first)).raw(optional(last)).end()
		}},
		{&gobdCheckpoints, func(c *csvOut) error {
			for _, cp := range checkpoints {
				if cp.JournalNumber > chain.Events {
					continue // signed after the verification
				}
				ok := "nein"
				if cp.SignatureOK {
					ok = "ja"
				}
				err := c.raw(strconv.FormatInt(cp.JournalNumber, 10)).text(cp.Hash).text(cp.SignedAt.UTC().Format(time.RFC3339Nano)).
					text(cp.Reason).text(tenant).text(cp.KeyID).text(cp.PublicKey).text(cp.Signature).text(ok).end()
				if err != nil {
					return err
				}
			}
			return nil
		}},
	} {
		if err := table(t.table, t.records); err != nil {
			return err
		}
	}
	return zw.Close()
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func optional(n int64) string {
	if n == 0 {
		return ""
	}
	return strconv.FormatInt(n, 10)
}

// csvOut writes the CSV tables: ';' between fields, CRLF after each record,
// text in double quotes with inner quotes doubled and line breaks and other
// control characters as spaces, numbers with a decimal comma, dates
// DD.MM.YYYY, UTF-8. It buffers up to 64 KiB.
type csvOut struct {
	w   io.Writer
	b   []byte
	sep bool
}

func (c *csvOut) next() {
	if c.sep {
		c.b = append(c.b, ';')
	}
	c.sep = true
}

func (c *csvOut) raw(s string) *csvOut {
	c.next()
	c.b = append(c.b, s...)
	return c
}

func (c *csvOut) text(s string) *csvOut {
	c.next()
	c.b = append(c.b, '"')
	for i := 0; i < len(s); i++ {
		switch ch := s[i]; {
		case ch == '"':
			c.b = append(c.b, '"', '"')
		case ch < ' ' || ch == 0x7f:
			c.b = append(c.b, ' ')
		default:
			c.b = append(c.b, ch)
		}
	}
	c.b = append(c.b, '"')
	return c
}

// amount writes a decimal with a comma and two places.
func (c *csvOut) amount(s string) *csvOut {
	if s == "" {
		return c.raw("")
	}
	a, negative := datevAmount(s)
	if negative {
		a = "-" + a
	}
	return c.raw(a)
}

// date writes a YYYY-MM-DD date as DD.MM.YYYY.
func (c *csvOut) date(s string) *csvOut {
	if len(s) != 10 {
		return c.raw("")
	}
	return c.raw(s[8:10] + "." + s[5:7] + "." + s[0:4])
}

// header writes the column names as the first record.
func (c *csvOut) header(t *gobdTable) {
	if t.key != nil {
		c.text(t.key.name)
	}
	for _, col := range t.cols {
		c.text(col.name)
	}
	c.b = append(c.b, '\r', '\n')
	c.sep = false
}

// end finishes a record.
func (c *csvOut) end() error {
	c.b = append(c.b, '\r', '\n')
	c.sep = false
	if len(c.b) >= 64<<10 {
		return c.flush()
	}
	return nil
}

func (c *csvOut) flush() error {
	_, err := c.w.Write(c.b)
	c.b = c.b[:0]
	return err
}

// eachRecord writes one record per item.
func eachRecord[T any](items []T, record func(*csvOut, *T) *csvOut) func(*csvOut) error {
	return func(c *csvOut) error {
		for i := range items {
			if err := record(c, &items[i]).end(); err != nil {
				return err
			}
		}
		return nil
	}
}

// gobdIndex returns index.xml: the tables in the GDPdU description format
// (gdpdu-01-09-2004.dtd).
func gobdIndex(ten identityv1.Tenant, start, end, now time.Time) []byte {
	var b bytes.Buffer
	el := func(name, text string) {
		b.WriteString("<" + name + ">")
		_ = xml.EscapeText(&b, []byte(text))
		b.WriteString("</" + name + ">")
	}
	const day = "02.01.2006"
	b.WriteString(xml.Header)
	b.WriteString(`<!DOCTYPE DataSet SYSTEM "` + gdpduDTDName + `">` + "\n")
	b.WriteString("<DataSet>\n<Version>1.0</Version>\n<DataSupplier>")
	el("Name", ten.CompanyName)
	el("Location", strings.TrimSpace(strings.Join(nonEmpty(ten.Address.Street, strings.TrimSpace(ten.Address.Zip+" "+ten.Address.City), ten.Address.Country), ", ")))
	el("Comment", "GoBD-Datenträgerüberlassung (Z3), Wirtschaftsjahr "+start.Format(day)+" bis "+end.Format(day)+
		", erstellt "+now.UTC().Format(time.RFC3339)+". Zeichensatz UTF-8, erste Zeile jeder Tabelle mit den Spaltennamen.")
	b.WriteString("</DataSupplier>\n<Media>")
	el("Name", "Wirtschaftsjahr "+start.Format(day)+" bis "+end.Format(day))
	b.WriteString("\n")
	for _, t := range gobdTables {
		b.WriteString("<Table>")
		el("URL", t.url)
		el("Name", t.name)
		el("Description", t.desc)
		if t.validity {
			b.WriteString("<Validity><Range>")
			el("From", start.Format(day))
			el("To", end.Format(day))
			b.WriteString("</Range><Format>DD.MM.YYYY</Format></Validity>")
		}
		b.WriteString("<UTF8/><DecimalSymbol>,</DecimalSymbol><DigitGroupingSymbol>.</DigitGroupingSymbol>")
		b.WriteString("<Range><From>2</From></Range>")
		b.WriteString("<VariableLength><ColumnDelimiter>;</ColumnDelimiter><RecordDelimiter>&#13;&#10;</RecordDelimiter><TextEncapsulator>\"</TextEncapsulator>\n")
		column := func(tag string, c gobdColumn) {
			b.WriteString("<" + tag + ">")
			el("Name", c.name)
			el("Description", c.desc)
			switch c.typ {
			case gobdText:
				b.WriteString("<AlphaNumeric/>")
			case gobdInt:
				b.WriteString("<Numeric/>")
			case gobdAmount:
				b.WriteString("<Numeric><Accuracy>2</Accuracy></Numeric>")
			case gobdDate:
				b.WriteString("<Date><Format>DD.MM.YYYY</Format></Date>")
			}
			b.WriteString("</" + tag + ">\n")
		}
		if t.key != nil {
			column("VariablePrimaryKey", *t.key)
		}
		for _, c := range t.cols {
			column("VariableColumn", c)
		}
		for _, fk := range t.fks {
			b.WriteString("<ForeignKey>")
			el("Name", fk.column)
			el("References", fk.table)
			b.WriteString("<Alias>")
			el("From", fk.column)
			el("To", fk.key)
			b.WriteString("</Alias></ForeignKey>\n")
		}
		b.WriteString("</VariableLength></Table>\n")
	}
	b.WriteString("</Media>\n</DataSet>\n")
	return b.Bytes()
}

func nonEmpty(parts ...string) []string {
	out := parts[:0]
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}
