package allinone_test

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"mime"
	"strings"
	"testing"
	"time"
)

// waitExportJob polls an export job until it is done or failed.
func (p *platform) waitExportJob(token, id string) resp {
	p.t.Helper()
	var r resp
	eventually(p.t, 60*time.Second, func() error {
		r = p.must(200, "GET", "/v1/reports/exports/"+id, token, nil)
		if s := r.str("status"); s != "done" && s != "failed" {
			return fmt.Errorf("job %s is %s", id, s)
		}
		return nil
	})
	return r
}

func TestReportsExportJobs(t *testing.T) {
	p, admin, _ := setup(t, nil, "Export Jobs GmbH")
	w, rk := p.apiKey(admin, "journal:write"), p.apiKey(admin, "auswertungen:read")
	p.must(200, "PATCH", "/v1/tenant", admin, map[string]any{"datev_consultant_number": "1234567", "datev_client_number": "42"})

	events := 0
	for i, b := range []map[string]any{
		bookingBody("2025-02-03", "Einlage", bline("1800", "2900", "1000.00")),
		bookingBody("2025-03-10", "Büromaterial", bline("6815", "1800", "119.00", "tax_code", "VSt19")),
		bookingBody("2025-04-01", "Miete April", bline("6310", "1800", "500.00")),
	} {
		posted := p.book(w, b, "Idempotency-Key", fmt.Sprintf("jobs-booking-%d", i))
		events += posted.EventCount
	}
	p.book(w, bookingBody("2026-01-05", "Folgejahr", bline("1800", "2900", "1.00")))

	// Bad input: 400 as for the GET routes; no DATEV numbers would be 422.
	for _, body := range []any{
		map[string]any{"type": "pdf"},
		map[string]any{"type": "datev", "from": "2025-06-01", "to": "2025-05-31"},
		map[string]any{"type": "datev", "from": "2025-01-01"},
		map[string]any{"type": "gobd", "year": "20255"},
	} {
		p.expectError(400, "INVALID_INPUT", "POST", "/v1/reports/exports", rk, body)
	}
	admin2, _ := p.newTenant("Ohne DATEV GmbH")
	p.expectError(422, "UNPROCESSABLE", "POST", "/v1/reports/exports", admin2,
		map[string]any{"type": "datev", "from": "2025-01-01", "to": "2025-12-31"})

	dj := p.must(202, "POST", "/v1/reports/exports", rk, map[string]any{"type": "datev", "from": "2025-01-01", "to": "2025-12-31"}, "Idempotency-Key", "datev-job-1")
	if dj.str("status") != "queued" || dj.Body["rows_done"] != float64(0) || dj.Body["file_url"] != nil || dj.str("id") == "" {
		t.Fatalf("created job: %s", dj.Raw)
	}
	if again := p.must(202, "POST", "/v1/reports/exports", rk, map[string]any{"type": "datev", "from": "2025-01-01", "to": "2025-12-31"}, "Idempotency-Key", "datev-job-1"); again.str("id") != dj.str("id") {
		t.Fatalf("idempotent repeat made job %s, want %s", again.str("id"), dj.str("id"))
	}
	gj := p.must(202, "POST", "/v1/reports/exports", rk, map[string]any{"type": "gobd", "year": "2025"})

	// DATEV: done with every journal event of the range, the file twice.
	id := dj.str("id")
	d := p.waitExportJob(rk, id)
	if d.str("status") != "done" || d.Body["rows_done"] != float64(events) || d.Body["rows_total"] != float64(events) ||
		d.str("file_url") != "/v1/reports/exports/"+id+"/file" {
		t.Fatalf("DATEV job (want %d rows): %s", events, d.Raw)
	}
	for range 2 {
		f := p.must(200, "GET", d.str("file_url"), rk, nil)
		if ct := f.Header.Get("Content-Type"); ct != "text/csv; charset=windows-1252" {
			t.Fatalf("Content-Type %q", ct)
		}
		if _, params, err := mime.ParseMediaType(f.Header.Get("Content-Disposition")); err != nil || params["filename"] != "EXTF_Buchungsstapel_20250101_20251231.csv" {
			t.Fatalf("Content-Disposition %q", f.Header.Get("Content-Disposition"))
		}
		lines := strings.Split(strings.TrimSuffix(string(f.Raw), "\r\n"), "\r\n")
		hdr := strings.Split(lines[0], ";")
		if len(hdr) < 12 || hdr[0] != `"EXTF"` || hdr[1] != "700" || hdr[3] != `"Buchungsstapel"` || hdr[10] != "1234567" || hdr[11] != "42" {
			t.Fatalf("DATEV header %q", lines[0])
		}
		if !strings.HasPrefix(lines[1], "Umsatz (ohne Soll/Haben-Kz);") || len(lines) < 3 {
			t.Fatalf("DATEV file: %q", f.Raw)
		}
		if float64(len(f.Raw)) != d.Body["bytes"] {
			t.Fatalf("%d bytes, job says %v", len(f.Raw), d.Body["bytes"])
		}
	}

	// GoBD: the archive with its index.
	g := p.waitExportJob(rk, gj.str("id"))
	if g.str("status") != "done" || g.Body["rows_done"] != float64(events) {
		t.Fatalf("GoBD job (want %d rows): %s", events, g.Raw)
	}
	f := p.must(200, "GET", g.str("file_url"), rk, nil)
	if ct := f.Header.Get("Content-Type"); ct != "application/zip" {
		t.Fatalf("Content-Type %q", ct)
	}
	zr, err := zip.NewReader(bytes.NewReader(f.Raw), int64(len(f.Raw)))
	if err != nil {
		t.Fatalf("no ZIP: %v", err)
	}
	var index gobdIndex
	var journal []byte
	for _, zf := range zr.File {
		rc, err := zf.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		switch zf.Name {
		case "index.xml":
			if err := xml.Unmarshal(b, &index); err != nil {
				t.Fatalf("index.xml: %v", err)
			}
		case "journal.csv":
			journal = b
		}
	}
	if index.DataSupplier.Name != "Export Jobs GmbH" || len(index.Media.Tables) != 5 || index.Media.Tables[0].URL != "journal.csv" || index.Media.Tables[4].URL != "checkpoints.csv" {
		t.Fatalf("index.xml: %+v", index)
	}
	if n := bytes.Count(journal, []byte("\r\n")); n != 1+events {
		t.Fatalf("journal.csv has %d lines, want %d", n, 1+events)
	}

	// Another tenant's jobs do not exist for this one.
	p.expectError(404, "NOT_FOUND", "GET", "/v1/reports/exports/"+id, admin2, nil)
	p.expectError(404, "NOT_FOUND", "GET", "/v1/reports/exports/"+id+"/file", admin2, nil)
	p.expectError(404, "NOT_FOUND", "GET", "/v1/reports/exports/00000000-0000-4000-8000-000000000000", rk, nil)
}
