package natsx

import (
	"context"
	"net/url"
	"strconv"
	"time"

	"github.com/ledgerplatform/ledger/pkg/errs"
)

// The decoders every service's route table uses.

// PathParam decodes the path parameter name.
func PathParam(name string) DecodeFunc {
	return func(_ context.Context, r *Request) (any, error) { return r.Param(name), nil }
}

// QueryParam decodes the query parameter name, "" when absent.
func QueryParam(name string) DecodeFunc {
	return func(_ context.Context, r *Request) (any, error) { return r.Query.Get(name), nil }
}

// IntQuery parses the optional integer query parameter name within
// [lo, hi]; absent, it is def.
func IntQuery(q url.Values, name string, def, lo, hi int) (int, error) {
	s := q.Get(name)
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		return 0, errs.Invalid("invalid query parameter "+name, errs.Field(name, "must be an integer from "+strconv.Itoa(lo)+" to "+strconv.Itoa(hi)))
	}
	return n, nil
}

// BoolQuery parses the optional query parameter name, 'true' or
// 'false'; absent, it is nil.
func BoolQuery(q url.Values, name string) (*bool, error) {
	switch v := q.Get(name); v {
	case "":
		return nil, nil
	case "true", "false":
		b := v == "true"
		return &b, nil
	}
	return nil, errs.Invalid("invalid query parameter "+name, errs.Field(name, "true or false"))
}

// WithID is a request on a resource: its path parameter id and its
// strictly decoded body.
type WithID[T any] struct {
	ID   string
	Body T
}

// DecodeWithID decodes the path parameter id and the body as a T
// (Decode's rules).
func DecodeWithID[T any](_ context.Context, r *Request) (any, error) {
	in := WithID[T]{ID: r.Param("id")}
	if err := Decode(r.Body, &in.Body); err != nil {
		return nil, err
	}
	return in, nil
}

// DateRange appends to ds what is wrong with the optional dates of a list
// query, start_date and end_date: one that is not a date YYYY-MM-DD, or,
// when nothing else in ds is wrong, an end before the start.
func DateRange(ds []errs.Detail, start, end string) []errs.Detail {
	for _, d := range []struct{ name, v string }{{"start_date", start}, {"end_date", end}} {
		if d.v == "" {
			continue
		}
		if t, err := time.Parse(time.DateOnly, d.v); err != nil || t.Format(time.DateOnly) != d.v {
			ds = append(ds, errs.Field(d.name, "a date YYYY-MM-DD"))
		}
	}
	if len(ds) == 0 && start != "" && end != "" && start > end {
		ds = append(ds, errs.Field("end_date", "must not be before start_date"))
	}
	return ds
}

// Page appends to ds what is wrong with the page of a list: a limit from 1
// to max and an offset that is not negative.
func Page(ds []errs.Detail, limit, offset, max int) []errs.Detail {
	if limit < 1 || limit > max {
		ds = append(ds, errs.Field("limit", "must be an integer from 1 to "+strconv.Itoa(max)))
	}
	if offset < 0 {
		ds = append(ds, errs.Field("offset", "must not be negative"))
	}
	return ds
}
