package natsx

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-kit/kit/endpoint"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/ledgerplatform/ledger/pkg/errs"
)

// Server registers go-kit endpoints as NATS micro endpoints. A micro handler
// is called one message at a time, so every request is dispatched to its own
// goroutine, bounded by a semaphore that applies back-pressure when full.
type Server struct {
	svc     micro.Service
	nc      *nats.Conn
	name    string
	sem     chan struct{}
	wg      sync.WaitGroup
	log     *slog.Logger
	timeout time.Duration
	base    context.Context
}

// ServerConfig configures a Server.
type ServerConfig struct {
	Name          string // service name, also the queue group
	Version       string
	MaxConcurrent int           // in-flight requests; default 256
	Timeout       time.Duration // used when a request carries no deadline; default 30s
	Logger        *slog.Logger
}

// NewServer registers a micro service on nc.
func NewServer(nc *nats.Conn, cfg ServerConfig) (*Server, error) {
	if cfg.MaxConcurrent <= 0 {
		cfg.MaxConcurrent = 256
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Version == "" {
		cfg.Version = "1.0.0"
	}
	svc, err := micro.AddService(nc, micro.Config{Name: cfg.Name, Version: cfg.Version, QueueGroup: cfg.Name})
	if err != nil {
		return nil, fmt.Errorf("natsx.NewServer %s: %w", cfg.Name, err)
	}
	return &Server{svc: svc, nc: nc, name: cfg.Name, sem: make(chan struct{}, cfg.MaxConcurrent), log: cfg.Logger, timeout: cfg.Timeout, base: context.Background()}, nil
}

// Handle serves subject with e. The endpoint receives a *Request and returns
// a *Response or any JSON-encodable value.
func (s *Server) Handle(subject string, e endpoint.Endpoint) error {
	name := strings.NewReplacer(".", "-", "*", "any", ">", "all").Replace(subject)
	err := s.svc.AddEndpoint(name, micro.HandlerFunc(func(r micro.Request) {
		s.sem <- struct{}{}
		s.wg.Add(1)
		go func() {
			defer func() { <-s.sem; s.wg.Done() }()
			s.serve(subject, e, r)
		}()
	}), micro.WithEndpointSubject(subject))
	if err != nil {
		return fmt.Errorf("natsx.Handle %s: %w", subject, err)
	}
	return nil
}

func (s *Server) serve(subject string, e endpoint.Endpoint, r micro.Request) {
	h := nats.Header(r.Headers())
	ctx, cancel := requestContext(s.base, h, s.timeout)
	defer cancel()
	req := &Request{Subject: r.Subject(), Body: r.Data(), ContentType: h.Get(HdrContentType), Header: h, Cursor: h.Get(HdrCursor)}
	req.Params, _ = url.ParseQuery(h.Get(HdrParams))
	req.Query, _ = url.ParseQuery(h.Get(HdrQuery))

	resp, err := s.call(ctx, e, req)
	if err != nil {
		s.replyError(ctx, subject, r, err)
		return
	}
	s.reply(ctx, subject, r, resp)
}

// call runs the endpoint and turns a panic into an internal error so one bad
// request cannot take the service down.
func (s *Server) call(ctx context.Context, e endpoint.Endpoint, req *Request) (resp any, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return e(ctx, req)
}

func (s *Server) reply(ctx context.Context, subject string, r micro.Request, resp any) {
	hdr := micro.Headers{}
	var body []byte
	var err error
	switch v := resp.(type) {
	case *Response:
		if v.Status != 0 {
			hdr[HdrStatus] = []string{strconv.Itoa(v.Status)}
		}
		if v.Disposition != "" {
			hdr[HdrDisposition] = []string{v.Disposition}
		}
		if v.NextCursor != "" {
			hdr[HdrNextCursor] = []string{v.NextCursor}
		}
		if v.Raw != nil {
			body = v.Raw
			hdr[HdrContentType] = []string{v.ContentType}
		} else {
			body, err = json.Marshal(v.Body)
		}
	default:
		body, err = json.Marshal(v)
	}
	if err != nil {
		s.replyError(ctx, subject, r, fmt.Errorf("encode response: %w", err))
		return
	}
	if err := s.respond(r, nats.Header(hdr), body); err != nil {
		s.log.Error("respond failed", "subject", subject, "request_id", RequestID(ctx), "err", err)
	}
}

// respond publishes the reply itself rather than through r.Respond or
// r.Error: those record the outcome in r, which micro reads as soon as the
// handler has returned, while this runs later in the request's goroutine.
func (s *Server) respond(r micro.Request, hdr nats.Header, body []byte) error {
	if r.Reply() == "" {
		return nats.ErrMsgNoReply
	}
	return s.nc.PublishMsg(&nats.Msg{Subject: r.Reply(), Header: hdr, Data: body})
}

func (s *Server) replyError(ctx context.Context, subject string, r micro.Request, err error) {
	code, msg, details := errs.Public(err)
	if errors.Is(err, context.DeadlineExceeded) {
		code, msg, details = errs.Timeout, "the request timed out", nil
	}
	if code == errs.Internal || code == errs.Timeout {
		s.log.Error("request failed", "service", s.name, "subject", subject, "request_id", RequestID(ctx), "err", err)
	}
	body, _ := json.Marshal(errs.Body{Error: msg, Code: code, Details: details})
	hdr := nats.Header{micro.ErrorHeader: {msg}, micro.ErrorCodeHeader: {code}}
	if rerr := s.respond(r, hdr, body); rerr != nil {
		s.log.Error("respond failed", "subject", subject, "request_id", RequestID(ctx), "err", rerr)
	}
}

// Stop stops taking requests and waits for the ones in flight.
func (s *Server) Stop() error {
	err := s.svc.Stop()
	s.wg.Wait()
	return err
}

// Decode strictly decodes a JSON body into v: unknown fields, trailing data
// and malformed JSON are INVALID_INPUT. An empty body decodes as {}.
func Decode(body []byte, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		body = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return errs.Invalid("malformed request body", errs.Field(jsonField(err), jsonIssue(err)))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errs.Invalid("malformed request body", errs.Field("", "unexpected data after the JSON value"))
	}
	return nil
}

func jsonField(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return te.Field
	}
	if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return strings.Trim(f, `"`)
	}
	return ""
}

func jsonIssue(err error) string {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		return "must be of type " + te.Type.String()
	case errors.As(err, &se):
		return "invalid JSON at offset " + strconv.FormatInt(se.Offset, 10)
	case strings.HasPrefix(err.Error(), "json: unknown field"):
		return "unknown field"
	}
	// Errors from UnmarshalJSON methods (money, dates) are written for clients.
	return strings.TrimPrefix(err.Error(), "json: ")
}

// Serve announces readiness once the server's subscriptions are known to
// the NATS server (they travel asynchronously, so a request sent after
// ready finds a responder), then blocks until ctx ends and stops, waiting
// for requests in flight.
func (s *Server) Serve(ctx context.Context, ready func()) error {
	if err := s.nc.FlushTimeout(10 * time.Second); err != nil {
		_ = s.Stop()
		return fmt.Errorf("natsx.Serve %s: flush subscriptions: %w", s.name, err)
	}
	if ready != nil {
		ready()
	}
	s.log.Info("serving", "service", s.name)
	<-ctx.Done()
	if err := s.Stop(); err != nil {
		s.log.Warn("stopping the NATS service", "service", s.name, "err", err)
	}
	return nil
}
