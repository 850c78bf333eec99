// Command gateway serves the /v1 REST API and the MCP endpoint.
package main

import (
	"context"
	"log/slog"

	"github.com/ledgerplatform/ledger/gateway/gatewayd"
	"github.com/ledgerplatform/ledger/pkg/daemon"
)

func main() {
	daemon.Process(func(ctx context.Context, getenv func(string) string, log *slog.Logger) error {
		cfg, err := gatewayd.LoadConfig(getenv)
		if err != nil {
			return err
		}
		return gatewayd.Run(ctx, cfg, gatewayd.Deps{Log: log})
	})
}
