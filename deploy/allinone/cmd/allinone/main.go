// Command allinone runs the whole platform in one process (`make run`).
package main

import (
	"context"
	"log/slog"

	"github.com/ledgerplatform/ledger/deploy/allinone"
	"github.com/ledgerplatform/ledger/gateway/gatewayd"
	"github.com/ledgerplatform/ledger/pkg/daemon"
)

func main() {
	daemon.Process(func(ctx context.Context, getenv func(string) string, log *slog.Logger) error {
		cfg, err := allinone.LoadConfig(getenv)
		if err != nil {
			return err
		}
		return allinone.Run(ctx, cfg, allinone.Deps{Deps: gatewayd.Deps{Log: log, Ready: func(addr string) {
			log.Info("platform ready", "gateway", "http://"+addr)
		}}})
	})
}
