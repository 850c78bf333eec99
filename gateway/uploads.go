package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ledgerplatform/ledger/contracts/gatewayv1"
	"github.com/ledgerplatform/ledger/gateway/contract"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/natsx"
)

// uploadTTL is how long an object stays in the uploads bucket when the
// service never collects it (it deletes what it read).
const uploadTTL = time.Hour

// maxFormOverhead is what a large upload's form may hold besides its file:
// boundaries, part headers and small text fields.
const maxFormOverhead = 1 << 20

// uploadBucket opens the uploads bucket once it is first needed, so a
// gateway without large uploads never touches JetStream for it.
type uploadBucket struct {
	mu  sync.Mutex
	obs jetstream.ObjectStore
}

func (g *Gateway) uploadStore(ctx context.Context) (jetstream.ObjectStore, error) {
	b := &g.uploads
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.obs != nil {
		return b.obs, nil
	}
	js, err := jetstream.New(g.deps.NC)
	if err != nil {
		return nil, err
	}
	obs, err := js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{
		Bucket: gatewayv1.UploadsBucket, Description: "large uploads on their way from the gateway to a service",
		TTL: uploadTTL, Storage: jetstream.FileStorage, Replicas: max(g.cfg.UploadReplicas, 1),
	})
	if err != nil {
		return nil, err
	}
	b.obs = obs
	return obs, nil
}

// fileLimit counts a file part as it streams and fails once it passes the
// limit, with FILE_TOO_LARGE.
type fileLimit struct {
	r     io.Reader
	n     int64
	limit int64
	h     hash.Hash
}

// Read fills p: the object store makes a chunk of every read, and a
// multipart part hands out a few KB at a time.
func (f *fileLimit) Read(p []byte) (int, error) {
	n, err := io.ReadFull(f.r, p)
	if errors.Is(err, io.ErrUnexpectedEOF) {
		err = io.EOF
	}
	f.n += int64(n)
	f.h.Write(p[:n])
	if f.n > f.limit {
		return n, tooLarge(f.limit)
	}
	return n, err
}

func tooLarge(limit int64) error {
	return errs.E(errs.FileTooLarge, "the file exceeds %d bytes; files sent here may have at most %d MB", limit, limit>>20)
}

// bodyLimit bounds the whole form; past it the upload is too large.
type bodyLimit struct {
	r     io.Reader
	n     int64
	limit int64
	file  int64
}

func (b *bodyLimit) Read(p []byte) (int, error) {
	if b.n >= b.limit {
		return 0, tooLarge(b.file)
	}
	if int64(len(p)) > b.limit-b.n {
		p = p[:b.limit-b.n]
	}
	n, err := b.r.Read(p)
	b.n += int64(n)
	return n, err
}

// readLargeUpload streams a LargeUpload route's form: its parts checked as
// the document says while they arrive, the file put into the uploads
// bucket, never the whole file in memory. The service gets a small
// UploadRequest naming the object; whatever fails after the put deletes it.
func (g *Gateway) readLargeUpload(r *http.Request, rt *route, req *natsx.Request) (*natsx.Request, error) {
	ct := r.Header.Get("Content-Type")
	if mt, _, _ := mime.ParseMediaType(ct); mt != "multipart/form-data" {
		return nil, errs.E(errs.UnsupportedMedia, "send this as multipart/form-data with a file field")
	}
	if r.ContentLength > g.cfg.MaxLargeUploadBytes+maxFormOverhead {
		return nil, tooLarge(g.cfg.MaxLargeUploadBytes)
	}
	ctx := r.Context()
	var put *gatewayv1.UploadRequest
	body := &bodyLimit{r: r.Body, limit: g.cfg.MaxLargeUploadBytes + maxFormOverhead, file: g.cfg.MaxLargeUploadBytes}
	texts, err := rt.op.StreamForm(ct, body, func(fp contract.FilePart) error {
		obs, err := g.uploadStore(ctx)
		if err != nil {
			return errs.Wrap("gateway: uploads bucket", err)
		}
		name := uuid.NewString()
		lr := &fileLimit{r: fp.R, limit: g.cfg.MaxLargeUploadBytes, h: sha256.New()}
		if _, err := obs.Put(ctx, jetstream.ObjectMeta{Name: name}, lr); err != nil {
			// Put deletes its chunks when the reader fails.
			var e *errs.Error
			if errors.As(err, &e) {
				return e
			}
			if ctx.Err() != nil {
				return errs.Invalid("the upload was cut short", errs.Field(fp.Field, "incomplete"))
			}
			g.deps.Log.Error("upload not stored", "route", rt.name, "err", err)
			return errs.Wrap("gateway: put upload", err)
		}
		put = &gatewayv1.UploadRequest{Field: fp.Field, Upload: gatewayv1.UploadRef{
			Bucket: gatewayv1.UploadsBucket, Name: name, Size: lr.n, SHA256: hex.EncodeToString(lr.h.Sum(nil)),
			FileName: fp.FileName, ContentType: fp.ContentType}}
		return nil
	})
	if err == nil && put == nil {
		err = errs.Invalid("request body required", errs.Field("file", "required"))
	}
	if err != nil {
		if put != nil {
			g.dropUpload(put.Upload.Name)
		}
		return nil, err
	}
	if len(texts) > 0 {
		put.Fields = texts
	}
	b, err := json.Marshal(put)
	if err != nil {
		g.dropUpload(put.Upload.Name)
		return nil, fmt.Errorf("gateway: upload request: %w", err)
	}
	req.Body, req.ContentType = b, "application/json"
	return req, nil
}

// dropUpload deletes an object no service will read; should that fail, the
// bucket's TTL removes it.
func (g *Gateway) dropUpload(name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	obs, err := g.uploadStore(ctx)
	if err == nil {
		err = obs.Delete(ctx, name)
	}
	if err != nil {
		g.deps.Log.Warn("upload not deleted; the bucket's TTL will", "object", name, "err", err)
	}
}

// mailFields are the form fields mail providers put the raw message in:
// Mailgun's body-mime, SendGrid's email.
var mailFields = []string{"body-mime", "email"}

// readMail streams a MailUpload route's message into the uploads bucket:
// the body itself (message/rfc822) or the message field of a provider's
// form, whose other fields (the provider's parsed copies of the message)
// are skipped unread. The service gets an UploadRequest naming the
// object, with the X-Webhook-Secret header as its field secret; it checks
// the secret before it reads the message and deletes the object either
// way.
func (g *Gateway) readMail(r *http.Request, req *natsx.Request) (*natsx.Request, error) {
	limit := g.cfg.MaxMailBytes
	if r.ContentLength > limit+maxFormOverhead {
		return nil, tooLarge(limit)
	}
	ctx := r.Context()
	body := &bodyLimit{r: r.Body, limit: limit + maxFormOverhead, file: limit}
	ct := r.Header.Get("Content-Type")
	mt, ps, _ := mime.ParseMediaType(ct)
	var msg io.Reader
	var form *multipart.Reader // the provider's form, read on after the message
	field := "message"
	switch mt {
	case "message/rfc822":
		msg = body
	case "multipart/form-data":
		if ps["boundary"] == "" {
			return nil, errs.E(errs.UnsupportedMedia, "send multipart/form-data with a boundary")
		}
		mr := multipart.NewReader(body, ps["boundary"])
		form = mr
		for msg == nil {
			p, err := mr.NextPart()
			if errors.Is(err, io.EOF) {
				return nil, errs.Invalid("the form holds no message", errs.Field("body-mime", "required: the raw message in body-mime or email"))
			}
			if err != nil {
				var e *errs.Error
				if errors.As(err, &e) {
					return nil, e
				}
				return nil, errs.Invalid("malformed multipart body", errs.Field("", "malformed"))
			}
			if slices.Contains(mailFields, p.FormName()) {
				msg, field = p, p.FormName()
				continue
			}
			if _, err := io.Copy(io.Discard, p); err != nil {
				var e *errs.Error
				if errors.As(err, &e) {
					return nil, e
				}
				return nil, errs.Invalid("malformed multipart body", errs.Field("", "malformed"))
			}
		}
	default:
		return nil, errs.E(errs.UnsupportedMedia, "send the raw message as message/rfc822, or a form with the field body-mime or email")
	}
	obs, err := g.uploadStore(ctx)
	if err != nil {
		return nil, errs.Wrap("gateway: uploads bucket", err)
	}
	name := uuid.NewString()
	lr := &fileLimit{r: msg, limit: limit, h: sha256.New()}
	if _, err := obs.Put(ctx, jetstream.ObjectMeta{Name: name}, lr); err != nil {
		var e *errs.Error
		if errors.As(err, &e) {
			return nil, e
		}
		if ctx.Err() != nil {
			return nil, errs.Invalid("the upload was cut short", errs.Field(field, "incomplete"))
		}
		g.deps.Log.Error("mail not stored", "err", err)
		return nil, errs.Wrap("gateway: put mail", err)
	}
	if lr.n == 0 {
		g.dropUpload(name)
		return nil, errs.Invalid("request body required", errs.Field(field, "required: the raw message"))
	}
	if form != nil {
		// The fields after the message: skipped, but a second message is
		// ambiguous.
		if err := skipRest(form); err != nil {
			g.dropUpload(name)
			return nil, err
		}
	}
	put := gatewayv1.UploadRequest{Field: field, Upload: gatewayv1.UploadRef{
		Bucket: gatewayv1.UploadsBucket, Name: name, Size: lr.n, SHA256: hex.EncodeToString(lr.h.Sum(nil)),
		FileName: "message.eml", ContentType: "message/rfc822"}}
	if s := r.Header.Get("X-Webhook-Secret"); s != "" {
		put.Fields = map[string]string{"secret": s}
	}
	b, err := json.Marshal(put)
	if err != nil {
		g.dropUpload(name)
		return nil, fmt.Errorf("gateway: mail request: %w", err)
	}
	req.Body, req.ContentType = b, "application/json"
	return req, nil
}

// skipRest reads a provider's form to its end; a second message field is
// refused.
func skipRest(mr *multipart.Reader) error {
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err == nil && slices.Contains(mailFields, p.FormName()) {
			return errs.Invalid("send one message per call", errs.Field(p.FormName(), "only one of body-mime and email, once"))
		}
		if err == nil {
			_, err = io.Copy(io.Discard, p)
		}
		if err != nil {
			var e *errs.Error
			if errors.As(err, &e) {
				return e
			}
			return errs.Invalid("malformed multipart body", errs.Field("", "malformed"))
		}
	}
}
