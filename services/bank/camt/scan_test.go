package camt

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// tokens reads every token of doc with t, joining adjacent text as the
// parser does, and leaving out what the parser ignores (instructions,
// comments, directives).
func tokens(t tokenizer) ([]string, error) {
	var out []string
	text := false
	for {
		tok, err := t.RawToken()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		switch v := tok.(type) {
		case xml.StartElement:
			s := "<" + v.Name.Space + ":" + v.Name.Local
			for _, a := range v.Attr {
				s += " " + a.Name.Space + ":" + a.Name.Local + "=" + a.Value
			}
			out, text = append(out, s), false
		case xml.EndElement:
			out, text = append(out, "/"+v.Name.Space+":"+v.Name.Local), false
		case xml.CharData:
			if text {
				out[len(out)-1] += string(v)
			} else {
				out, text = append(out, "#"+string(v)), true
			}
		}
	}
}

// rawDecoder is encoding/xml as the reference.
func rawDecoder(doc []byte) tokenizer {
	d := xml.NewDecoder(bytes.NewReader(doc))
	d.CharsetReader = charsetReader
	return d
}

// TestScannerAgreesWithEncodingXML: on every camt file of the test data,
// and on documents with entities, CDATA, comments, attributes and line
// ends, the scanner yields the tokens encoding/xml's RawToken yields.
func TestScannerAgreesWithEncodingXML(t *testing.T) {
	docs := map[string][]byte{
		"entities":   []byte(`<?xml version="1.0"?><a x="1 &amp; 2" y='&lt;&#65;&#x42;'>M&#252;ller &amp; S&ouml;hne</a>`),
		"cdata":      []byte("<a><![CDATA[<b>&amp;</b>]]>tail</a>"),
		"comment":    []byte("<a><!-- note --><b/>x<!---->y</a>"),
		"line ends":  []byte("<a>one\r\ntwo\rthree\n</a>"),
		"prefixes":   []byte(`<d:Document xmlns:d="urn:x"><d:Amt Ccy="EUR">1.00</d:Amt></d:Document>`),
		"gt in attr": []byte(`<a b="x>y">z</a>`),
		"spaces":     []byte("<a  b = \"1\"\n c='2' ></a >"),
	}
	files, _ := filepath.Glob("testdata/*.xml")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs[f] = b
	}
	for name, doc := range docs {
		want, werr := tokens(rawDecoder(doc))
		// Parse hands the scanner text already decoded from the declared
		// encoding (an ISO-8859-1 file), as encoding/xml decodes it itself.
		text := doc
		if label := declaredEncoding(doc); label != "" {
			r, err := charsetReader(label, bytes.NewReader(doc))
			if err != nil {
				t.Fatal(err)
			}
			if text, err = io.ReadAll(r); err != nil {
				t.Fatal(err)
			}
		}
		got, gerr := tokens(newScanner(bytes.NewReader(text)))
		if (werr == nil) != (gerr == nil) {
			t.Errorf("%s: encoding/xml error %v, scanner error %v", name, werr, gerr)
			continue
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s: tokens differ (-encoding/xml +scanner)\n%s", name, d)
		}
	}
}

// FuzzScanner: the scanner never panics, and what it reads without error
// encoding/xml reads the same.
func FuzzScanner(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.xml")
	for _, file := range files {
		if b, err := os.ReadFile(file); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`<a x="&amp;">&#0;<![CDATA[x]]><!-- - --></a>`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		if len(doc) > 1<<16 || bytes.Contains(doc, []byte("encoding")) {
			return
		}
		got, gerr := tokens(newScanner(bytes.NewReader(doc)))
		if gerr != nil {
			return
		}
		want, werr := tokens(rawDecoder(doc))
		if werr != nil {
			// The scanner is allowed to be laxer only where the parser
			// checks again (end tags against start tags).
			return
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Fatalf("tokens differ (-encoding/xml +scanner)\n%s", d)
		}
	})
}

// BenchmarkTokenizers compares the two on the generated statement.
func BenchmarkTokenizers(b *testing.B) {
	doc := bigStatement(10000)
	for _, c := range []struct {
		name string
		new  func() tokenizer
	}{
		{"scanner", func() tokenizer { return newScanner(bytes.NewReader(doc)) }},
		{"encoding-xml", func() tokenizer { return rawDecoder(doc) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			for b.Loop() {
				tk := c.new()
				for {
					if _, err := tk.RawToken(); err != nil {
						break
					}
				}
			}
		})
	}
}
