package ledger

// ReviewStore keeps the review queue.
type ReviewStore interface{}
