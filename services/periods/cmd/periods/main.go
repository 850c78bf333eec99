// Command periods runs the periods service.
package main

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/ledgerplatform/ledger/services/periods/periodsd"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil)).With("service", "periods")
	cfg, err := periodsd.LoadConfig(os.Getenv)
	if err == nil {
		err = periodsd.Run(ctx, cfg, periodsd.Deps{Log: log})
	}
	if err != nil {
		log.Error("periods failed", "err", err)
		os.Exit(1)
	}
}
