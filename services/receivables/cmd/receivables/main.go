// Command receivables runs the receivables service.
package main

import (
	"github.com/ledgerplatform/ledger/pkg/daemon"
	"github.com/ledgerplatform/ledger/services/receivables/receivablesd"
)

func main() { daemon.Main(receivablesd.Service) }
