package reporting

// ProjectionStore keeps balances per tenant, account and month.
type ProjectionStore interface{}
