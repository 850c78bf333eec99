package natsrpc

import (
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/services/ledger"
)

func registerReview(s *natsx.Server, svc *ledger.Service) error { return nil }
