// Package uploads reads what the gateway streamed into its uploads bucket
// (gatewayv1.UploadsBucket) for a service: a large statement file, an
// inbound e-mail.
package uploads

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"sync"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/ledgerplatform/ledger/contracts/gatewayv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
)

// Bucket reads the gateway's uploads bucket; services that take large
// uploads (statement files, e-mails) pass it as their Uploads.
type Bucket struct {
	JS jetstream.JetStream

	mu  sync.Mutex
	obs jetstream.ObjectStore
}

func (u *Bucket) store(ctx context.Context, bucket string) (jetstream.ObjectStore, error) {
	if bucket != gatewayv1.UploadsBucket {
		return nil, errs.Invalid("unknown uploads bucket", errs.Field("file", "unknown bucket"))
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.obs != nil {
		return u.obs, nil
	}
	obs, err := u.JS.ObjectStore(ctx, bucket)
	if err != nil {
		return nil, err
	}
	u.obs = obs
	return obs, nil
}

// Open opens the object name of bucket. It reads the object's chunks through an
// ordered pull consumer a few at a time instead of the object store's
// Get, whose push subscription lets the server deliver the whole object
// into the client's pending buffer whenever the parser is slower than the
// network: with pulls, memory per import stays a few chunks whatever the
// file's size.
func (u *Bucket) Open(ctx context.Context, bucket, name string) (io.ReadCloser, error) {
	obs, err := u.store(ctx, bucket)
	if err != nil {
		return nil, err
	}
	info, err := obs.GetInfo(ctx, name)
	if errors.Is(err, jetstream.ErrObjectNotFound) || err == nil && info.Deleted {
		return nil, errs.Invalid("the uploaded file is gone; send it again", errs.Field("file", "expired"))
	}
	if err != nil {
		return nil, err
	}
	r := &chunkReader{ctx: ctx, digest: sha256.New(), want: info.Digest, size: info.Size}
	if info.Size == 0 {
		r.done = true
		return r, nil
	}
	cons, err := u.JS.OrderedConsumer(ctx, "OBJ_"+bucket, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{"$O." + bucket + ".C." + info.NUID}})
	if err != nil {
		return nil, err
	}
	if r.it, err = cons.Messages(jetstream.PullMaxMessages(uploadChunksAhead)); err != nil {
		return nil, err
	}
	return r, nil
}

// uploadChunksAhead is how many chunks (128 KiB each, as the gateway
// writes them) an upload reader asks for ahead of the parser.
const uploadChunksAhead = 4

// chunkReader streams an object's chunks and checks its size and SHA-256
// at its end, as the object store's own reader does.
type chunkReader struct {
	ctx    context.Context
	it     jetstream.MessagesContext
	digest hash.Hash
	want   string
	size   uint64
	read   uint64
	buf    []byte
	done   bool
	err    error
}

func (r *chunkReader) Read(p []byte) (int, error) {
	for len(r.buf) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		if r.done {
			r.err = r.verify()
			continue
		}
		msg, err := r.it.Next(jetstream.NextContext(r.ctx))
		if err != nil {
			r.err = fmt.Errorf("read upload: %w", err)
			continue
		}
		meta, err := msg.Metadata()
		if err != nil {
			r.err = fmt.Errorf("read upload: %w", err)
			continue
		}
		r.buf = msg.Data()
		r.digest.Write(r.buf)
		r.read += uint64(len(r.buf))
		r.done = meta.NumPending == 0
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

// verify is io.EOF when what was read is the object the gateway stored.
func (r *chunkReader) verify() error {
	if r.read != r.size {
		return fmt.Errorf("read upload: %d bytes of %d", r.read, r.size)
	}
	if got := jetstream.GetObjectDigestValue(r.digest); got != r.want {
		return fmt.Errorf("read upload: digest mismatch")
	}
	return io.EOF
}

func (r *chunkReader) Close() error {
	if r.it != nil {
		r.it.Stop()
	}
	return nil
}

// Delete deletes what was read.
func (u *Bucket) Delete(ctx context.Context, bucket, name string) error {
	obs, err := u.store(ctx, bucket)
	if err != nil {
		return err
	}
	return obs.Delete(ctx, name)
}
