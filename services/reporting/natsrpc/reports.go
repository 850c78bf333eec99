package natsrpc

import (
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/services/reporting"
)

func registerReports(s *natsx.Server, svc *reporting.Service) error { return nil }
