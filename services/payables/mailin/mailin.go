// Package mailin reads an inbound e-mail (RFC 5322 with MIME) into its
// attachments as it streams, on github.com/emersion/go-message: nested
// multiparts, base64 and quoted-printable, RFC 2047 and RFC 2231 file
// names and forwarded messages (message/rfc822) are the library's or
// followed here; nothing but the part being read is held in memory.
//
// The bodies handed out are the attachments' bytes exactly: go-message
// converts text/* bodies to UTF-8 only for charsets it is given a reader
// for, and this program gives it none (do not import
// github.com/emersion/go-message/charset), so that an XML e-invoice sent
// as text/xml in ISO-8859-1 keeps the bytes its SHA-256 and its XML
// declaration describe.
package mailin

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/emersion/go-message"
	"github.com/emersion/go-message/mail"
	"golang.org/x/text/encoding/charmap"
)

// Limits of what is read from a message's headers.
const (
	MaxNameRunes    = 255 // a file name, as inbox items keep it
	MaxSubjectRunes = 998 // RFC 5322's line limit
	MaxSenderBytes  = 320
	maxDepth        = 8   // nested multiparts and forwarded messages
	maxParts        = 500 // parts of one message, all levels
	maxHeaderBytes  = 256 << 10
)

// Envelope is what the outermost message says of itself.
type Envelope struct {
	From    string // the sender's address, "" when none is readable
	Subject string
}

// Attachment is one attached file: its cleaned name ("" when it has
// none), its declared media type without parameters ("" when none) and
// its decoded bytes, to be read before the walk goes on.
type Attachment struct {
	FileName    string
	ContentType string
	Body        io.Reader
}

// ErrMalformed is wrapped by the errors of a message that cannot be read
// as MIME; what was handed out before it stays handed out.
var ErrMalformed = errors.New("malformed message")

// Walk reads the message from r and calls fn for each attachment, in the
// message's order, attachments of forwarded messages included. The text
// and HTML bodies and pictures embedded in them (inline parts with a
// Content-ID) are no attachments. An error of fn stops the walk and is
// returned as it is.
func Walk(r io.Reader, fn func(Envelope, Attachment) error) (Envelope, error) {
	e, err := message.ReadWithOptions(r, &message.ReadOptions{MaxHeaderBytes: maxHeaderBytes})
	if err != nil && !tolerable(err) {
		return Envelope{}, fmt.Errorf("%w: header: %v", ErrMalformed, err)
	}
	h := mail.Header{Header: e.Header}
	env := Envelope{From: sender(h), Subject: truncate(clean(decodeWords(h.Get("Subject")), true), MaxSubjectRunes)}
	w := walker{env: env, fn: fn}
	return env, w.entity(e, 0)
}

type walker struct {
	env   Envelope
	fn    func(Envelope, Attachment) error
	parts int
}

// tolerable are the errors go-message returns with an entity still
// readable: a charset or transfer encoding it does not know. The bytes are
// then handed out undecoded; an attachment's magic bytes decide.
func tolerable(err error) bool {
	return message.IsUnknownCharset(err) || message.IsUnknownEncoding(err)
}

func (w *walker) entity(e *message.Entity, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("%w: nested more than %d levels", ErrMalformed, maxDepth)
	}
	if mr := e.MultipartReader(); mr != nil {
		for {
			p, err := mr.NextPart()
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil && !tolerable(err) {
				return fmt.Errorf("%w: %v", ErrMalformed, err)
			}
			if w.parts++; w.parts > maxParts {
				return fmt.Errorf("%w: more than %d parts", ErrMalformed, maxParts)
			}
			if err := w.entity(p, depth+1); err != nil {
				return err
			}
		}
	}
	ct, ctParams, _ := e.Header.ContentType()
	ct = strings.ToLower(ct)
	disp, dParams, _ := e.Header.ContentDisposition()
	disp = strings.ToLower(disp)
	if ct == "message/rfc822" || ct == "message/global" {
		// A forwarded message: its attachments are what was forwarded.
		inner, err := message.ReadWithOptions(e.Body, &message.ReadOptions{MaxHeaderBytes: maxHeaderBytes})
		if err != nil && !tolerable(err) {
			return fmt.Errorf("%w: forwarded message: %v", ErrMalformed, err)
		}
		return w.entity(inner, depth+1)
	}
	name := dParams["filename"]
	if name == "" {
		name = ctParams["name"]
	}
	name = FileName(name)
	switch {
	case disp == "attachment":
	case name == "":
		return nil // a body
	case disp == "inline" && e.Header.Get("Content-Id") != "" && strings.HasPrefix(ct, "image/"):
		return nil // a picture the HTML body shows
	}
	return w.fn(w.env, Attachment{FileName: name, ContentType: ct, Body: e.Body})
}

// sender is the first From address, or the raw field cleaned when it is
// no address list.
func sender(h mail.Header) string {
	if as, err := h.AddressList("From"); err == nil && len(as) > 0 {
		if len(as[0].Address) <= MaxSenderBytes {
			return clean(as[0].Address, false)
		}
		return ""
	}
	s := clean(decodeWords(h.Get("From")), true)
	if len(s) > MaxSenderBytes {
		return ""
	}
	return s
}

// FileName decodes RFC 2047 words left in a name (mime.ParseMediaType
// decodes RFC 2231 only) and keeps the last path element without control
// characters, at most MaxNameRunes.
func FileName(s string) string {
	s = decodeWords(s)
	if i := strings.LastIndexAny(s, `/\`); i >= 0 {
		s = s[i+1:]
	}
	s = clean(s, true)
	if utf8.RuneCountInString(s) > MaxNameRunes {
		ext := path.Ext(s)
		if utf8.RuneCountInString(ext) > 10 {
			ext = ""
		}
		s = truncate(s, MaxNameRunes-utf8.RuneCountInString(ext)) + ext
	}
	return s
}

// words decodes RFC 2047 encoded words in UTF-8, US-ASCII and the Latin
// charsets German mail still comes in.
var words = mime.WordDecoder{CharsetReader: func(charset string, r io.Reader) (io.Reader, error) {
	switch strings.ToLower(charset) {
	case "iso-8859-1", "latin1", "iso_8859-1":
		return charmap.ISO8859_1.NewDecoder().Reader(r), nil
	case "iso-8859-15", "latin-9":
		return charmap.ISO8859_15.NewDecoder().Reader(r), nil
	case "windows-1252", "cp1252":
		return charmap.Windows1252.NewDecoder().Reader(r), nil
	}
	return nil, fmt.Errorf("charset %q not supported", charset)
}}

func decodeWords(s string) string {
	if !strings.Contains(s, "=?") {
		return s
	}
	if d, err := words.DecodeHeader(s); err == nil {
		return d
	}
	return s
}

// clean drops invalid UTF-8 and control characters (keeping spaces when
// oneLine folds them) and trims.
func clean(s string, oneLine bool) string {
	s = strings.ToValidUTF8(s, "")
	s = strings.Map(func(r rune) rune {
		switch {
		case oneLine && (r == '\t' || r == '\n' || r == '\r'):
			return ' '
		case unicode.IsControl(r), r == utf8.RuneError:
			return -1
		}
		return r
	}, s)
	return strings.TrimSpace(s)
}

func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}
