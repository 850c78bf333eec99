package einvoicein

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	"golang.org/x/text/encoding/ianaindex"
)

// node is one element of the document, named by its local name.
type node struct {
	name  string
	attrs []xml.Attr // local names
	text  string     // the element's own character data, trimmed
	kids  []*node
}

// parseTree reads data into a tree of elements, refusing DOCTYPEs and
// anything nested deeper than MaxDepth.
func parseTree(data []byte) (*node, error) {
	d := xml.NewDecoder(bytes.NewReader(data))
	d.Strict = true
	d.CharsetReader = func(label string, in io.Reader) (io.Reader, error) {
		enc, err := ianaindex.IANA.Encoding(label)
		if err != nil || enc == nil {
			return nil, fmt.Errorf("unknown encoding %q", label)
		}
		return enc.NewDecoder().Reader(in), nil
	}
	var (
		root  *node
		stack []*node
		texts []*strings.Builder
		count int
	)
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, refuse(ErrNotXML, "file", "%v", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if root != nil && len(stack) == 0 {
				return nil, refuse(ErrNotXML, "file", "more than one root element")
			}
			if len(stack) >= MaxDepth {
				return nil, refuse(ErrTooDeep, "file", "elements nested deeper than %d", MaxDepth)
			}
			if count++; count > maxElements {
				return nil, refuse(ErrTooDeep, "file", "more than %d elements", maxElements)
			}
			n := &node{name: t.Name.Local}
			for _, a := range t.Attr {
				n.attrs = append(n.attrs, xml.Attr{Name: xml.Name{Local: a.Name.Local}, Value: a.Value})
			}
			if len(stack) == 0 {
				root = n
			} else {
				p := stack[len(stack)-1]
				p.kids = append(p.kids, n)
			}
			stack = append(stack, n)
			texts = append(texts, &strings.Builder{})
		case xml.EndElement:
			n := stack[len(stack)-1]
			n.text = strings.TrimSpace(texts[len(texts)-1].String())
			stack, texts = stack[:len(stack)-1], texts[:len(texts)-1]
		case xml.CharData:
			if len(texts) > 0 {
				texts[len(texts)-1].Write(t)
			} else if len(bytes.TrimSpace(t)) > 0 {
				return nil, refuse(ErrNotXML, "file", "text outside the root element")
			}
		case xml.Directive:
			if bytes.HasPrefix(bytes.TrimSpace(t), []byte("DOCTYPE")) {
				return nil, refuse(ErrNotXML, "file", "a DOCTYPE is not allowed in an e-invoice")
			}
		}
	}
	if root == nil {
		return nil, refuse(ErrNotXML, "file", "no root element")
	}
	return root, nil
}

// child is the first child named name; nil-safe.
func (n *node) child(name string) *node {
	if n == nil {
		return nil
	}
	for _, k := range n.kids {
		if k.name == name {
			return k
		}
	}
	return nil
}

// all is every child named name.
func (n *node) all(name string) []*node {
	if n == nil {
		return nil
	}
	var out []*node
	for _, k := range n.kids {
		if k.name == name {
			out = append(out, k)
		}
	}
	return out
}

// at follows a path of child names.
func (n *node) at(path ...string) *node {
	for _, p := range path {
		n = n.child(p)
	}
	return n
}

// str is the text at path, "" when absent.
func (n *node) str(path ...string) string {
	if m := n.at(path...); m != nil {
		return m.text
	}
	return ""
}

func (n *node) attr(name string) string {
	if n == nil {
		return ""
	}
	for _, a := range n.attrs {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

// numberRE is the xs:decimal lexical form: no exponent, no thousands
// separators, no decimal comma.
var numberRE = regexp.MustCompile(`^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)$`)

// num parses the number at n (named field in errors); absent is zero, ok
// false.
func num(n *node, field string) (decimal.Decimal, bool, error) {
	if n == nil {
		return decimal.Decimal{}, false, nil
	}
	if n.text == "" {
		return decimal.Decimal{}, false, refuse(ErrMalformedNumber, field, "%s is empty", field)
	}
	if len(n.text) > 40 || !numberRE.MatchString(n.text) {
		return decimal.Decimal{}, false, refuse(ErrMalformedNumber, field, "%s is %q", field, clip(n.text))
	}
	d, err := decimal.NewFromString(n.text)
	if err != nil {
		return decimal.Decimal{}, false, refuse(ErrMalformedNumber, field, "%s is %q", field, clip(n.text))
	}
	return d, true, nil
}

// numbers collects the parse of several numbers, keeping the first error.
type numbers struct{ err error }

// opt is the number at n, zero when absent.
func (p *numbers) opt(n *node, field string) decimal.Decimal {
	d, _, err := num(n, field)
	if err != nil && p.err == nil {
		p.err = err
	}
	return d
}

// req is the number at n, which must be present.
func (p *numbers) req(n *node, field string) decimal.Decimal {
	d, ok, err := num(n, field)
	if p.err != nil {
		return d
	}
	if err != nil {
		p.err = err
	} else if !ok {
		p.err = refuse(ErrAmountsMissing, field, "%s is missing", field)
	}
	return d
}

// dates collects date parses like numbers.
type dates struct{ err error }

// cii reads a CII date: a udt:DateTimeString child with format 102
// (CCYYMMDD) or 610 (CCYYMM, the first of the month); zero when absent.
func (p *dates) cii(n *node, field string) time.Time {
	s := n.child("DateTimeString")
	if s == nil {
		// FormattedIssueDateTime uses qdt:DateTimeString, same local name;
		// a date element with text directly is tolerated as CCYYMMDD.
		if n == nil || n.text == "" {
			return time.Time{}
		}
		s = n
	}
	layout := "20060102"
	switch s.attr("format") {
	case "", "102":
	case "610":
		layout = "200601"
	default:
		p.fail(field, "%s has date format %q, want 102", field, clip(s.attr("format")))
		return time.Time{}
	}
	t, err := time.Parse(layout, s.text)
	if err != nil {
		p.fail(field, "%s is %q, want %s", field, clip(s.text), map[string]string{"20060102": "CCYYMMDD", "200601": "CCYYMM"}[layout])
		return time.Time{}
	}
	return t
}

// ubl reads a UBL xs:date: YYYY-MM-DD, optionally with a time zone
// (Z, +hh:mm, -hh:mm), which does not change the calendar day meant.
func (p *dates) ubl(n *node, field string) time.Time {
	if n == nil {
		return time.Time{}
	}
	s := n.text
	if len(s) > 10 {
		tz := s[10:]
		if tz != "Z" && !(len(tz) == 6 && (tz[0] == '+' || tz[0] == '-') && tz[3] == ':') {
			p.fail(field, "%s is %q, want YYYY-MM-DD", field, clip(s))
			return time.Time{}
		}
		s = s[:10]
	}
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		p.fail(field, "%s is %q, want YYYY-MM-DD", field, clip(n.text))
		return time.Time{}
	}
	return t
}

func (p *dates) fail(field, format string, args ...any) {
	if p.err == nil {
		p.err = refuse(ErrMalformedDate, field, format, args...)
	}
}

// clip shortens text quoted in an error message.
func clip(s string) string {
	if r := []rune(s); len(r) > 40 {
		return string(r[:40]) + "…"
	}
	return s
}

// normIBAN removes the spaces of the printed form and upper-cases.
func normIBAN(s string) string {
	return strings.ToUpper(strings.Join(strings.Fields(s), ""))
}

// firstErr is the first non-nil error.
func firstErr(es ...error) error {
	for _, e := range es {
		if e != nil {
			return e
		}
	}
	return nil
}
