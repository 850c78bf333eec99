// Command reporting runs the reporting service.
package main

import (
	"github.com/ledgerplatform/ledger/pkg/daemon"
	"github.com/ledgerplatform/ledger/services/reporting/reportingd"
)

func main() { daemon.Main(reportingd.Service) }
