package ledger

// DocumentStore keeps uploaded originals unchanged.
type DocumentStore interface{}
