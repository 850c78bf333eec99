// Command ledger runs the ledger service.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/ledgerplatform/ledger/services/ledger/ledgerd"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg, err := ledgerd.LoadConfig(os.Getenv)
	if err == nil {
		err = ledgerd.Run(ctx, cfg, ledgerd.Deps{Log: slog.New(slog.NewJSONHandler(os.Stderr, nil))})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
