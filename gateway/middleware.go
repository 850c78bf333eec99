package gateway

import (
	"context"
	"log/slog"
	"net/http"
	"regexp"
	"time"

	"github.com/google/uuid"

	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/natsx"
)

// chain applies middleware so the first one listed runs first.
func chain(h http.Handler, mw ...func(http.Handler) http.Handler) http.Handler {
	for i := len(mw) - 1; i >= 0; i-- {
		h = mw[i](h)
	}
	return h
}

var validRequestID = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

type clientRequestIDKey struct{}

// requestID gives every request the gateway's own id and returns it on the
// response. A client's X-Request-Id is never adopted: the id is the audit
// record's key, and a client reusing one would otherwise hide its later
// calls. A well-formed client id is kept beside it for the audit record.
func requestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := uuid.NewString()
		ctx := natsx.WithRequestID(r.Context(), id)
		if c := r.Header.Get("X-Request-Id"); validRequestID.MatchString(c) {
			ctx = context.WithValue(ctx, clientRequestIDKey{}, c)
		}
		w.Header().Set("X-Request-Id", id)
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// clientRequestIDOf is the X-Request-Id the client sent, if well formed.
func clientRequestIDOf(r *http.Request) string {
	s, _ := r.Context().Value(clientRequestIDKey{}).(string)
	return s
}

func requestIDOf(r *http.Request) string { return natsx.RequestID(r.Context()) }

func recoverer(log *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer func() {
				if p := recover(); p != nil {
					if p == http.ErrAbortHandler {
						panic(p)
					}
					log.Error("panic", "request_id", requestIDOf(r), "panic", p)
					writeError(w, r, errs.E(errs.Internal, "internal error"))
				}
			}()
			next.ServeHTTP(w, r)
		})
	}
}

// statusWriter remembers the status for the access log.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// accessLog must wrap the ServeMux directly: the mux notes the pattern it
// matched on the very request it is handed.
func accessLog(log *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			sw := &statusWriter{ResponseWriter: w}
			next.ServeHTTP(sw, r)
			log.LogAttrs(r.Context(), slog.LevelInfo, "http",
				slog.String("method", r.Method), slog.String("route", r.Pattern), slog.String("path", r.URL.Path),
				slog.Int("status", sw.status), slog.Duration("duration", time.Since(start)), slog.String("request_id", requestIDOf(r)))
		})
	}
}
