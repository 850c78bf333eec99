package natsrpc_test

import (
	"context"
	"mime"
	"testing"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/pkg/daemon"
	"github.com/ledgerplatform/ledger/pkg/natsauth"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/pkg/testkit"
	"github.com/ledgerplatform/ledger/services/reporting"
	"github.com/ledgerplatform/ledger/services/reporting/postgres"
	"github.com/ledgerplatform/ledger/services/reporting/reportingd"
)

// rpc is the reporting service run by its daemon declaration on real
// Postgres and an embedded NATS server, its peers played by a route table
// of fakes.
type rpc struct {
	*testkit.RPC
	svc    *reporting.Service
	client *natsx.Client
}

// startReporting starts the fake peers and the reporting daemon; adjust,
// when set, changes what the daemon runs before it starts.
func startReporting(t *testing.T, peers []natsx.Route, adjust func(daemon.Env, *reporting.Service, *daemon.Parts)) *rpc {
	t.Helper()
	h := testkit.NewRPC(t, postgres.Migrations)
	r := &rpc{RPC: h, client: h.Bus.Client(t, natsauth.Gateway)}
	// The ledger owns its stream and creates it at start-up.
	if err := (natsx.Stream{Name: ledgerv1.StreamEvents, Subjects: []string{ledgerv1.EventsFilter}}).Ensure(context.Background(), h.JS); err != nil {
		t.Fatal(err)
	}
	h.Start(daemon.Service{Name: "fake-peers", Build: func(context.Context, daemon.Env) (daemon.Parts, error) {
		return daemon.Parts{Routes: peers}, nil
	}}, nil)
	svc, err := reportingd.Service(nil)
	if err != nil {
		t.Fatal(err)
	}
	svc.Build = func(_ context.Context, env daemon.Env) (daemon.Parts, error) {
		var parts daemon.Parts
		r.svc, parts = reportingd.Wire(env)
		if adjust != nil {
			adjust(env, r.svc, &parts)
		}
		return parts, nil
	}
	h.Start(svc, nil)
	return r
}

// fake is a route of a fake peer: internal, so the fake itself decides
// what it makes of the caller's claims.
func fake(subject string, f func(context.Context, *natsx.Request) (any, error)) natsx.Route {
	return natsx.Route{Subject: subject, Internal: true, Endpoint: natsx.Typed(f)}
}

// consumer returns the consumer durable of parts, taken out of them when
// take is set (the test runs it itself).
func consumer(t *testing.T, parts *daemon.Parts, durable string, take bool) *natsx.Consumer {
	t.Helper()
	for i := range parts.Consumers {
		if parts.Consumers[i].Durable == durable {
			c := parts.Consumers[i]
			if take {
				parts.Consumers = append(parts.Consumers[:i], parts.Consumers[i+1:]...)
				return &c
			}
			return &parts.Consumers[i]
		}
	}
	t.Fatalf("no consumer %s", durable)
	return nil
}

// fetch reads a streamed file as the gateway does: the first reply, then
// each Next-Cursor until there is none; an error reply ends it.
func (r *rpc) fetch(ctx context.Context, t *testing.T, subject string, req *natsx.Request) (first *natsx.Reply, body []byte, chunks int) {
	t.Helper()
	for {
		rep, err := r.client.Do(ctx, subject, req)
		if err != nil {
			t.Fatalf("chunk %d: %v", chunks, err)
		}
		if first == nil {
			first = rep
		}
		if rep.ErrCode != "" {
			return rep, nil, chunks
		}
		body = append(body, rep.Body...)
		chunks++
		if rep.NextCursor == "" {
			return first, body, chunks
		}
		req.Cursor = rep.NextCursor
	}
}

// wantFile fails the test unless first, the first reply of a fetch, is a
// success of the content type with the file name as its attachment.
func wantFile(t *testing.T, first *natsx.Reply, contentType, filename string) {
	t.Helper()
	if first.ErrCode != "" {
		t.Fatalf("%s: %s", first.ErrCode, first.Body)
	}
	if first.ContentType != contentType {
		t.Errorf("content type %q", first.ContentType)
	}
	if _, params, err := mime.ParseMediaType(first.Disposition); err != nil || params["filename"] != filename {
		t.Errorf("disposition %q", first.Disposition)
	}
}
