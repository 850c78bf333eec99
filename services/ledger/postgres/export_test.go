package postgres

import (
	"encoding/json"

	"github.com/jackc/pgx/v5"

	"github.com/ledgerplatform/ledger/services/ledger"
)

// ChainColumns and ScanChain let tests play the attacker who rewrites the
// journal and recomputes its hashes.
const ChainColumns = chainColumns

// ChainRow is one event with what its hash covers.
type ChainRow struct {
	Event   ledger.Event
	Intent  ledger.ChainIntent
	Hash    []byte
	Version int
}

// ScanChain reads a row of ChainColumns.
func ScanChain(rows pgx.Rows) (ChainRow, error) {
	var r chainRow
	if err := scanChainRow(rows, &r); err != nil {
		return ChainRow{}, err
	}
	err := json.Unmarshal(r.prov, &r.in.Provenance)
	return ChainRow{Event: r.e, Intent: r.in, Hash: r.hash, Version: int(r.version)}, err
}
