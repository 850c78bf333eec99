// Command ledger runs the ledger service.
package main

import (
	"github.com/ledgerplatform/ledger/pkg/daemon"
	"github.com/ledgerplatform/ledger/services/ledger/ledgerd"
)

func main() { daemon.Main(ledgerd.Service) }
