// Command natskeys renders the NATS authorization of compose and
// Kubernetes from pkg/natsauth.Table, and makes fresh keys.
//
//	go run ./deploy/natskeys                  rewrite deploy/nats/auth.conf from the table
//	go run ./deploy/natskeys -out DIR         also write fresh keys: DIR/seeds.env (0600,
//	                                          <NAME>_NATS_NKEY_SEED=SU…, secret) and
//	                                          DIR/public.env (NKEY_<NAME>=U… for the NATS
//	                                          server and PLATFORM_SIGNERS for the services)
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ledgerplatform/ledger/pkg/natsauth"
)

func main() {
	conf := flag.String("conf", "deploy/nats/auth.conf", "the authorization file to write")
	out := flag.String("out", "", "a directory to write fresh keys to (seeds.env, public.env)")
	flag.Parse()
	if err := run(*conf, *out); err != nil {
		fmt.Fprintln(os.Stderr, "natskeys:", err)
		os.Exit(1)
	}
}

func run(conf, out string) error {
	if err := os.WriteFile(conf, []byte(natsauth.Conf()), 0o644); err != nil {
		return err
	}
	if out == "" {
		return nil
	}
	keys, err := natsauth.Generate()
	if err != nil {
		return err
	}
	seeds, public := envFiles(keys)
	if err := os.MkdirAll(out, 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "seeds.env"), []byte(seeds), 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "public.env"), []byte(public), 0o644); err != nil {
		return err
	}
	fmt.Printf("wrote %s and fresh keys to %s (seeds.env is secret)\n", conf, out)
	return nil
}

// envFiles renders keys as the two env files.
func envFiles(keys natsauth.Keys) (seeds, public string) {
	var s, p strings.Builder
	for _, n := range natsauth.Names() {
		seed, _ := keys[n].Seed()
		fmt.Fprintf(&s, "%s=%s\n", natsauth.EnvSeed(n), seed)
		fmt.Fprintf(&p, "%s=%s\n", natsauth.EnvPublicKey(n), keys[n].Public())
	}
	fmt.Fprintf(&p, "PLATFORM_SIGNERS=%s\n", keys.Signers())
	return s.String(), p.String()
}
