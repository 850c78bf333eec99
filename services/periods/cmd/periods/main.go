// Command periods runs the periods service.
package main

import (
	"github.com/ledgerplatform/ledger/pkg/daemon"
	"github.com/ledgerplatform/ledger/services/periods/periodsd"
)

func main() { daemon.Main(periodsd.Service) }
