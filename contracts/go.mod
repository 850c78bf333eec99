module github.com/ledgerplatform/ledger/contracts

go 1.26.8

require (
	github.com/google/go-cmp v0.7.0
	github.com/shopspring/decimal v1.6.0
)
