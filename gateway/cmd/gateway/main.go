// Command gateway serves the /v1 REST API.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/ledgerplatform/ledger/gateway/gatewayd"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg, err := gatewayd.LoadConfig(os.Getenv)
	if err == nil {
		err = gatewayd.Run(ctx, cfg, gatewayd.Deps{})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
