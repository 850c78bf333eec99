// Package natsrpc exposes the reporting service over NATS and consumes the
// ledger's events.
package natsrpc

import (
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/services/reporting"
)

// Register serves every reporting subject on s.
func Register(s *natsx.Server, svc *reporting.Service) error {
	for _, reg := range []func(*natsx.Server, *reporting.Service) error{registerReports, registerExports} {
		if err := reg(s, svc); err != nil {
			return err
		}
	}
	return nil
}
