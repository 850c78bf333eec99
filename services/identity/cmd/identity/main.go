// Command identity runs the identity service.
package main

import (
	"github.com/ledgerplatform/ledger/pkg/daemon"
	"github.com/ledgerplatform/ledger/services/identity/identityd"
)

func main() { daemon.Main(identityd.Service) }
