// Command identity runs the identity service.
package main

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/ledgerplatform/ledger/services/identity/identityd"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil)).With("service", "identity")
	cfg, err := identityd.LoadConfig(os.Getenv)
	if err == nil {
		err = identityd.Run(ctx, cfg, identityd.Deps{Log: log})
	}
	if err != nil {
		log.Error("identity failed", "err", err)
		os.Exit(1)
	}
}
