// Command payables runs the payables service.
package main

import (
	"github.com/ledgerplatform/ledger/pkg/daemon"
	"github.com/ledgerplatform/ledger/services/payables/payablesd"
)

func main() { daemon.Main(payablesd.Service) }
