package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/natsx"
)

// serveRoute answers one /v1 route: the HTTP request in, through the
// pipeline, the reply or the error out.
func (g *Gateway) serveRoute(rt *route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		x := g.begin(w, r, restSurface)
		defer g.finish(x)
		x.use(rt, r.PathValue)
		reply, err := g.call(r.Context(), x, func() (*natsx.Request, string, error) {
			req, err := g.readRequest(w, r, rt)
			return req, r.Header.Get("Idempotency-Key"), err
		})
		if err != nil {
			x.reject(w, err)
			return
		}
		x.rec.Status = reply.Status
		if rt.Flags&Stream != 0 {
			// The first chunk may have taken long; its deadline starts now.
			_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(g.cfg.WriteTimeout))
		}
		writeReply(w, reply)
		if rt.Flags&Stream != 0 {
			g.stream(w, r, x, reply.NextCursor)
		}
	})
}

// unrouted answers a /v1 request no route takes, audited like any call: 405
// when another method serves the path, 404 when nothing does.
func (g *Gateway) unrouted(w http.ResponseWriter, r *http.Request) {
	x := g.begin(w, r, restSurface)
	defer g.finish(x)
	if allow := g.router.allowed(r); len(allow) > 0 {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		x.reject(w, errs.E(errs.MethodNotAllowed, "method %s not allowed on %s", r.Method, r.URL.Path))
		return
	}
	x.reject(w, errs.NotFoundf("no route for %s %s", r.Method, r.URL.Path))
}

// readRequest reads the body within its limit and checks JSON is well formed
// before anything reaches a service.
func (g *Gateway) readRequest(w http.ResponseWriter, r *http.Request, rt *route) (*natsx.Request, error) {
	req := &natsx.Request{Params: url.Values{}, Query: r.URL.Query()}
	for _, name := range rt.params {
		req.Params.Set(name, r.PathValue(name))
	}
	if r.Body == nil || r.ContentLength == 0 && r.Method == http.MethodGet {
		return req, nil
	}
	if rt.Flags&LargeUpload != 0 {
		return g.readLargeUpload(r, rt, req)
	}
	if rt.Flags&MailUpload != 0 {
		return g.readMail(r, req)
	}
	upload := rt.Flags&Upload != 0
	limit := g.cfg.MaxBodyBytes
	if upload {
		limit = g.cfg.MaxUploadBytes
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			if upload {
				return nil, errs.E(errs.FileTooLarge, "the upload exceeds %d bytes; files may have at most 10 MB", limit)
			}
			return nil, errs.E(errs.PayloadTooLarge, "request body exceeds %d bytes", limit)
		}
		return nil, errs.Invalid("could not read request body")
	}
	if len(body) == 0 {
		return req, nil
	}
	ct := r.Header.Get("Content-Type")
	mt, _, _ := mime.ParseMediaType(ct)
	switch {
	case upload && mt == "multipart/form-data":
		req.ContentType = ct // the boundary is needed to parse it
	case upload:
		return nil, errs.E(errs.UnsupportedMedia, "send this as multipart/form-data with a file field")
	case mt == "" || mt == "application/json" || strings.HasSuffix(mt, "+json"):
		if !json.Valid(body) {
			return nil, errs.Invalid("request body is not valid JSON")
		}
		req.ContentType = "application/json"
	default:
		return nil, errs.E(errs.UnsupportedMedia, "Content-Type %q is not supported here; send application/json", mt)
	}
	req.Body = body
	return req, nil
}

func writeReply(w http.ResponseWriter, reply *natsx.Reply) {
	ct := reply.ContentType
	if ct == "" {
		ct = "application/json"
	}
	w.Header().Set("Content-Type", ct)
	if reply.Disposition != "" {
		w.Header().Set("Content-Disposition", reply.Disposition)
	}
	if !strings.HasPrefix(ct, "application/json") {
		w.Header().Set("X-Content-Type-Options", "nosniff")
	}
	w.WriteHeader(reply.Status)
	w.Write(reply.Body)
}

// stream fetches and writes the remaining chunks of a streaming reply. The
// status line is out, so a failure can only cut the response short; the
// client sees a truncated body and the log says why.
func (g *Gateway) stream(w http.ResponseWriter, r *http.Request, x *exchange, cursor string) {
	rc := http.NewResponseController(w)
	for cursor != "" {
		// Each chunk is asked for only once the previous one is on its way.
		_ = rc.Flush()
		if r.Context().Err() != nil {
			return
		}
		x.req.Cursor = cursor
		// Every chunk gets the full request timeout; the export as a whole
		// may run longer.
		reply, err := g.do(context.WithoutCancel(x.ctx), x.route.Subject, x.req)
		if err != nil {
			g.deps.Log.Error("stream aborted", "request_id", x.rec.RequestID, "subject", x.route.Subject, "err", err)
			panic(http.ErrAbortHandler)
		}
		// The server's WriteTimeout runs from the request's start and would
		// cut a long export; each chunk gets its own deadline instead, so
		// a stalled client still cannot hold the stream for ever.
		// ErrNotSupported (a writer without deadlines) changes nothing.
		_ = rc.SetWriteDeadline(time.Now().Add(g.cfg.WriteTimeout))
		if _, err := w.Write(reply.Body); err != nil {
			return
		}
		cursor = reply.NextCursor
	}
}
