package einvoicetest

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Validator locates the offline EN 16931 / XRechnung validator: env
// EINVOICE_VALIDATOR, else the copy in the repository
// (services/receivables/einvoice/testdata/validator: the official CEN
// EN 16931 schematron and the XRechnung rules compiled to XSLT, with their
// licences; it runs with xmllint and Saxon-HE, which `make tools`
// installs). It fails the test when it is missing: a validator that
// silently does not run would let broken invoices through.
func Validator(t testing.TB) string {
	t.Helper()
	path := os.Getenv("EINVOICE_VALIDATOR")
	if path == "" {
		root, err := repoRoot()
		if err != nil {
			t.Fatalf("locate repository root: %v", err)
		}
		path = filepath.Join(root, "services", "receivables", "einvoice", "testdata", "validator", "validate")
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("e-invoice validator not found at %s (set EINVOICE_VALIDATOR): %v", path, err)
	}
	return path
}

func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.work above the working directory")
		}
		dir = parent
	}
}

// RunValidator validates files in one run of the validator (a JVM start per
// file and rule set is the slow part) and returns the findings per file:
// nil for "ok", else the lines the validator printed about it.
func RunValidator(t testing.TB, xrechnung bool, files ...string) map[string][]string {
	t.Helper()
	args := files
	if xrechnung {
		args = append([]string{"--xrechnung"}, files...)
	}
	var out, stderr bytes.Buffer
	cmd := exec.Command(Validator(t), args...)
	cmd.Stdout, cmd.Stderr = &out, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) {
		// Exit 2: a tool is missing (xmllint, java, Saxon-HE).
		t.Fatalf("validator did not run: %v\n%s%s\ninstall: apt-get install -y libxml2-utils libsaxonhe-java default-jre-headless poppler-utils",
			err, stderr.String(), out.String())
	}
	res := map[string][]string{}
	seen := map[string]bool{}
	var cur string
	for _, line := range strings.Split(out.String(), "\n") {
		switch {
		case strings.HasPrefix(line, "ok   "):
			cur = strings.TrimPrefix(line, "ok   ")
			seen[cur] = true
		case strings.HasPrefix(line, "FAIL "):
			rest := strings.TrimPrefix(line, "FAIL ")
			cur = rest[:strings.Index(rest, ": ")]
			seen[cur] = true
			res[cur] = append(res[cur], rest[len(cur)+2:])
		case strings.HasPrefix(line, " ") && cur != "":
			// The validator indents each failed rule (its sed squeezes the
			// indent to one space).
			res[cur] = append(res[cur], strings.TrimSpace(line))
		}
	}
	for _, f := range files {
		if !seen[f] {
			t.Fatalf("validator said nothing about %s:\n%s", f, out.String())
		}
	}
	return res
}
