package ledger

// ChartStore reads and changes the chart of accounts and the tax codes.
type ChartStore interface{}
