// Package natsembed starts an in-process NATS server with file-backed
// JetStream, for `make run` and tests. Like every NATS of the platform it
// admits only the NKEYs it is given, each with the permissions of
// natsauth.Table.
package natsembed

import (
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/ledgerplatform/ledger/pkg/natsauth"
)

// User is one NKEY the server admits. Nil Permissions allow everything: only
// test harnesses, which play peers that do not exist yet, use that.
type User struct {
	PublicKey   string
	Permissions *natsauth.Permissions
}

// Users are the users of natsauth.Table with the public keys of ks.
func Users(ks natsauth.Keys) []User {
	var out []User
	for _, n := range natsauth.Names() {
		if k := ks[n]; k != nil {
			p := natsauth.Table[n]
			out = append(out, User{PublicKey: k.Public(), Permissions: &p})
		}
	}
	return out
}

// Start runs a server storing JetStream data under dir. port -1 picks a
// free port. Without users it refuses to start: an open NATS lets anyone
// act as any service.
func Start(dir string, host string, port int, users []User) (*server.Server, error) {
	if len(users) == 0 {
		return nil, errors.New("natsembed.Start: no users: NATS never runs without authentication")
	}
	opts := &server.Options{
		ServerName: "ledger-embedded",
		Host:       host,
		Port:       port,
		JetStream:  true,
		StoreDir:   dir,
		// Documents of up to 10 MB travel inside requests.
		MaxPayload: 16 << 20,
		NoSigs:     true,
		// Acknowledged messages are on disk before the ack returns.
		SyncAlways: true,
	}
	for _, u := range users {
		nu := &server.NkeyUser{Nkey: u.PublicKey}
		if p := u.Permissions; p != nil {
			nu.Permissions = &server.Permissions{
				Publish:   &server.SubjectPermission{Allow: p.Publish, Deny: p.PublishDeny},
				Subscribe: &server.SubjectPermission{Allow: p.Subscribe},
			}
		}
		opts.Nkeys = append(opts.Nkeys, nu)
	}
	s, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("natsembed.Start: %w", err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		s.Shutdown()
		return nil, fmt.Errorf("natsembed.Start: server not ready after 10s")
	}
	return s, nil
}
