// Package natsembed starts an in-process NATS server with file-backed
// JetStream, for `make run` and tests.
package natsembed

import (
	"fmt"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// Start runs a server storing JetStream data under dir. port -1 picks a free port.
func Start(dir string, host string, port int) (*server.Server, error) {
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
