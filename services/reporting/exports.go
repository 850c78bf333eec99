package reporting

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
)

// ExportStore keeps generated export files while they are streamed: a file
// that cannot be cut into stateless pieces (the GoBD ZIP) is written once as
// numbered blobs of at most blobSize bytes and read back one per chunk.
type ExportStore interface {
	// PutExportBlob stores piece seq of an export.
	PutExportBlob(ctx context.Context, tenant, exportID string, seq int, data []byte) error
	// ExportBlob returns piece seq and whether it is the export's last
	// stored piece; NOT_FOUND when it is not (or no longer) there.
	ExportBlob(ctx context.Context, tenant, exportID string, seq int) (data []byte, last bool, err error)
	// DeleteExport drops every piece of an export.
	DeleteExport(ctx context.Context, tenant, exportID string) error
	// DeleteExportsBefore drops the pieces of every tenant's exports created
	// before t, returning how many pieces went.
	DeleteExportsBefore(ctx context.Context, t time.Time) (int64, error)
}

// ChainStatus is the ledger's verification of a tenant's hash chain
// (GET /v1/journal/verify): Events is the number of journal events checked,
// which the gapless numbering makes the last journal number, and HeadHash
// the hash of that event.
type ChainStatus = ledgerv1.Verification

// ChainVerifier asks the ledger to verify the caller's hash chain and for
// its signed checkpoints (oldest first); the caller's claims travel in ctx.
type ChainVerifier interface {
	Verify(ctx context.Context) (ChainStatus, error)
	Checkpoints(ctx context.Context) ([]ledgerv1.Checkpoint, error)
}

// SetChainVerifier gives the service what the GoBD export needs to record
// the journal's hash-chain head. Call it before serving.
func (s *Service) SetChainVerifier(v ChainVerifier) { s.export.verifier = v }

// ExportChunk is one piece of a streamed export file. The caller writes Data
// and asks again with Next until Next is empty; the first chunk's
// ContentType and Filename describe the whole file.
type ExportChunk struct {
	Data        []byte
	ContentType string
	Filename    string
	Next        string
}

// Export limits.
const (
	// feedPage is the journal-feed page: one DATEV chunk, and the unit the
	// GoBD export reads the journal in.
	feedPage = 5000
	// blobSize is one stored piece of a GoBD ZIP and so one chunk of it.
	blobSize = 1 << 20
	// blobTTL is how long an unfinished GoBD download stays fetchable.
	blobTTL = time.Hour
)

// exportConfig holds the export settings and peers beyond the Service's
// constructor. Zero sizes mean the defaults; tests shrink them.
type exportConfig struct {
	verifier ChainVerifier
	page     int
	blob     int
}

func (c *exportConfig) pageSize() int {
	if c.page > 0 {
		return c.page
	}
	return feedPage
}

func (c *exportConfig) blobSize() int {
	if c.blob > 0 {
		return c.blob
	}
	return blobSize
}

// tenantOf returns the caller's tenant.
func tenantOf(ctx context.Context) (string, error) {
	c := auth.FromContext(ctx)
	if c == nil || c.TenantID == "" {
		return "", errs.E(errs.Unauthenticated, "no authenticated tenant")
	}
	return c.TenantID, nil
}

// fiscalYearStart returns the first day of the fiscal year containing d for
// a year starting in month m (1..12; anything else means January).
func fiscalYearStart(d time.Time, m int) time.Time {
	if m < 1 || m > 12 {
		m = 1
	}
	y := d.Year()
	if int(d.Month()) < m {
		y--
	}
	return time.Date(y, time.Month(m), 1, 0, 0, 0, 0, time.UTC)
}

// parseDay parses a YYYY-MM-DD query value.
func parseDay(name, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, errs.Invalid(name+" is required", errs.Field(name, "required, YYYY-MM-DD"))
	}
	d, err := time.Parse(time.DateOnly, v)
	if err != nil || d.Format(time.DateOnly) != v {
		return time.Time{}, errs.Invalid(name+" must be a date YYYY-MM-DD", errs.Field(name, "must be a date YYYY-MM-DD"))
	}
	return d, nil
}

// feedCursor is where a journal-feed based stream goes on: after the
// journal number After, up to the journal head Head seen by its first chunk,
// so events posted during a download do not enter it half-way.
type feedCursor struct {
	After int64
	Head  int64
}

func (c feedCursor) String() string {
	return strconv.FormatInt(c.After, 10) + ":" + strconv.FormatInt(c.Head, 10)
}

func parseFeedCursor(s string) (feedCursor, error) {
	a, h, ok := strings.Cut(s, ":")
	after, err1 := strconv.ParseInt(a, 10, 64)
	head, err2 := strconv.ParseInt(h, 10, 64)
	if !ok || err1 != nil || err2 != nil || after < 0 || head < after {
		return feedCursor{}, errs.Invalid("malformed export cursor", errs.Field("cursor", "not a cursor of this export"))
	}
	return feedCursor{after, head}, nil
}

// feedPages reads the tenant's journal from after up to head (0: no bound)
// in pages, calling fn with each page's lines in journal order. The next page
// is fetched while fn works on the current one, so at most two pages are in
// memory.
func (s *Service) feedPages(ctx context.Context, req ledgerv1.JournalFeedRequest, head int64, fn func([]ledgerv1.JournalLine) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type page struct {
		lines []ledgerv1.JournalLine
		err   error
	}
	pages := make(chan page, 1)
	go func() {
		defer close(pages)
		for {
			f, err := s.feed(ctx, req)
			if err != nil {
				select {
				case pages <- page{err: err}:
				case <-ctx.Done():
				}
				return
			}
			lines, done := boundPage(f.Lines, head, req.Limit)
			select {
			case pages <- page{lines: lines}:
			case <-ctx.Done():
				return
			}
			if done {
				return
			}
			req.After = f.Last
		}
	}()
	for p := range pages {
		if p.err != nil {
			return p.err
		}
		if err := fn(p.lines); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// boundPage cuts a feed page at the journal head (0: no bound) and reports
// whether the feed has nothing after it.
func boundPage(lines []ledgerv1.JournalLine, head int64, limit int) ([]ledgerv1.JournalLine, bool) {
	done := len(lines) < limit
	if head > 0 {
		for i, l := range lines {
			if l.JournalNumber > head {
				return lines[:i], true
			}
		}
		if len(lines) > 0 && lines[len(lines)-1].JournalNumber == head {
			done = true
		}
	}
	return lines, done
}

// errExportGone is what a cursor of a finished or expired export gets.
var errExportGone = errs.E(errs.NotFound, "this export is no longer available; request it again")

// feed reads a page of the journal feed; a tenant without a journal yet
// has an empty one.
func (s *Service) feed(ctx context.Context, req ledgerv1.JournalFeedRequest) (ledgerv1.JournalFeed, error) {
	f, err := s.ledger.Feed(ctx, req)
	if errs.Is(err, errs.NotFound) {
		return ledgerv1.JournalFeed{Last: req.After}, nil
	}
	if err != nil {
		return f, errs.Wrap("journal feed", err)
	}
	return f, nil
}
