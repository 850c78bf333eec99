package reporting

import (
	"context"
	"slices"
	"strings"
	"time"
	_ "time/tzdata" // DATEV's creation stamp is German local time on any host
	"unicode/utf8"

	"github.com/shopspring/decimal"
	"golang.org/x/text/encoding/charmap"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
)

// The DATEV export is a DATEV-Format (EXTF) Buchungsstapel, format version
// 13 (header version 700, category 21): a header line, the column names and
// one record per booking, in Windows-1252 with ';' between fields and CRLF
// after every line. Text fields are quoted, numbers and dates are not.
//
// Records: a journal event is one record, "S" on Konto = the debit account
// against Gegenkonto = the credit account, with the event's tax code's BU
// key. Events the ledger split off a taxed line are joined again, because
// DATEV computes the tax from the BU key itself: an input or output tax
// event and its net event become one record of the gross amount, whose
// Konto is the account the two share (on its side, S or H) and whose
// Gegenkonto carries the net part; a reverse-charge or intra-EU acquisition
// pair becomes the net record alone, with the expense (the account on the
// side of the input-tax posting) as Gegenkonto.
//
// The export streams: each chunk is one page of the ledger's journal feed,
// and its cursor the last journal number written plus the journal head when
// the download began, so the file is a consistent cut of the journal
// whatever its size, in constant memory.

const (
	datevContentType = "text/csv; charset=windows-1252"
	// maxBelegfeld1 and maxBuchungstext are DATEV's field lengths.
	maxBelegfeld1   = 36
	maxBuchungstext = 60
	maxBezeichnung  = 30
)

// datevColumns are the 125 fields of a Buchungsstapel record, version 13;
// the first 120 are named exactly as in DATEV's own files (with the
// en dashes), the last five were added by versions 12 and 13.
var datevColumns = [...]string{
	"Umsatz (ohne Soll/Haben-Kz)", "Soll/Haben-Kennzeichen", "WKZ Umsatz", "Kurs", "Basisumsatz", "WKZ Basisumsatz",
	"Konto", "Gegenkonto (ohne BU-Schlüssel)", "BU-Schlüssel", "Belegdatum", "Belegfeld 1", "Belegfeld 2", "Skonto",
	"Buchungstext", "Postensperre", "Diverse Adressnummer", "Geschäftspartnerbank", "Sachverhalt", "Zinssperre", "Beleglink",
	"Beleginfo – Art 1", "Beleginfo – Inhalt 1", "Beleginfo – Art 2", "Beleginfo – Inhalt 2",
	"Beleginfo – Art 3", "Beleginfo – Inhalt 3", "Beleginfo – Art 4", "Beleginfo – Inhalt 4",
	"Beleginfo – Art 5", "Beleginfo – Inhalt 5", "Beleginfo – Art 6", "Beleginfo – Inhalt 6",
	"Beleginfo – Art 7", "Beleginfo – Inhalt 7", "Beleginfo – Art 8", "Beleginfo – Inhalt 8",
	"KOST1 – Kostenstelle", "KOST2 – Kostenstelle", "Kost Menge", "EU-Land u. USt-IdNr.", "EU-Steuersatz",
	"Abw. Versteuerungsart", "Sachverhalt L+L", "Funktionsergänzung L+L", "BU 49 Hauptfunktionstyp",
	"BU 49 Hauptfunktionsnummer", "BU 49 Funktionsergänzung",
	"Zusatzinformation – Art 1", "Zusatzinformation – Inhalt 1", "Zusatzinformation – Art 2", "Zusatzinformation – Inhalt 2",
	"Zusatzinformation – Art 3", "Zusatzinformation – Inhalt 3", "Zusatzinformation – Art 4", "Zusatzinformation – Inhalt 4",
	"Zusatzinformation – Art 5", "Zusatzinformation – Inhalt 5", "Zusatzinformation – Art 6", "Zusatzinformation – Inhalt 6",
	"Zusatzinformation – Art 7", "Zusatzinformation – Inhalt 7", "Zusatzinformation – Art 8", "Zusatzinformation – Inhalt 8",
	"Zusatzinformation – Art 9", "Zusatzinformation – Inhalt 9", "Zusatzinformation – Art 10", "Zusatzinformation – Inhalt 10",
	"Zusatzinformation – Art 11", "Zusatzinformation – Inhalt 11", "Zusatzinformation – Art 12", "Zusatzinformation – Inhalt 12",
	"Zusatzinformation – Art 13", "Zusatzinformation – Inhalt 13", "Zusatzinformation – Art 14", "Zusatzinformation – Inhalt 14",
	"Zusatzinformation – Art 15", "Zusatzinformation – Inhalt 15", "Zusatzinformation – Art 16", "Zusatzinformation – Inhalt 16",
	"Zusatzinformation – Art 17", "Zusatzinformation – Inhalt 17", "Zusatzinformation – Art 18", "Zusatzinformation – Inhalt 18",
	"Zusatzinformation – Art 19", "Zusatzinformation – Inhalt 19", "Zusatzinformation – Art 20", "Zusatzinformation – Inhalt 20",
	"Stück", "Gewicht", "Zahlweise", "Forderungsart", "Veranlagungsjahr", "Zugeordnete Fälligkeit", "Skontotyp",
	"Auftragsnummer", "Buchungstyp", "USt-Schlüssel (Anzahlungen)", "EU-Mitgliedstaat (Anzahlungen)",
	"Sachverhalt L+L (Anzahlungen)", "EU-Steuersatz (Anzahlungen)", "Erlöskonto (Anzahlungen)", "Herkunft-Kz", "Leerfeld",
	"KOST-Datum", "SEPA-Mandatsreferenz", "Skontosperre", "Gesellschaftername", "Beteiligtennummer",
	"Identifikationsnummer", "Zeichnernummer", "Postensperre bis", "Bezeichnung", "Kennzeichen", "Festschreibung",
	"Leistungsdatum", "Datum Zuord.", "Fälligkeit", "Generalumkehr", "Steuersatz", "Land",
	"Abrechnungsreferenz", "BVV-Position", "EU-Mitgliedstaat u. UStID (Ursprung)", "EU-Steuersatz (Ursprung)",
	"Abw. Skontokonto",
}

// datevTextColumns are the 0-based indexes of the text fields, written
// quoted even when empty, as DATEV does; the others are numbers and dates.
var datevTextColumns = []int{1, 2, 5, 8, 10, 11, 13, 15, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32,
	33, 34, 35, 36, 37, 39, 41, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67,
	68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 90, 94, 95, 97, 101, 102, 104, 106,
	108, 109, 111, 117, 119, 120, 122}

// The fixed parts of a record: datevColumnLine is the column-name line and
// datevTail the empty fields after Buchungstext (column 14), both already in
// Windows-1252.
var datevColumnLine, datevTail = datevFixedParts()

func datevFixedParts() (cols, tail []byte) {
	text := make(map[int]bool, len(datevTextColumns))
	for _, i := range datevTextColumns {
		text[i] = true
	}
	for i, name := range datevColumns {
		if i > 0 {
			cols = append(cols, ';')
		}
		cols = appendCP1252(cols, name)
		if i > 13 {
			tail = append(tail, ';')
			if text[i] {
				tail = append(tail, `""`...)
			}
		}
	}
	return append(cols, "\r\n"...), tail
}

// DATEVExport returns one chunk of the DATEV Buchungsstapel of the caller's
// bookings dated from..to (YYYY-MM-DD, inclusive, within one fiscal year);
// cursor is "" for the first chunk and the previous chunk's Next after.
func (s *Service) DATEVExport(ctx context.Context, from, to, cursor string) (ExportChunk, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return ExportChunk{}, err
	}
	f, err := parseDay("from", from)
	if err != nil {
		return ExportChunk{}, err
	}
	t, err := parseDay("to", to)
	if err != nil {
		return ExportChunk{}, err
	}
	if t.Before(f) {
		return ExportChunk{}, errs.Invalid("to must not be before from", errs.Field("to", "must not be before from"))
	}
	out := ExportChunk{ContentType: datevContentType,
		Filename: "EXTF_Buchungsstapel_" + f.Format("20060102") + "_" + t.Format("20060102") + ".csv"}
	var cur feedCursor
	var buf []byte
	if cursor == "" {
		if buf, err = s.datevHeader(ctx, tenant, f, t); err != nil {
			return ExportChunk{}, err
		}
	} else if cur, err = parseFeedCursor(cursor); err != nil {
		return ExportChunk{}, err
	}
	keys, err := s.taxKeys(ctx)
	if err != nil {
		return ExportChunk{}, err
	}
	page := max(s.export.pageSize(), 2) // a record may need the next event
	feed, err := s.feed(ctx, ledgerv1.JournalFeedRequest{TenantID: tenant, After: cur.After, Limit: page, From: from, To: to})
	if err != nil {
		return ExportChunk{}, err
	}
	if cursor == "" {
		cur.Head = feed.Head
	}
	lines, done := boundPage(feed.Lines, cur.Head, page)
	buf = slices.Grow(buf, len(lines)*(len(datevTail)+160)) // a record's fixed part plus typical texts
	buf, n := appendDATEVRecords(buf, lines, keys, done)
	out.Data = buf
	if !done {
		out.Next = feedCursor{After: lines[n-1].JournalNumber, Head: cur.Head}.String()
	}
	return out, nil
}

// datevHeader checks what only the first chunk needs (the fiscal year, the
// tenant's DATEV numbers) and returns the header and column lines.
func (s *Service) datevHeader(ctx context.Context, tenant string, from, to time.Time) ([]byte, error) {
	ten, err := s.tenants.Tenant(ctx)
	if err != nil {
		return nil, errs.Wrap("tenant", err)
	}
	fy := fiscalYearStart(from, ten.FiscalYearStartMonth)
	if !fiscalYearStart(to, ten.FiscalYearStartMonth).Equal(fy) {
		return nil, errs.Invalid("from and to must lie in one fiscal year: a DATEV batch belongs to one fiscal year",
			errs.Field("to", "at most "+fy.AddDate(1, 0, -1).Format(time.DateOnly)+", the end of the fiscal year of from"))
	}
	var missing []errs.Detail
	if ten.DATEVConsultantNumber == "" {
		missing = append(missing, errs.Field("datev_consultant_number", "required for the DATEV export; set it with PATCH /v1/tenant"))
	}
	if ten.DATEVClientNumber == "" {
		missing = append(missing, errs.Field("datev_client_number", "required for the DATEV export; set it with PATCH /v1/tenant"))
	}
	if missing != nil {
		return nil, &errs.Error{Code: errs.Unprocessable, Message: "the tenant has no DATEV consultant or client number", Details: missing}
	}
	locked, err := s.allHardLocked(ctx, tenant, from, to, fy)
	if err != nil {
		return nil, err
	}
	return appendDATEVHeader(nil, datevHeader{
		Created: s.now(), Consultant: ten.DATEVConsultantNumber, Client: ten.DATEVClientNumber,
		FiscalYear: fy, From: from, To: to, Locked: locked,
	}), nil
}

// allHardLocked reports whether every month from..to is hard-locked, and
// the fiscal year's adjustment period too if it exists and the batch reaches
// the year's end (its postings are dated then): only then may DATEV mark the
// batch festgeschrieben.
func (s *Service) allHardLocked(ctx context.Context, tenant string, from, to, fyStart time.Time) (bool, error) {
	last := to.Format("2006-01")
	if to.Equal(fyStart.AddDate(1, 0, -1)) {
		last = to.Format("2006") + "-13" // YYYY-13 sorts after YYYY-12
	}
	st, err := s.periods.Statuses(ctx, tenant, from.Format("2006-01"), last)
	if err != nil {
		return false, errs.Wrap("period statuses", err)
	}
	for m := time.Date(from.Year(), from.Month(), 1, 0, 0, 0, 0, time.UTC); !m.After(to); m = m.AddDate(0, 1, 0) {
		if st[m.Format("2006-01")] != ledgerv1.PeriodHardLocked {
			return false, nil
		}
	}
	for _, status := range st {
		if status != ledgerv1.PeriodHardLocked {
			return false, nil
		}
	}
	return true, nil
}

// taxKey is what a record needs of a tax code.
type taxKey struct {
	bu   string
	kind string
	rate decimal.Decimal // zero: the code carries no tax
}

func (s *Service) taxKeys(ctx context.Context) (map[string]taxKey, error) {
	codes, err := s.ledger.TaxCodes(ctx)
	if err != nil {
		return nil, errs.Wrap("tax codes", err)
	}
	m := make(map[string]taxKey, len(codes))
	for _, c := range codes {
		k := taxKey{bu: c.DATEVKey, kind: c.Kind}
		if r, err := decimal.NewFromString(c.Rate); err == nil && c.Kind != "exempt" {
			k.rate = r
		}
		m[c.Code] = k
	}
	return m, nil
}

type datevHeader struct {
	Created            time.Time
	Consultant, Client string
	FiscalYear         time.Time
	From, To           time.Time
	Locked             bool
}

var berlin = mustLocation("Europe/Berlin")

func mustLocation(name string) *time.Location {
	l, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return l
}

// appendDATEVHeader appends the EXTF header line (the 31 fields of header
// version 700) and the column-name line.
func appendDATEVHeader(b []byte, h datevHeader) []byte {
	const day = "20060102"
	created := h.Created.In(berlin).Format("20060102150405.000")
	created = strings.Replace(created, ".", "", 1)
	festschreibung := "0"
	if h.Locked {
		festschreibung = "1"
	}
	name := "Buchungen " + h.From.Format("02.01.06") + "-" + h.To.Format("02.01.06") // ASCII, at most 30
	fields := []string{
		`"EXTF"`, "700", "21", `"Buchungsstapel"`, "13", created, // Kennzeichen, Versionsnummer, Formatkategorie, Formatname, Formatversion, Erzeugt am
		"", `""`, `""`, `""`, // Importiert, Herkunft, Exportiert von, Importiert von
		h.Consultant, h.Client, h.FiscalYear.Format(day), "4", // Berater, Mandant, WJ-Beginn, Sachkontenlänge
		h.From.Format(day), h.To.Format(day), `"` + name[:min(len(name), maxBezeichnung)] + `"`, `""`, // Datum vom, Datum bis, Bezeichnung, Diktatkürzel
		"1", "0", festschreibung, `"EUR"`, // Buchungstyp (Finanzbuchführung), Rechnungslegungszweck, Festschreibung, WKZ
		`""`, `""`, `""`, `""`, `"04"`, // reserviert, Derivatskennzeichen, reserviert, reserviert, SKR
		"", "", `""`, `""`, // Branchenlösungs-ID, reserviert, reserviert, Anwendungsinformation
	}
	b = appendCP1252(b, strings.Join(fields, ";"))
	b = append(b, "\r\n"...)
	return append(b, datevColumnLine...)
}

// appendDATEVRecords appends the records of a page of journal lines and
// returns how many lines they used. Unless final, a last line that may be
// joined with the next event is left for the next page.
func appendDATEVRecords(b []byte, lines []ledgerv1.JournalLine, keys map[string]taxKey, final bool) ([]byte, int) {
	n := 0
	for n < len(lines) {
		l := &lines[n]
		k, taxed := taxKeyOf(l, keys)
		if taxed && n+1 == len(lines) && !final && n > 0 {
			break
		}
		if taxed && n+1 < len(lines) {
			if r, ok := joinTaxPair(l, &lines[n+1], k); ok {
				b = appendDATEVRecord(b, r, l)
				n += 2
				continue
			}
		}
		r := datevRecord{amount: l.Amount, debitSide: true, konto: l.AccountDebit, gegenkonto: l.AccountCredit}
		if l.TaxCode != nil {
			r.bu = keys[*l.TaxCode].bu
		}
		b = appendDATEVRecord(b, r, l)
		n++
	}
	return b, n
}

// taxKeyOf returns the key of l's tax code and whether the code carries tax,
// that is whether the ledger may have split a tax event off l.
func taxKeyOf(l *ledgerv1.JournalLine, keys map[string]taxKey) (taxKey, bool) {
	if l.TaxCode == nil {
		return taxKey{}, false
	}
	k, ok := keys[*l.TaxCode]
	return k, ok && !k.rate.IsZero()
}

// datevRecord is a record before formatting.
type datevRecord struct {
	amount     string // decimal text, '.' as separator
	debitSide  bool   // S (Konto is debited) or H
	konto      string
	gegenkonto string
	bu         string
}

var hundred = decimal.NewFromInt(100)

// joinTaxPair reports whether t is the tax event the ledger split off the
// taxed line whose net event is n, and returns their joint record. The
// ledger writes the pair as consecutive events of one intent with the same
// tax code; the amounts must also be the ledger's split, so two lines
// booked one after the other are never taken for a pair.
func joinTaxPair(n, t *ledgerv1.JournalLine, k taxKey) (datevRecord, bool) {
	if t.IntentID != n.IntentID || t.JournalNumber != n.JournalNumber+1 || t.TaxCode == nil || *t.TaxCode != *n.TaxCode {
		return datevRecord{}, false
	}
	net, err1 := decimal.NewFromString(n.Amount)
	tax, err2 := decimal.NewFromString(t.Amount)
	if err1 != nil || err2 != nil {
		return datevRecord{}, false
	}
	switch k.kind {
	case "input", "output":
		// Net and tax part of a gross amount: they share the account that
		// carries the gross amount, on the same side.
		gross := net.Add(tax)
		if !gross.Mul(hundred).Div(hundred.Add(k.rate)).Round(2).Equal(net) {
			return datevRecord{}, false
		}
		switch {
		case t.AccountDebit == n.AccountDebit && t.AccountCredit != n.AccountCredit:
			return datevRecord{amount: gross.StringFixed(2), debitSide: true, konto: n.AccountDebit, gegenkonto: n.AccountCredit, bu: k.bu}, true
		case t.AccountCredit == n.AccountCredit && t.AccountDebit != n.AccountDebit:
			return datevRecord{amount: gross.StringFixed(2), debitSide: false, konto: n.AccountCredit, gegenkonto: n.AccountDebit, bu: k.bu}, true
		}
	case "reverse_charge", "ic_acquisition":
		// The net amount and a self-assessed tax pair (input tax debited,
		// output tax credited; swapped in a reversal), which DATEV derives
		// from the BU key: the expense is the account on the input-tax side.
		if !net.Mul(k.rate).Div(hundred).Round(2).Equal(tax) ||
			t.AccountDebit == n.AccountDebit || t.AccountCredit == n.AccountCredit {
			return datevRecord{}, false
		}
		if n.Source == "reversal" {
			return datevRecord{amount: n.Amount, debitSide: true, konto: n.AccountDebit, gegenkonto: n.AccountCredit, bu: k.bu}, true
		}
		return datevRecord{amount: n.Amount, debitSide: false, konto: n.AccountCredit, gegenkonto: n.AccountDebit, bu: k.bu}, true
	}
	return datevRecord{}, false
}

// appendDATEVRecord appends one record for the event l.
func appendDATEVRecord(b []byte, r datevRecord, l *ledgerv1.JournalLine) []byte {
	amount, negative := datevAmount(r.amount)
	sh := `"S"`
	if r.debitSide == negative {
		sh = `"H"`
	}
	b = append(b, amount...)
	b = append(b, ';')
	b = append(b, sh...)
	b = append(b, `;"";;;"";`...) // WKZ Umsatz, Kurs, Basisumsatz, WKZ Basisumsatz
	b = append(b, r.konto...)
	b = append(b, ';')
	b = append(b, r.gegenkonto...)
	b = append(b, ';', '"')
	b = append(b, r.bu...)
	b = append(b, '"', ';')
	b = appendTTMM(b, l.BookingDate)
	b = append(b, ';', '"')
	b = append(b, belegfeld1(l)...)
	b = append(b, `";"";;`...) // Belegfeld 2, Skonto
	b = appendText(b, l.Description, maxBuchungstext)
	b = append(b, datevTail...)
	return append(b, '\r', '\n')
}

// datevAmount writes a decimal with a comma and two places, without sign.
func datevAmount(s string) (string, bool) {
	negative := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	whole, frac, _ := strings.Cut(s, ".")
	if whole == "" || len(frac) > 2 || strings.Trim(whole+frac, "0123456789") != "" {
		d, err := decimal.NewFromString(s)
		if err != nil {
			return s, negative
		}
		whole, frac, _ = strings.Cut(d.StringFixed(2), ".")
	}
	return whole + "," + (frac + "00")[:2], negative
}

// appendTTMM appends the Belegdatum TTMM of a YYYY-MM-DD date.
func appendTTMM(b []byte, date string) []byte {
	if len(date) < 10 {
		return b
	}
	return append(append(b, date[8:10]...), date[5:7]...)
}

// belegfeld1 is the event's external reference, or else the start of its
// intent id, reduced to what DATEV accepts there: at most 36 letters,
// digits and $ % & * + - /, umlauts spelt out and anything else a '-'. A
// leading '+' or '-' goes, so no spreadsheet reads it as a formula.
func belegfeld1(l *ledgerv1.JournalLine) string {
	ref := ""
	if l.ExternalReference != nil {
		ref = *l.ExternalReference
	}
	var sb strings.Builder
	for _, r := range ref {
		switch {
		case r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("$%&*+-/", r)):
			sb.WriteRune(r)
		case umlauts[r] != "":
			sb.WriteString(umlauts[r])
		default:
			sb.WriteByte('-')
		}
	}
	out := strings.TrimLeft(sb.String(), "+-")
	if out == "" {
		out = strings.ReplaceAll(l.IntentID, "-", "")
		out = out[:min(8, len(out))]
	}
	return out[:min(maxBelegfeld1, len(out))]
}

var umlauts = map[rune]string{'ä': "ae", 'ö': "oe", 'ü': "ue", 'Ä': "Ae", 'Ö': "Oe", 'Ü': "Ue", 'ß': "ss"}

// appendText appends a text field in Windows-1252: quoted, inner quotes
// doubled, control characters as spaces, at most max characters, and an
// apostrophe before a leading = + - @ so a spreadsheet never takes it for a
// formula.
func appendText(b []byte, s string, max int) []byte {
	b = append(b, '"')
	n := 0
	if s != "" && strings.ContainsRune("=+-@", rune(s[0])) {
		b = append(b, '\'')
		n++
	}
	for _, r := range s {
		if n == max {
			break
		}
		n++
		switch {
		case r == '"':
			b = append(b, '"', '"')
		case r < ' ' || r == 0x7f:
			b = append(b, ' ')
		default:
			b = appendRune1252(b, r)
		}
	}
	return append(b, '"')
}

// appendCP1252 appends s in Windows-1252; characters it lacks become '?'.
func appendCP1252(b []byte, s string) []byte {
	for _, r := range s {
		b = appendRune1252(b, r)
	}
	return b
}

func appendRune1252(b []byte, r rune) []byte {
	if r < utf8.RuneSelf {
		return append(b, byte(r))
	}
	if c, ok := charmap.Windows1252.EncodeRune(r); ok {
		return append(b, c)
	}
	return append(b, '?')
}
