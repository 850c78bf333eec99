// Command healthcheck is the container health probe. The runtime image has
// no shell, curl or wget, so compose and Kubernetes exec this instead.
//
//	healthcheck http <url>                 GET url, healthy on 2xx
//	healthcheck nats <nats-url> <service>  a NATS micro service of that name answers $SRV.PING
//	healthcheck live <nats-url> <service>  this host's instance of the service answers $SRV.PING
//
// nats is readiness: any replica answering will do. live is liveness: it
// fails only when NATS answers but this pod's instance does not (hung, or
// its connection lost), and passes when NATS itself cannot be reached, since
// restarting every service during a NATS outage would only add to it.
//
// The NATS probe logs in with the service's own NKEY (NATS_NKEY_SEED or
// NATS_NKEY_SEED_FILE, as the service reads it): NATS admits nobody else.
//
// Exit status 0 is healthy, 1 is not.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/ledgerplatform/ledger/pkg/natsauth"
	"github.com/ledgerplatform/ledger/pkg/natsx"
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
	case len(args) == 3 && args[0] == "live":
		host, err := os.Hostname()
		if err != nil {
			return err
		}
		return checkLive(args[1], args[2], host, getenv)
	default:
		return fmt.Errorf("usage: healthcheck http <url> | healthcheck nats|live <nats-url> <service>")
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
	nc, err := login(url, service, getenv)
	if err != nil {
		return err
	}
	defer nc.Close()
	if _, err := nc.Request("$SRV.PING."+service, nil, timeout); err != nil {
		return fmt.Errorf("service %s does not answer on %s: %w", service, url, err)
	}
	return nil
}

// login connects with the service's own NKEY: NATS admits nobody else.
func login(url, service string, getenv func(string) string) (*nats.Conn, error) {
	key, err := natsauth.KeyFromEnv(service, getenv)
	if err != nil {
		return nil, err
	}
	nc, err := nats.Connect(url, append(key.Options(), nats.Name("healthcheck"), nats.Timeout(timeout))...)
	if err != nil {
		return nil, &connectErr{err}
	}
	return nc, nil
}

// connectErr is a failure to reach or log in to NATS, as opposed to a
// missing key.
type connectErr struct{ err error }

func (e *connectErr) Error() string { return e.err.Error() }
func (e *connectErr) Unwrap() error { return e.err }

func checkLive(url, service, host string, getenv func(string) string) error {
	nc, err := login(url, service, getenv)
	var conn *connectErr
	switch {
	case errors.As(err, &conn) && !errors.Is(err, nats.ErrAuthorization):
		// Only an unreachable NATS passes: a missing or refused key is
		// this process's own problem.
		fmt.Fprintln(os.Stderr, "NATS unreachable; not this process's fault:", err)
		return nil
	case err != nil:
		return err
	}
	defer nc.Close()
	inbox := nc.NewRespInbox()
	sub, err := nc.SubscribeSync(inbox)
	if err != nil {
		return err
	}
	if err := nc.PublishRequest("$SRV.PING."+service, inbox, nil); err != nil {
		return err
	}
	// Every replica answers; read until this host's instance has.
	deadline := time.Now().Add(timeout)
	for {
		msg, err := sub.NextMsg(time.Until(deadline))
		if err != nil {
			return fmt.Errorf("no instance of %s on host %s answers on %s: %w", service, host, url, err)
		}
		var ping micro.Ping
		if json.Unmarshal(msg.Data, &ping) == nil && ping.Metadata[natsx.HostMetadata] == host {
			return nil
		}
	}
}
