package einvoice_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ledgerplatform/ledger/services/receivables/einvoice"
	"github.com/ledgerplatform/ledger/services/receivables/einvoice/einvoicetest"
)

// TestValidatorAcceptsEverySample runs the official EN 16931 schematron
// (and the XRechnung CIUS rules for XRechnung documents) on the XML of every
// sample: no fatal finding is allowed.
func TestValidatorAcceptsEverySample(t *testing.T) {
	dir := t.TempDir()
	if keep := os.Getenv("EINVOICE_KEEP"); keep != "" {
		dir = keep
	}
	var en, xr []string
	for _, s := range einvoicetest.Samples() {
		xml, err := einvoice.CII(s.Doc)
		if err != nil {
			t.Fatalf("%s: CII: %v", s.Name, err)
		}
		f := filepath.Join(dir, s.Name+".xml")
		if err := os.WriteFile(f, xml, 0o644); err != nil {
			t.Fatal(err)
		}
		if s.Doc.Profile == einvoice.ProfileXRechnung {
			xr = append(xr, f)
		} else {
			en = append(en, f)
		}
	}
	if len(xr) == 0 || len(en) == 0 {
		t.Fatalf("samples cover too little: %d EN 16931, %d XRechnung", len(en), len(xr))
	}
	for _, run := range []struct {
		xrechnung bool
		files     []string
	}{{false, en}, {true, xr}} {
		for f, findings := range einvoicetest.RunValidator(t, run.xrechnung, run.files...) {
			t.Errorf("%s (xrechnung=%v) rejected:\n  %s", filepath.Base(f), run.xrechnung, strings.Join(findings, "\n  "))
		}
	}
}

// TestValidatorRejectsBrokenInvoice proves the validator run above can
// fail: a tax total that does not add up must be reported as fatal.
func TestValidatorRejectsBrokenInvoice(t *testing.T) {
	xml, err := einvoice.CII(einvoicetest.Invoice19())
	if err != nil {
		t.Fatal(err)
	}
	broken := bytes.Replace(xml, []byte("<ram:GrandTotalAmount>"), []byte("<ram:GrandTotalAmount>1"), 1)
	f := filepath.Join(t.TempDir(), "broken.xml")
	if err := os.WriteFile(f, broken, 0o644); err != nil {
		t.Fatal(err)
	}
	findings := einvoicetest.RunValidator(t, false, f)[f]
	if !strings.Contains(strings.Join(findings, "\n"), "BR-CO-15") {
		t.Fatalf("expected BR-CO-15 (grand total = basis + VAT) among the findings, got %q", findings)
	}
}
