package contract

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/url"
	"strings"

	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/strictjson"
)

// CheckParams checks the path and query of a call as CheckRequest does,
// leaving the body to StreamForm.
func (o *Operation) CheckParams(params, query url.Values) error {
	for name, vs := range params {
		for _, v := range vs {
			if strictjson.TextIssue(v, false) != "" {
				return errs.NotFoundf("no %s %q", name, strings.ToValidUTF8(v, "?"))
			}
		}
	}
	return o.checkQuery(query)
}

// FilePart is one file part of a streamed form.
type FilePart struct {
	Field, FileName, ContentType string
	R                            io.Reader
}

// StreamForm reads a multipart body part by part without holding it:
// every part is a documented field, given once, with a text name and
// value; a file part needs a file name that is text and goes to file as a
// stream (file must read it to its end or fail); text values are converted
// to their schema's type, a JSON text field is read strictly and checked
// against its contentSchema, and the fields together must satisfy the
// request schema. It returns the text fields. An error from file is
// returned as it is. CheckRequest checks a form held in memory with it.
func (o *Operation) StreamForm(contentType string, body io.Reader, file func(FilePart) error) (map[string]string, error) {
	if o.bodyType != "multipart/form-data" {
		return nil, errs.E(errs.UnsupportedMedia, "this operation takes no form")
	}
	f := o.form
	_, ps, err := mime.ParseMediaType(contentType)
	if err != nil || ps["boundary"] == "" {
		return nil, errs.E(errs.UnsupportedMedia, "send multipart/form-data with a boundary")
	}
	r := multipart.NewReader(body, ps["boundary"])
	inst := map[string]any{}
	texts := map[string]string{}
	var details []errs.Detail
	for n := 0; ; n++ {
		part, err := r.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, readFailure(err, "")
		}
		if n >= f.maxParts {
			return nil, errs.Invalid("too many form parts", errs.Field("", fmt.Sprintf("at most %d parts", f.maxParts)))
		}
		name := part.FormName()
		if issue := strictjson.TextIssue(name, false); issue != "" {
			return nil, errs.Invalid("invalid form field name", errs.Field("", issue))
		}
		ff, ok := f.fields[name]
		switch {
		case !ok:
			details = append(details, errs.Field(name, "unknown field"))
			continue
		case inst[name] != nil:
			details = append(details, errs.Field(name, "must be given once"))
			continue
		}
		if ff.file {
			inst[name] = "file"
			fn := part.FileName()
			var d *errs.Detail
			switch {
			case fn == "":
				x := errs.Field(name, "must be a file part with a file name")
				d = &x
			case strictjson.TextIssue(fn, false) != "":
				x := errs.Field(name, "file name "+strictjson.TextIssue(fn, false))
				d = &x
			case len(fn) > 255:
				x := errs.Field(name, "file name at most 255 bytes")
				d = &x
			}
			if d != nil {
				details = append(details, *d)
				continue
			}
			if len(details) > 0 {
				// The form is refused anyway; the file need not be kept.
				continue
			}
			if err := file(FilePart{Field: name, FileName: fn, ContentType: part.Header.Get("Content-Type"), R: part}); err != nil {
				return nil, err
			}
			continue
		}
		val, err := io.ReadAll(io.LimitReader(part, 1<<20+1))
		if err != nil {
			return nil, readFailure(err, name)
		}
		if len(val) > 1<<20 {
			details = append(details, errs.Field(name, "at most 1 MiB"))
			continue
		}
		s := string(val)
		if issue := strictjson.TextIssue(s, true); issue != "" {
			details = append(details, errs.Field(name, issue))
			continue
		}
		if ff.jsonContent != nil {
			v, err := DecodeJSON(val)
			if err != nil {
				details = append(details, prefixDetails(errs.As(err).Details, name)...)
			} else if err := ff.jsonContent.Validate(v); err != nil {
				details = append(details, validationDetails(err, name)...)
			}
			inst[name], texts[name] = s, s
			continue
		}
		v, ok := scalarValue(s, ff.kind)
		if !ok {
			details = append(details, errs.Field(name, "must be "+article(ff.kind)))
			continue
		}
		inst[name], texts[name] = v, s
	}
	if len(details) == 0 {
		if err := o.body.Validate(inst); err != nil {
			details = validationDetails(err, "")
		}
	}
	if err := refusal("invalid form", details); err != nil {
		return nil, err
	}
	return texts, nil
}

// readFailure keeps an *errs.Error from the body's reader (the size limit)
// and calls anything else a malformed form.
func readFailure(err error, field string) error {
	var e *errs.Error
	if errors.As(err, &e) {
		return e
	}
	return errs.Invalid("malformed multipart body", errs.Field(field, "could not read the form"))
}
