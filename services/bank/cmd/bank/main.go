// Command bank runs the bank service.
package main

import (
	"github.com/ledgerplatform/ledger/pkg/daemon"
	"github.com/ledgerplatform/ledger/services/bank/bankd"
)

func main() { daemon.Main(bankd.Service) }
