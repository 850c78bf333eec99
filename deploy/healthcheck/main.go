// Command healthcheck is the container health probe. The runtime image has
// no shell, curl or wget, so compose and Kubernetes exec this instead.
//
//	healthcheck http <url>                 GET url, healthy on 2xx
//	healthcheck nats <nats-url> <service>  a NATS micro service of that name answers $SRV.PING
//
// The NATS probe logs in with the service's own NKEY (NATS_NKEY_SEED or
// NATS_NKEY_SEED_FILE, as the service reads it): NATS admits nobody else.
//
// Exit status 0 is healthy, 1 is not.
package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/ledgerplatform/ledger/pkg/natsauth"
)

const timeout = 3 * time.Second

func main() {
	if err := run(os.Args[1:], os.Getenv); err != nil {
		fmt.Fprintln(os.Stderr, "unhealthy:", err)
		os.Exit(1)
	}
}

func run(args []string, getenv func(string) string) error {
	switch {
	case len(args) == 2 && args[0] == "http":
		return checkHTTP(args[1])
	case len(args) == 3 && args[0] == "nats":
		return checkNATS(args[1], args[2], getenv)
	default:
		return fmt.Errorf("usage: healthcheck http <url> | healthcheck nats <nats-url> <service>")
	}
}

func checkHTTP(url string) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("%s: status %d", url, resp.StatusCode)
	}
	return nil
}

func checkNATS(url, service string, getenv func(string) string) error {
	key, err := natsauth.KeyFromEnv(service, getenv)
	if err != nil {
		return err
	}
	nc, err := nats.Connect(url, append(key.Options(), nats.Name("healthcheck"), nats.Timeout(timeout))...)
	if err != nil {
		return err
	}
	defer nc.Close()
	if _, err := nc.Request("$SRV.PING."+service, nil, timeout); err != nil {
		return fmt.Errorf("service %s does not answer on %s: %w", service, url, err)
	}
	return nil
}
