module github.com/ledgerplatform/ledger/contracts

go 1.26.8
