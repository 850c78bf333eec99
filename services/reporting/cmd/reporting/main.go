// Command reporting runs the reporting service.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/ledgerplatform/ledger/services/reporting/reportingd"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg, err := reportingd.LoadConfig(os.Getenv)
	if err == nil {
		err = reportingd.Run(ctx, cfg, reportingd.Deps{Log: slog.New(slog.NewJSONHandler(os.Stderr, nil))})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
