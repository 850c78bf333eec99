// Command winansifont prepares the Windows-1252 (WinAnsi) fonts that
// invoicepdf uses for invoices whose text fits that code page: it cuts the
// DejaVu subsets in assets down to the code page's 219 printable characters
// with fontTools' pyftsubset, then has fpdf's MakeFont write the widths
// (JSON) and the zlib-compressed font program (.z) that fpdf reads without
// parsing the font on every document.
//
// Run from services/receivables/invoicepdf:
//
//	go generate ./...
//
// It needs pyftsubset (Debian: fonttools).
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/go-pdf/fpdf"
	"golang.org/x/text/encoding/charmap"
)

func main() {
	dir := flag.String("dir", "assets", "directory with DejaVuSans.ttf and DejaVuSans-Bold.ttf; the output goes there too")
	flag.Parse()
	if err := run(*dir); err != nil {
		log.Fatal(err)
	}
}

func run(dir string) error {
	tmp, err := os.MkdirTemp("", "winansifont")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	var unicodes []string
	for b := 0x20; b <= 0xff; b++ {
		if r := charmap.Windows1252.DecodeByte(byte(b)); r != '\uFFFD' {
			unicodes = append(unicodes, fmt.Sprintf("U+%04X", r))
		}
	}
	// fpdf's own cp1252 map, so that MakeFont's code page and its
	// translation of text agree.
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/go-pdf/fpdf").Output()
	if err != nil {
		return fmt.Errorf("locate fpdf: %w", err)
	}
	cpMap := filepath.Join(strings.TrimSpace(string(out)), "font", "cp1252.map")

	for _, name := range []string{"DejaVuSans", "DejaVuSans-Bold"} {
		sub := filepath.Join(tmp, name+"-WinAnsi.ttf")
		cmd := exec.Command("pyftsubset", filepath.Join(dir, name+".ttf"),
			"--unicodes="+strings.Join(unicodes, ","), "--output-file="+sub,
			"--layout-features=", "--no-hinting", "--notdef-outline", "--name-IDs=*", "--name-languages=*")
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("pyftsubset %s: %w", name, err)
		}
		if err := fpdf.MakeFont(sub, cpMap, dir, os.Stderr, true); err != nil {
			return fmt.Errorf("MakeFont %s: %w", name, err)
		}
	}
	return nil
}
