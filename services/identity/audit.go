package identity

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/ledgerplatform/ledger/contracts/gatewayv1"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
)

// Audit list limits.
const (
	defaultAuditLimit = 100
	maxAuditLimit     = 500
)

// AuditEntry is one stored audit record.
type AuditEntry struct {
	ID int64 `json:"id"`
	gatewayv1.Call
	RecordedAt time.Time `json:"recorded_at"`
}

// AuditQuery holds the audit list's query parameters as they arrive.
type AuditQuery struct {
	From, To, Status, Actor string
	PageQuery
}

// AuditFilter is a parsed AuditQuery: entries at or after From and before
// To, with the status and actor when set.
type AuditFilter struct {
	From, To *time.Time
	Status   *int
	Actor    string
	Page
}

// AuditList is a page of audit entries.
type AuditList struct {
	Entries []AuditEntry `json:"entries"`
	Page
}

// ListAudit lists the caller's tenant's audit entries, newest first.
func (s *Service) ListAudit(ctx context.Context, c *auth.Claims, q AuditQuery) (AuditList, error) {
	f, err := q.parse()
	if err != nil {
		return AuditList{}, err
	}
	es, err := s.store.AuditEntries(ctx, c.TenantID, f)
	if err != nil {
		return AuditList{}, errs.Wrap("identity.ListAudit", err)
	}
	return AuditList{Entries: nonNil(es), Page: f.Page}, nil
}

func (q AuditQuery) parse() (AuditFilter, error) {
	var p problems
	f := AuditFilter{Actor: strings.TrimSpace(q.Actor), Page: q.PageQuery.parse(&p, defaultAuditLimit, maxAuditLimit)}
	f.From = parseBound(&p, "from", q.From, false)
	f.To = parseBound(&p, "to", q.To, true)
	if f.From != nil && f.To != nil && !f.From.Before(*f.To) {
		p.add("to", "must be after from")
	}
	if q.Status != "" {
		n, err := strconv.Atoi(q.Status)
		if err != nil || n < 100 || n > 599 {
			p.add("status", "must be an HTTP status code")
		}
		f.Status = &n
	}
	if len(f.Actor) > 200 {
		p.add("actor", "must have at most 200 characters")
	}
	return f, p.err("invalid audit query")
}

// parseBound reads an RFC 3339 time or a date. As an upper bound a date
// includes its whole day, which is what "to=2025-03-31" means to a person.
func parseBound(p *problems, field, s string, upper bool) *time.Time {
	if s == "" {
		return nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return &t
	}
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		p.add(field, "must be an RFC 3339 time or a YYYY-MM-DD date")
		return nil
	}
	if upper {
		d = d.AddDate(0, 0, 1)
	}
	return &d
}

// RecordCall stores an audit record from the gateway. Records are delivered
// at least once; the store keeps one per request id. Ids that are not uuids
// are dropped rather than refused, since a record that can never be stored
// would be redelivered for ever.
func (s *Service) RecordCall(ctx context.Context, c gatewayv1.Call) error {
	return s.RecordCalls(ctx, []gatewayv1.Call{c})
}

// RecordCalls stores a batch of audit records in one transaction; records
// without a request id are invalid and the whole batch is refused.
func (s *Service) RecordCalls(ctx context.Context, calls []gatewayv1.Call) error {
	for i := range calls {
		c := &calls[i]
		if c.RequestID == "" {
			return errs.Invalid("audit record without request id")
		}
		c.TenantID = canonicalID(c.TenantID)
		c.KeyID = canonicalID(c.KeyID)
		c.UserID = canonicalID(c.UserID)
		if c.At.IsZero() {
			c.At = s.now().UTC()
		}
	}
	if len(calls) == 0 {
		return nil
	}
	_, err := s.store.RecordCalls(ctx, calls)
	return errs.Wrap("identity.RecordCalls", err)
}

func canonicalID(s string) string {
	id, err := uuid.Parse(s)
	if err != nil || len(s) != 36 {
		return ""
	}
	return id.String()
}
