package identity

import (
	"net/mail"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/ledgerplatform/ledger/pkg/errs"
)

// problems collects every issue with a request, so a client learns all of
// them from one 400 rather than one at a time.
type problems []errs.Detail

func (p *problems) add(field, issue string) { *p = append(*p, errs.Field(field, issue)) }

// err returns INVALID_INPUT with the collected details, or nil.
func (p problems) err(msg string) error {
	if len(p) == 0 {
		return nil
	}
	return errs.Invalid(msg, p...)
}

// length checks that s has between lo and hi characters.
func (p *problems) length(field, s string, lo, hi int) {
	n := utf8.RuneCountInString(s)
	switch {
	case n < lo && lo == 1:
		p.add(field, "required")
	case n < lo:
		p.add(field, "must have at least "+strconv.Itoa(lo)+" characters")
	case n > hi:
		p.add(field, "must have at most "+strconv.Itoa(hi)+" characters")
	}
}

// normalizeEmail lowercases: addresses are compared case-insensitively,
// which is what users expect even though local parts may be case-sensitive.
func normalizeEmail(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

// validEmail accepts a bare address (no display name) of at most 254
// characters whose domain has a dot.
func validEmail(s string) bool {
	if s == "" || len(s) > 254 {
		return false
	}
	a, err := mail.ParseAddress(s)
	if err != nil || a.Address != s {
		return false
	}
	_, domain, _ := strings.Cut(s, "@")
	return strings.Contains(domain, ".") && !strings.HasSuffix(domain, ".")
}

// parseID returns the canonical form of a uuid path parameter. Anything that
// is not a uuid cannot name a row, so it is NOT_FOUND like an unknown id:
// a client learns nothing from the difference.
func parseID(s, what string) (string, error) {
	id, err := uuid.Parse(s)
	if err != nil || len(s) != 36 {
		return "", errs.NotFoundf("%s not found", what)
	}
	return id.String(), nil
}

// Page is a parsed limit/offset pair.
type Page struct {
	Limit  int `json:"limit"`
	Offset int `json:"offset"`
}

// PageQuery holds limit and offset as they arrive in a query string.
type PageQuery struct {
	Limit, Offset string
}

// parse checks limit (1..maxLimit, default def) and offset (>= 0, default 0).
func (q PageQuery) parse(p *problems, def, maxLimit int) Page {
	pg := Page{Limit: def}
	if q.Limit != "" {
		n, err := strconv.Atoi(q.Limit)
		if err != nil || n < 1 || n > maxLimit {
			p.add("limit", "must be an integer from 1 to "+strconv.Itoa(maxLimit))
		}
		pg.Limit = n
	}
	if q.Offset != "" {
		n, err := strconv.Atoi(q.Offset)
		if err != nil || n < 0 {
			p.add("offset", "must be an integer of at least 0")
		}
		pg.Offset = n
	}
	return pg
}
