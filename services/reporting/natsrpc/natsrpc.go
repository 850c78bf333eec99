// Package natsrpc exposes the reporting service over NATS and consumes the
// ledger's events.
package natsrpc

import (
	"github.com/ledgerplatform/ledger/pkg/idem"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/services/reporting"
)

// Register serves every reporting subject on s. keys, if given, keeps the
// Idempotency-Key records of the routes that create something.
func Register(s *natsx.Server, svc *reporting.Service, keys ...idem.Store) error {
	for _, reg := range []func(*natsx.Server, *reporting.Service) error{registerReports, registerExports} {
		if err := reg(s, svc); err != nil {
			return err
		}
	}
	var k idem.Store
	if len(keys) > 0 {
		k = keys[0]
	}
	return registerJobs(s, svc, k)
}
