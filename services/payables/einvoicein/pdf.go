package einvoicein

import (
	"bytes"
	"errors"
	"path"
	"strings"
	"sync"

	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/filter"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
)

// invoiceFileNames are the names ZUGFeRD 2.x, Factur-X and XRechnung give
// the embedded invoice, in order of preference; compared ignoring case
// (so ZUGFeRD-invoice.xml is zugferd-invoice.xml).
var invoiceFileNames = []string{"factur-x.xml", "zugferd-invoice.xml", "xrechnung.xml"}

// isPDF reports a PDF header within the first KiB, where readers look
// for it, in anything that does not start like XML.
func isPDF(data []byte) bool {
	if t := bytes.TrimLeft(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")), " \t\r\n"); len(t) > 0 && t[0] == '<' {
		return false
	}
	head := data
	if len(head) > 1024 {
		head = head[:1024]
	}
	return bytes.Contains(head, []byte("%PDF-"))
}

var disableConfigDir sync.Once

// embeddedXML finds the invoice XML among the PDF's embedded files: those
// the catalog's AF (associated files, PDF/A-3) array names, then those of
// the EmbeddedFiles name tree.
func embeddedXML(data []byte) (name string, xmlData []byte, err error) {
	// pdfcpu would otherwise create a configuration directory in the
	// user's home on first use; a server needs none of it.
	disableConfigDir.Do(api.DisableConfigDir)
	conf := model.NewDefaultConfiguration()
	conf.ValidationMode = model.ValidationRelaxed
	// Bound what a crafted PDF may make the library allocate.
	conf.Limits.MaxStreamBytes = MaxSize
	conf.Limits.MaxDecodeBytes = 4 * MaxSize
	conf.Limits.MaxObjectCount = 1_000_000
	conf.Limits.MaxXRefEntries = 1_000_000
	conf.Limits.MaxRecursionDepth = MaxDepth

	ctx, err := api.ReadContext(bytes.NewReader(data), conf)
	if err != nil {
		return "", nil, refuse(ErrMalformedPDF, "file", "%v", err)
	}
	xref := ctx.XRefTable

	type spec struct {
		name string
		dict types.Dict
	}
	var specs []spec
	add := func(key string, o types.Object) {
		d, err := xref.DereferenceDict(o)
		if err != nil || d == nil {
			return
		}
		n := key
		for _, k := range []string{"UF", "F"} {
			if v, ok := d.Find(k); ok {
				if s, err := xref.DereferenceStringOrHexLiteral(v, model.V10, nil); err == nil && s != "" {
					n = s
					break
				}
			}
		}
		specs = append(specs, spec{name: n, dict: d})
	}
	root, err := xref.Catalog()
	if err != nil || root == nil {
		return "", nil, refuse(ErrMalformedPDF, "file", "no document catalog")
	}
	if o, ok := root.Find("AF"); ok {
		if arr, err := xref.DereferenceArray(o); err == nil {
			for _, e := range arr {
				add("", e)
			}
		}
	}
	if o, ok := root.Find("Names"); ok {
		if names, err := xref.DereferenceDict(o); err == nil && names != nil {
			if tree, ok := names.Find("EmbeddedFiles"); ok {
				walkNameTree(xref, tree, 0, add)
			}
		}
	}

	for _, want := range invoiceFileNames {
		for _, s := range specs {
			if !strings.EqualFold(path.Base(strings.ReplaceAll(s.name, `\`, "/")), want) {
				continue
			}
			b, err := fileContent(xref, s.dict)
			if err != nil {
				return "", nil, err
			}
			return s.name, b, nil
		}
	}
	var names []string
	for _, s := range specs {
		names = append(names, s.name)
	}
	if len(names) == 0 {
		return "", nil, refuse(ErrNoEmbeddedXML, "file", "the PDF embeds no files")
	}
	return "", nil, refuse(ErrNoEmbeddedXML, "file", "embedded files are %s, want factur-x.xml, zugferd-invoice.xml or xrechnung.xml", clip(strings.Join(names, ", ")))
}

// maxNameTreeEntries bounds the embedded files looked at; a ZUGFeRD PDF
// has one or a few.
const maxNameTreeEntries = 1000

// walkNameTree calls add for each key and value of the name tree at o
// (PDF 32000 7.9.6): a node has Names [key value ...] or Kids. pdfcpu
// fills its own name tree model only while validating the whole file,
// which an incoming PDF need not survive, so the tree is read here.
func walkNameTree(xref *model.XRefTable, o types.Object, depth int, add func(string, types.Object)) {
	if depth > 16 {
		return
	}
	d, err := xref.DereferenceDict(o)
	if err != nil || d == nil {
		return
	}
	if no, ok := d.Find("Names"); ok {
		if arr, err := xref.DereferenceArray(no); err == nil {
			for i := 0; i+1 < len(arr) && i < 2*maxNameTreeEntries; i += 2 {
				key, _ := xref.DereferenceStringOrHexLiteral(arr[i], model.V10, nil)
				add(key, arr[i+1])
			}
		}
	}
	if ko, ok := d.Find("Kids"); ok {
		if arr, err := xref.DereferenceArray(ko); err == nil {
			for i, k := range arr {
				if i >= maxNameTreeEntries {
					break
				}
				walkNameTree(xref, k, depth+1, add)
			}
		}
	}
}

// fileContent decodes the embedded file stream of a file specification
// (EF/F, else EF/UF), refusing more than MaxSize bytes.
func fileContent(xref *model.XRefTable, spec types.Dict) ([]byte, error) {
	o, ok := spec.Find("EF")
	if !ok {
		return nil, refuse(ErrMalformedPDF, "file", "file specification without embedded stream (EF)")
	}
	ef, err := xref.DereferenceDict(o)
	if err != nil || ef == nil {
		return nil, refuse(ErrMalformedPDF, "file", "unreadable EF dictionary")
	}
	so, ok := ef.Find("F")
	if !ok {
		so, ok = ef.Find("UF")
	}
	if !ok {
		return nil, refuse(ErrMalformedPDF, "file", "EF dictionary without stream")
	}
	sd, _, err := xref.DereferenceStreamDict(so)
	if err != nil || sd == nil {
		return nil, refuse(ErrMalformedPDF, "file", "unreadable embedded file stream")
	}
	if err := sd.DecodeWithLimit(MaxSize); err != nil {
		if errors.Is(err, filter.ErrDecodeLimitExceeded) {
			// A few KB of deflate can expand to gigabytes.
			return nil, refuse(ErrTooLarge, "file", "the embedded invoice decompresses to more than 10 MB")
		}
		return nil, refuse(ErrMalformedPDF, "file", "embedded file: %v", err)
	}
	if len(sd.Content) > MaxSize {
		return nil, refuse(ErrTooLarge, "file", "the embedded invoice")
	}
	return sd.Content, nil
}
