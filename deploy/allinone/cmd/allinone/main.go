// Command allinone runs the whole platform in one process (`make run`).
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/ledgerplatform/ledger/deploy/allinone"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	cfg, err := allinone.LoadConfig(os.Getenv)
	if err == nil {
		err = allinone.Run(ctx, cfg, allinone.Deps{Log: log, Ready: func(addr string) {
			log.Info("platform ready", "gateway", "http://"+addr)
		}})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "allinone:", err)
		os.Exit(1)
	}
	log.Info("platform stopped")
}
