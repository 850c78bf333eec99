package mailin

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

type got struct {
	Name, Type, Start string
	Size              int
}

func walkFile(t *testing.T, name string) (Envelope, []got) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []got
	env, err := Walk(f, func(_ Envelope, a Attachment) error {
		b, err := io.ReadAll(a.Body)
		if err != nil {
			return err
		}
		out = append(out, got{Name: a.FileName, Type: a.ContentType, Start: string(b[:min(len(b), 8)]), Size: len(b)})
		return nil
	})
	if err != nil {
		t.Fatalf("Walk(%s): %v", name, err)
	}
	return env, out
}

func TestWalk(t *testing.T) {
	tests := []struct {
		file string
		env  Envelope
		want []got
	}{
		{"outlook.eml", Envelope{From: "juergen.mueller@lieferant.example", Subject: "Rechnung für Oktober"},
			[]got{{Name: "Rechnung Müller 2026-10.pdf", Type: "application/pdf", Start: "%PDF-1.4", Size: 73}}},
		{"thunderbird.eml", Envelope{From: "buchhaltung@lieferant.example", Subject: "Rechnung 2026-0815"},
			[]got{
				{Name: "Rechnung Müller.pdf", Type: "application/pdf", Start: "%PDF-1.7", Size: 70},
				{Name: "scan.pdf", Type: "application/octet-stream", Start: "%PDF-1.4", Size: 73},
			}},
		{"gmail-forward.eml", Envelope{From: "chef@kunde.example", Subject: "Fwd: Ihre Rechnung"},
			[]got{
				{Name: "Rechnung Ölüber.pdf", Type: "application/pdf", Start: "%PDF-1.7", Size: 70},
				{Name: "xrechnung.xml", Type: "text/xml", Start: "<?xml ve", Size: 174},
			}},
		{"plain.eml", Envelope{From: "someone@example.com", Subject: "no attachments"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			env, out := walkFile(t, tt.file)
			if d := cmp.Diff(tt.env, env); d != "" {
				t.Errorf("envelope (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tt.want, out); d != "" {
				t.Errorf("attachments (-want +got):\n%s", d)
			}
		})
	}
}

// The XML attachment's bytes are the sent ones, not converted to UTF-8.
func TestWalkKeepsBytes(t *testing.T) {
	f, _ := os.ReadFile(filepath.Join("testdata", "gmail-forward.eml"))
	var xml []byte
	if _, err := Walk(bytes.NewReader(f), func(_ Envelope, a Attachment) error {
		b, err := io.ReadAll(a.Body)
		if strings.HasSuffix(a.FileName, ".xml") {
			xml = b
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(xml, []byte("M\xfcller")) {
		t.Errorf("the ISO-8859-1 ü was converted: %q", xml)
	}
}

func TestWalkMalformed(t *testing.T) {
	for _, msg := range []string{
		"Content-Type: multipart/mixed; boundary=x\r\n\r\n--x\r\nContent-Type: multipart/mixed; boundary=y\r\n\r\n" + strings.Repeat("--y\r\nContent-Type: multipart/mixed; boundary=y\r\n\r\n", 20),
		"no header at all",
	} {
		_, err := Walk(strings.NewReader(msg), func(Envelope, Attachment) error { return nil })
		if !errors.Is(err, ErrMalformed) {
			t.Errorf("Walk(%.40q) = %v, want ErrMalformed", msg, err)
		}
	}
}

func TestFileName(t *testing.T) {
	for in, want := range map[string]string{
		`C:\Users\x\Rechnung.pdf`:              "Rechnung.pdf",
		"../../etc/passwd":                     "passwd",
		"=?UTF-8?Q?M=C3=BCller.pdf?=":          "Müller.pdf",
		"a\x00b\tc.pdf":                        "ab c.pdf",
		strings.Repeat("x", 300) + ".pdf":      strings.Repeat("x", 251) + ".pdf",
		"=?windows-1252?Q?Gr=FC=DFe_=80.pdf?=": "Grüße €.pdf",
	} {
		if got := FileName(in); got != want {
			t.Errorf("FileName(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzWalk feeds messages to the intake's MIME reader: it must neither
// panic nor hand out names the inbox cannot keep, and reading the same
// message twice must hand out the same attachments.
func FuzzWalk(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "*.eml"))
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		sums := func() []string {
			var out []string
			_, err := Walk(bytes.NewReader(msg), func(env Envelope, a Attachment) error {
				if !utf8.ValidString(a.FileName) || utf8.RuneCountInString(a.FileName) > MaxNameRunes || strings.ContainsAny(a.FileName, "/\\\x00") {
					t.Fatalf("bad file name %q", a.FileName)
				}
				if !utf8.ValidString(env.Subject) || utf8.RuneCountInString(env.Subject) > MaxSubjectRunes || len(env.From) > MaxSenderBytes {
					t.Fatalf("bad envelope %+v", env)
				}
				h := sha256.New()
				if _, err := io.Copy(h, io.LimitReader(a.Body, 1<<20)); err != nil {
					return err
				}
				out = append(out, a.FileName+"\x00"+hex.EncodeToString(h.Sum(nil)))
				return nil
			})
			if err != nil {
				out = append(out, "error")
			}
			return out
		}
		if d := cmp.Diff(sums(), sums()); d != "" {
			t.Fatalf("two walks differ:\n%s", d)
		}
	})
}
