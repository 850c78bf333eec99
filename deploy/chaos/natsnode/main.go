// Command natsnode is one NATS server with JetStream, as a process of its
// own, so the fault test (`make chaos`) can run a real 3-node cluster on one
// machine and kill its nodes with SIGKILL, without a system nats-server.
//
//	natsnode -name n0 -listen 127.0.0.1:4222 -cluster 127.0.0.1:6222 \
//	    -routes nats-route://127.0.0.1:6222,nats-route://127.0.0.1:6223,... -store /tmp/n0
//
// -config reads a nats-server configuration file first (accounts, users,
// authorization, TLS…); the flags given then override its listen
// addresses, routes and store. The fault test gives it the authorization
// block of every deployment (pkg/natsauth.Conf, public keys from the
// environment, NKEY_<NAME>) and, with -harness-nkey, one more NKEY without
// restrictions for its own inspecting connection. Acknowledged messages are
// fsynced before the acknowledgement (sync_interval: always), as in
// deploy/nats/nats.conf.
package main

import (
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "natsnode:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("natsnode", flag.ContinueOnError)
	config := fs.String("config", "", "nats-server configuration file read before the flags (optional)")
	name := fs.String("name", "", "server name, unique in the cluster (required)")
	listen := fs.String("listen", "127.0.0.1:4222", "client address")
	cluster := fs.String("cluster", "", "cluster (route) address; empty runs a single server")
	clusterName := fs.String("cluster-name", "chaos", "cluster name")
	routes := fs.String("routes", "", "comma-separated nats-route:// URLs of the peers (itself may be listed)")
	store := fs.String("store", "", "JetStream store directory (required)")
	harness := fs.String("harness-nkey", "", "public NKEY (U…) admitted with every permission, besides the users of -config (a test's own connection)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *name == "" || *store == "" {
		return fmt.Errorf("-name and -store are required")
	}
	opts := &server.Options{}
	if *config != "" {
		var err error
		if opts, err = server.ProcessConfigFile(*config); err != nil {
			return err
		}
	}
	opts.ServerName = *name
	if *harness != "" {
		opts.Nkeys = append(opts.Nkeys, &server.NkeyUser{Nkey: *harness})
	}
	var err error
	if opts.Host, opts.Port, err = hostPort(*listen); err != nil {
		return fmt.Errorf("-listen: %w", err)
	}
	if *cluster != "" {
		if opts.Cluster.Host, opts.Cluster.Port, err = hostPort(*cluster); err != nil {
			return fmt.Errorf("-cluster: %w", err)
		}
		opts.Cluster.Name = *clusterName
		opts.Routes = server.RoutesFromStr(*routes)
		opts.Cluster.ConnectRetries = 120
	}
	opts.JetStream = true
	opts.StoreDir = *store
	opts.SyncAlways = true
	opts.MaxPayload = 16 << 20 // documents of up to 10 MB travel inside requests
	opts.NoSigs = true         // signals are handled below

	s, err := server.NewServer(opts)
	if err != nil {
		return err
	}
	s.ConfigureLogger()
	go s.Start()
	if !s.ReadyForConnections(30 * time.Second) {
		s.Shutdown()
		return fmt.Errorf("not ready for connections after 30s")
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
	s.Shutdown()
	s.WaitForShutdown()
	return nil
}

func hostPort(addr string) (string, int, error) {
	host, port, err := net.SplitHostPort(strings.TrimSpace(addr))
	if err != nil {
		return "", 0, err
	}
	p, err := strconv.Atoi(port)
	return host, p, err
}
