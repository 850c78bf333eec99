package invoicepdf

import (
	"bytes"
	"compress/zlib"
	"crypto/md5"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf16"
)

// pdfaInfo is what finish needs besides fpdf's output.
type pdfaInfo struct {
	title, author, subject string
	date                   time.Time
	xml                    []byte
	fileName               string // factur-x.xml or xrechnung.xml
	conformity             string // fx:ConformanceLevel
}

const (
	creator  = "ledgerplatform receivables"
	producer = "ledgerplatform invoicepdf (go-pdf/fpdf)"
	// The PDF/A-3 header: version 1.7 and a comment of bytes above 127,
	// which marks the file as binary (ISO 19005-3, 6.1.2).
	header = "%PDF-1.7\n%\xe2\xe3\xcf\xd3\n"
)

var (
	reStartXref = regexp.MustCompile(`startxref\s+(\d+)\s+%%EOF\s*$`)
	reTrailer   = regexp.MustCompile(`trailer\s*<<\s*/Size (\d+)\s*/Root (\d+) 0 R\s*/Info (\d+) 0 R\s*>>`)
	reXrefHead  = regexp.MustCompile(`^xref\n0 (\d+)\n`)
	reCatalog   = regexp.MustCompile(`^\d+ 0 obj\n<<\n/Type /Catalog\n/Pages 1 0 R\n`)
)

// finish turns fpdf's output into a PDF/A-3b hybrid invoice. fpdf writes its
// objects in order and the document information and catalog dictionaries
// last, just before the cross-reference table; finish keeps every object
// before them byte for byte, writes its own information dictionary and
// catalog under the same object numbers, appends the embedded XML, its file
// specification, the XMP metadata, the ICC profile and the output intent, and
// a new cross-reference table and trailer (with the /ID PDF/A requires).
// fpdf's layout of this part is checked, so a changed fpdf fails loudly
// instead of producing a broken file.
func finish(in []byte, info pdfaInfo) ([]byte, error) {
	m := reStartXref.FindSubmatch(in)
	if m == nil {
		return nil, errors.New("pdfa: no startxref")
	}
	xrefAt, _ := strconv.Atoi(string(m[1]))
	if xrefAt <= 0 || xrefAt >= len(in) {
		return nil, errors.New("pdfa: startxref out of range")
	}
	t := reTrailer.FindSubmatch(in[xrefAt:])
	if t == nil {
		return nil, errors.New("pdfa: unexpected trailer")
	}
	size, _ := strconv.Atoi(string(t[1]))
	root, _ := strconv.Atoi(string(t[2]))
	infoObj, _ := strconv.Atoi(string(t[3]))
	if root != size-1 || infoObj != size-2 {
		return nil, fmt.Errorf("pdfa: info %d and root %d are not the last of %d objects", infoObj, root, size)
	}
	xh := reXrefHead.FindSubmatch(in[xrefAt:])
	if xh == nil || string(xh[1]) != strconv.Itoa(size) {
		return nil, errors.New("pdfa: unexpected xref table")
	}
	entries := in[xrefAt+len(xh[0]):]
	offsets := make([]int, size)
	for i := 0; i < size; i++ {
		if len(entries) < 20*(i+1) {
			return nil, errors.New("pdfa: short xref table")
		}
		e := entries[20*i : 20*i+20]
		off, err := strconv.Atoi(string(e[:10]))
		if err != nil {
			return nil, fmt.Errorf("pdfa: xref entry %d: %w", i, err)
		}
		offsets[i] = off
	}
	infoAt := offsets[infoObj]
	for i := 1; i < infoObj; i++ {
		if offsets[i] >= infoAt {
			return nil, fmt.Errorf("pdfa: object %d follows the info dictionary", i)
		}
	}
	if !reCatalog.Match(in[offsets[root]:]) {
		return nil, errors.New("pdfa: the catalog is not fpdf's")
	}
	oldHeader := bytes.IndexByte(in, '\n') + 1
	if !bytes.HasPrefix(in, []byte("%PDF-1.")) || oldHeader <= 0 {
		return nil, errors.New("pdfa: no PDF header")
	}
	shift := len(header) - oldHeader

	var out bytes.Buffer
	out.Grow(len(in) + len(info.xml) + len(iccSRGB) + 8192)
	out.WriteString(header)
	out.Write(in[oldHeader:infoAt])
	for i := 1; i < infoObj; i++ {
		offsets[i] += shift
	}

	obj := func(n int, body string) {
		if n >= len(offsets) {
			offsets = append(offsets, make([]int, n-len(offsets)+1)...)
		}
		offsets[n] = out.Len()
		fmt.Fprintf(&out, "%d 0 obj\n%s\nendobj\n", n, body)
	}
	stream := func(n int, dict string, data []byte) {
		if n >= len(offsets) {
			offsets = append(offsets, make([]int, n-len(offsets)+1)...)
		}
		offsets[n] = out.Len()
		fmt.Fprintf(&out, "%d 0 obj\n<< %s /Length %d >>\nstream\n", n, dict, len(data))
		out.Write(data)
		out.WriteString("\nendstream\nendobj\n")
	}

	var (
		fileObj   = size
		specObj   = size + 1
		xmpObj    = size + 2
		iccObj    = size + 3
		intentObj = size + 4
	)
	date := pdfDate(info.date)
	obj(infoObj, fmt.Sprintf("<< /Title %s /Author %s /Subject %s /Creator %s /Producer %s /CreationDate %s /ModDate %s >>",
		pdfText(info.title), pdfText(info.author), pdfText(info.subject), pdfText(creator), pdfText(producer),
		pdfText(date), pdfText(date)))
	obj(root, fmt.Sprintf("<< /Type /Catalog /Pages 1 0 R /Lang (de-DE) /Metadata %d 0 R /OutputIntents [%d 0 R] "+
		"/AF [%d 0 R] /Names << /EmbeddedFiles << /Names [%s %d 0 R] >> >> /PageMode /UseAttachments >>",
		xmpObj, intentObj, specObj, pdfText(info.fileName), specObj))

	sum := md5.Sum(info.xml)
	stream(fileObj, fmt.Sprintf("/Type /EmbeddedFile /Subtype /text#2Fxml /Filter /FlateDecode "+
		"/Params << /ModDate %s /Size %d /CheckSum <%s> >>", pdfText(date), len(info.xml), hex.EncodeToString(sum[:])),
		deflate(info.xml))
	// /AFRelationship /Data: the XML is the invoice's data, the PDF its
	// rendering (Factur-X 1.0.07, the default for every profile).
	obj(specObj, fmt.Sprintf("<< /Type /Filespec /F %s /UF %s /Desc %s /AFRelationship /Data /EF << /F %d 0 R /UF %d 0 R >> >>",
		pdfText(info.fileName), pdfText(info.fileName), pdfText("Factur-X/ZUGFeRD invoice data ("+info.conformity+")"),
		fileObj, fileObj))
	// PDF/A forbids a filter on the metadata stream: XMP stays readable to
	// tools that do not parse PDF.
	stream(xmpObj, "/Type /Metadata /Subtype /XML", xmp(info))
	stream(iccObj, "/N 3 /Alternate /DeviceRGB /Filter /FlateDecode", iccDeflated())
	obj(intentObj, fmt.Sprintf("<< /Type /OutputIntent /S /GTS_PDFA1 /OutputConditionIdentifier (sRGB IEC61966-2.1) "+
		"/RegistryName (http://www.color.org) /Info (sRGB IEC61966-2.1) /DestOutputProfile %d 0 R >>", iccObj))

	xref := out.Len()
	fmt.Fprintf(&out, "xref\n0 %d\n0000000000 65535 f \n", len(offsets))
	for _, off := range offsets[1:] {
		fmt.Fprintf(&out, "%010d 00000 n \n", off)
	}
	// The file ID is a hash of the content: the same invoice renders to the
	// same bytes.
	id := md5.Sum(append(append([]byte(nil), info.xml...), info.title...))
	fmt.Fprintf(&out, "trailer\n<< /Size %d /Root %d 0 R /Info %d 0 R /ID [<%x> <%x>] >>\nstartxref\n%d\n%%%%EOF\n",
		len(offsets), root, infoObj, id, id, xref)
	return out.Bytes(), nil
}

// iccDeflated is the compressed output profile: the same for every
// invoice, so compressed once.
var iccDeflated = sync.OnceValue(func() []byte { return deflate(iccSRGB) })

// zlibWriters keeps zlib writers for reuse: a new BestCompression writer
// allocates about a megabyte of compressor state, which showed in the
// profile of issuing invoices. Reset gives the same output as a new one.
var zlibWriters = sync.Pool{New: func() any {
	w, _ := zlib.NewWriterLevel(nil, zlib.BestCompression)
	return w
}}

func deflate(b []byte) []byte {
	var buf bytes.Buffer
	w := zlibWriters.Get().(*zlib.Writer)
	defer zlibWriters.Put(w)
	w.Reset(&buf)
	_, _ = w.Write(b)
	_ = w.Close()
	return buf.Bytes()
}

// pdfDate is a PDF date string; xmpDate the same instant for XMP. PDF/A
// requires the document information dates to equal the XMP ones.
func pdfDate(t time.Time) string { return "D:" + t.UTC().Format("20060102150405") + "+00'00'" }
func xmpDate(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05") + "+00:00" }

// pdfText is a PDF text string: a literal for printable ASCII, else
// UTF-16BE with a byte order mark in hex.
func pdfText(s string) string {
	ascii := true
	for _, r := range s {
		if r < 0x20 || r > 0x7e {
			ascii = false
			break
		}
	}
	if ascii {
		r := strings.NewReplacer(`\`, `\\`, `(`, `\(`, `)`, `\)`)
		return "(" + r.Replace(s) + ")"
	}
	var b strings.Builder
	b.WriteString("<FEFF")
	for _, u := range utf16.Encode([]rune(s)) {
		fmt.Fprintf(&b, "%04X", u)
	}
	b.WriteString(">")
	return b.String()
}

func xmlText(s string) string {
	var b bytes.Buffer
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

// xmp is the metadata packet: PDF/A identification (part 3, conformance B),
// Dublin Core, XMP basic and PDF properties mirroring the information
// dictionary, the Factur-X properties and, since those are not predefined
// XMP schemas, their PDF/A extension schema description.
func xmp(info pdfaInfo) []byte {
	date := xmpDate(info.date)
	fx := func(name, typ, desc string) string {
		return `
            <rdf:li rdf:parseType="Resource">
              <pdfaProperty:name>` + name + `</pdfaProperty:name>
              <pdfaProperty:valueType>` + typ + `</pdfaProperty:valueType>
              <pdfaProperty:category>external</pdfaProperty:category>
              <pdfaProperty:description>` + desc + `</pdfaProperty:description>
            </rdf:li>`
	}
	s := `<?xpacket begin="` + "\ufeff" + `" id="W5M0MpCehiHzreSzNTczkc9d"?>
<x:xmpmeta xmlns:x="adobe:ns:meta/">
  <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
    <rdf:Description rdf:about="" xmlns:pdfaid="http://www.aiim.org/pdfa/ns/id/">
      <pdfaid:part>3</pdfaid:part>
      <pdfaid:conformance>B</pdfaid:conformance>
    </rdf:Description>
    <rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/">
      <dc:format>application/pdf</dc:format>
      <dc:title><rdf:Alt><rdf:li xml:lang="x-default">` + xmlText(info.title) + `</rdf:li></rdf:Alt></dc:title>
      <dc:creator><rdf:Seq><rdf:li>` + xmlText(info.author) + `</rdf:li></rdf:Seq></dc:creator>
      <dc:description><rdf:Alt><rdf:li xml:lang="x-default">` + xmlText(info.subject) + `</rdf:li></rdf:Alt></dc:description>
    </rdf:Description>
    <rdf:Description rdf:about="" xmlns:pdf="http://ns.adobe.com/pdf/1.3/">
      <pdf:Producer>` + xmlText(producer) + `</pdf:Producer>
    </rdf:Description>
    <rdf:Description rdf:about="" xmlns:xmp="http://ns.adobe.com/xap/1.0/">
      <xmp:CreatorTool>` + xmlText(creator) + `</xmp:CreatorTool>
      <xmp:CreateDate>` + date + `</xmp:CreateDate>
      <xmp:ModifyDate>` + date + `</xmp:ModifyDate>
      <xmp:MetadataDate>` + date + `</xmp:MetadataDate>
    </rdf:Description>
    <rdf:Description rdf:about="" xmlns:pdfaExtension="http://www.aiim.org/pdfa/ns/extension/" xmlns:pdfaSchema="http://www.aiim.org/pdfa/ns/schema#" xmlns:pdfaProperty="http://www.aiim.org/pdfa/ns/property#">
      <pdfaExtension:schemas>
        <rdf:Bag>
          <rdf:li rdf:parseType="Resource">
            <pdfaSchema:schema>Factur-X PDFA Extension Schema</pdfaSchema:schema>
            <pdfaSchema:namespaceURI>` + factorXNS + `</pdfaSchema:namespaceURI>
            <pdfaSchema:prefix>fx</pdfaSchema:prefix>
            <pdfaSchema:property>
              <rdf:Seq>` +
		fx("DocumentFileName", "Text", "The name of the embedded XML document") +
		fx("DocumentType", "Text", "The type of the hybrid document in capital letters, e.g. INVOICE or ORDER") +
		fx("Version", "Text", "The actual version of the standard applying to the embedded XML document") +
		fx("ConformanceLevel", "Text", "The conformance level of the embedded XML document") + `
              </rdf:Seq>
            </pdfaSchema:property>
          </rdf:li>
        </rdf:Bag>
      </pdfaExtension:schemas>
    </rdf:Description>
    <rdf:Description rdf:about="" xmlns:fx="` + factorXNS + `">
      <fx:DocumentType>INVOICE</fx:DocumentType>
      <fx:DocumentFileName>` + xmlText(info.fileName) + `</fx:DocumentFileName>
      <fx:Version>1.0</fx:Version>
      <fx:ConformanceLevel>` + xmlText(info.conformity) + `</fx:ConformanceLevel>
    </rdf:Description>
  </rdf:RDF>
</x:xmpmeta>
<?xpacket end="w"?>`
	return []byte(s)
}

// factorXNS is the namespace of the Factur-X XMP properties.
const factorXNS = "urn:factur-x:pdfa:CrossIndustryDocument:invoice:1p0#"
