package reporting

import (
	"context"
	"sync/atomic"

	"github.com/ledgerplatform/ledger/pkg/errs"
)

// pieceWriter cuts what is written into pieces of size bytes and stores
// them as they fill. With keepFirst, piece 0 stays in memory (first) for
// the first chunk of a streamed export; otherwise every piece is stored,
// from piece 0 on, as a job's file is.
type pieceWriter struct {
	ctx        context.Context
	store      ExportStore
	tenant, id string
	size       int
	keepFirst  bool
	first, cur []byte
	seq        int          // complete pieces so far
	bytes      atomic.Int64 // written so far
}

func (w *pieceWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		if w.cur == nil {
			w.cur = make([]byte, 0, w.size)
		}
		k := min(len(p), w.size-len(w.cur))
		w.cur, p = append(w.cur, p[:k]...), p[k:]
		if len(w.cur) == w.size {
			if err := w.piece(); err != nil {
				return 0, err
			}
		}
	}
	w.bytes.Add(int64(n))
	return n, nil
}

func (w *pieceWriter) piece() error {
	if w.seq == 0 && w.keepFirst {
		w.first, w.cur = w.cur, nil
	} else {
		if w.cur == nil {
			w.cur = []byte{} // an empty file is one empty piece
		}
		if err := w.store.PutExportBlob(w.ctx, w.tenant, w.id, w.seq, w.cur); err != nil {
			return errs.Wrap("store export piece", err)
		}
		w.cur = w.cur[:0]
	}
	w.seq++
	return nil
}

// Close stores the last, partial piece.
func (w *pieceWriter) Close() error {
	if len(w.cur) > 0 || w.seq == 0 {
		return w.piece()
	}
	return nil
}
