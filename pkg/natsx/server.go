package natsx

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-kit/kit/endpoint"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/natsauth"
)

// Server serves go-kit endpoints as NATS micro endpoints. A micro handler
// is called one message at a time per subscription, so each route is
// subscribed Workers times in the service's queue group: requests run
// concurrently, and each reply goes through micro's own Respond, so its
// statistics (requests, errors, processing time) count every request.
//
// NATS hands a queue group's messages to its members at random, busy or
// not, so a request can wait behind another on the same subscription.
// With W workers and C requests in flight about C²/2W of them wait; a hot
// path declares more workers (Route.Workers) so that few ever do.
type Server struct {
	svc     micro.Service
	nc      *nats.Conn
	name    string
	workers int
	wg      sync.WaitGroup
	log     *slog.Logger
	timeout time.Duration
	metrics *Metrics
	trust   *natsauth.Trust
}

// HostMetadata is the micro metadata key holding the instance's host name.
const HostMetadata = "host"

// ServerConfig configures a Server.
type ServerConfig struct {
	Name    string // service name, also the queue group
	Version string
	// Workers is how many requests of one subject an instance handles at
	// once; default 128.
	Workers int
	Timeout time.Duration // used when a request carries no deadline; default 30s
	Logger  *slog.Logger
	// Trust verifies the signed principal of every request; required.
	Trust *natsauth.Trust
}

// NewServer registers a micro service on nc.
func NewServer(nc *nats.Conn, cfg ServerConfig) (*Server, error) {
	if cfg.Trust == nil {
		return nil, fmt.Errorf("natsx.NewServer %s: no trusted signers", cfg.Name)
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 128
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
	m := newMetrics()
	// The host lets a liveness probe in this pod find its own instance
	// among the replicas answering $SRV.PING (deploy/healthcheck live).
	host, _ := os.Hostname()
	svc, err := micro.AddService(nc, micro.Config{Name: cfg.Name, Version: cfg.Version, QueueGroup: cfg.Name, StatsHandler: m.stats,
		Metadata: map[string]string{HostMetadata: host}})
	if err != nil {
		return nil, fmt.Errorf("natsx.NewServer %s: %w", cfg.Name, err)
	}
	return &Server{svc: svc, nc: nc, name: cfg.Name, workers: cfg.Workers, log: cfg.Logger, timeout: cfg.Timeout, metrics: m, trust: cfg.Trust}, nil
}

// DecodeFunc turns a NATS request into an endpoint's typed request.
type DecodeFunc func(ctx context.Context, r *Request) (any, error)

// Route is one line of a service's route table: a subject, how its request
// is decoded and the endpoint that answers it.
type Route struct {
	Subject string
	// Decode builds the endpoint's typed request; nil hands it the
	// *Request.
	Decode   DecodeFunc
	Endpoint endpoint.Endpoint
	// Internal routes act for no tenant (the gateway's credential checks,
	// login); every other route acts for the tenant of the verified
	// principal, whether a caller's or a service's own.
	Internal bool
	// Callers, when set, are the only signers whose principal the route
	// accepts ("gateway" or a service's name), checked on the verified
	// principal beside the NATS permissions of the subject.
	Callers []string
	// Idempotent routes answer a repeated Idempotency-Key with the first
	// answer.
	Idempotent bool
	// Workers raises the number of requests of this subject an instance
	// handles at once above the server's, for a hot path (postings).
	Workers int
}

// Mount serves one route; mw wrap its endpoint, the first outermost.
// Decoding is the innermost step, so middleware such as the tenant check
// answers before a body is even read.
func (s *Server) Mount(rt Route, mw ...endpoint.Middleware) error {
	e := rt.Endpoint
	if rt.Decode != nil {
		e = decoded(rt.Decode, e)
	}
	for i := len(mw) - 1; i >= 0; i-- {
		e = mw[i](e)
	}
	base := strings.NewReplacer(".", "-", "*", "any", ">", "all").Replace(rt.Subject)
	h := micro.HandlerFunc(func(r micro.Request) { s.serve(rt.Subject, e, r) })
	for i := 0; i < max(s.workers, rt.Workers); i++ {
		if err := s.svc.AddEndpoint(base+"-"+strconv.Itoa(i), h, micro.WithEndpointSubject(rt.Subject)); err != nil {
			return fmt.Errorf("natsx.Mount %s: %w", rt.Subject, err)
		}
	}
	return nil
}

// decoded is the endpoint of a *Request that decodes it for e.
func decoded(dec DecodeFunc, e endpoint.Endpoint) endpoint.Endpoint {
	return func(ctx context.Context, request any) (any, error) {
		r, ok := request.(*Request)
		if !ok {
			return nil, fmt.Errorf("natsx: request is %T, want *natsx.Request", request)
		}
		in, err := dec(ctx, r)
		if err != nil {
			return nil, err
		}
		return e(ctx, in)
	}
}

type requestKey struct{}

// RequestFrom returns the raw request an endpoint is serving, for endpoint
// middleware that needs more than the decoded value (idempotency hashes
// the whole request).
func RequestFrom(ctx context.Context) *Request {
	r, _ := ctx.Value(requestKey{}).(*Request)
	return r
}

func (s *Server) serve(subject string, e endpoint.Endpoint, r micro.Request) {
	s.wg.Add(1)
	defer s.wg.Done()
	start := time.Now()
	h := nats.Header(r.Headers())
	p, err := verify(h, s.trust)
	if err != nil {
		s.metrics.observe(subject, s.replyError(context.Background(), subject, r, err), time.Since(start))
		return
	}
	ctx, cancel := requestContext(context.Background(), h, p, s.timeout)
	defer cancel()
	req := &Request{Subject: r.Subject(), Body: r.Data(), ContentType: h.Get(HdrContentType), Header: h, Cursor: h.Get(HdrCursor)}
	req.Params, _ = url.ParseQuery(h.Get(HdrParams))
	req.Query, _ = url.ParseQuery(h.Get(HdrQuery))
	ctx = context.WithValue(ctx, requestKey{}, req)

	resp, err := s.call(ctx, e, req)
	if err == nil {
		err = s.reply(r, resp)
	}
	code := ""
	if err != nil {
		code = s.replyError(ctx, subject, r, err)
	}
	s.metrics.observe(subject, code, time.Since(start))
}

// call runs the endpoint, turning a panic into an internal error so one
// bad request cannot take the service down.
func (s *Server) call(ctx context.Context, e endpoint.Endpoint, req *Request) (resp any, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return e(ctx, req)
}

// reply encodes resp; an error is returned only when nothing was sent.
func (s *Server) reply(r micro.Request, resp any) error {
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
		return fmt.Errorf("encode response: %w", err)
	}
	if err := r.Respond(body, micro.WithHeaders(hdr)); err != nil {
		s.log.Error("respond failed", "service", s.name, "subject", r.Subject(), "err", err)
	}
	return nil
}

// replyError answers err in the one error vocabulary and returns its code.
func (s *Server) replyError(ctx context.Context, subject string, r micro.Request, err error) string {
	code, msg, details := errs.Public(err)
	if errors.Is(err, context.DeadlineExceeded) {
		code, msg, details = errs.Timeout, "the request timed out", nil
	}
	if code == errs.Internal || code == errs.Timeout {
		s.log.Error("request failed", "service", s.name, "subject", subject, "request_id", RequestID(ctx), "err", err)
	}
	body, _ := json.Marshal(errs.Body{Error: msg, Code: code, Details: details})
	if rerr := r.Error(code, msg, body); rerr != nil {
		s.log.Error("respond failed", "service", s.name, "subject", subject, "request_id", RequestID(ctx), "err", rerr)
	}
	return code
}

// Stop stops taking requests, lets the subscriptions drain and waits for
// the requests in flight.
func (s *Server) Stop() error {
	err := s.svc.Stop()
	s.wg.Wait()
	return err
}

// Serve announces readiness once the server's subscriptions are known to
// the NATS server (they travel asynchronously, so a request sent after
// ready finds a responder), then blocks until ctx ends and stops.
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
