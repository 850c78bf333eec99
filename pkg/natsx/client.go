package natsx

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"mime/multipart"
	"net/textproto"
	"net/url"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/natsauth"
)

// Client sends requests to services.
type Client struct {
	NC *nats.Conn
	// Signer signs the principal of every request: the gateway's key, or
	// the calling service's own (see contextHeaders).
	Signer  *natsauth.Key
	Timeout time.Duration // used when ctx has no deadline; default 30s
}

// Reply is a service's answer as the gateway needs it.
type Reply struct {
	Status      int // 200 unless the service chose another; set for errors too
	Body        []byte
	ContentType string
	Disposition string
	NextCursor  string // set when a streaming endpoint has more chunks
	ErrCode     string // machine code when the service answered an error
}

// Do sends req to subject and returns the raw reply. Transport failures come
// back as *errs.Error (UNAVAILABLE, TIMEOUT).
func (c *Client) Do(ctx context.Context, subject string, req *Request) (*Reply, error) {
	if _, ok := ctx.Deadline(); !ok {
		t := c.Timeout
		if t <= 0 {
			t = 30 * time.Second
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, t)
		defer cancel()
	}
	msg := nats.NewMsg(subject)
	msg.Data = req.Body
	if err := contextHeaders(ctx, msg.Header, c.Signer); err != nil {
		return nil, fmt.Errorf("natsx.Do %s: %w", subject, err)
	}
	if len(req.Params) > 0 {
		msg.Header.Set(HdrParams, req.Params.Encode())
	}
	if len(req.Query) > 0 {
		msg.Header.Set(HdrQuery, req.Query.Encode())
	}
	if req.ContentType != "" {
		msg.Header.Set(HdrContentType, req.ContentType)
	}
	if req.Cursor != "" {
		msg.Header.Set(HdrCursor, req.Cursor)
	}
	resp, err := c.NC.RequestMsgWithContext(ctx, msg)
	switch {
	case errors.Is(err, nats.ErrNoResponders):
		return nil, &errs.Error{Code: errs.Unavailable, Message: "service unavailable", Op: subject, Err: err}
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, nats.ErrTimeout):
		return nil, &errs.Error{Code: errs.Timeout, Message: "the request timed out", Op: subject, Err: err}
	case err != nil:
		return nil, fmt.Errorf("natsx.Do %s: %w", subject, err)
	}
	r := &Reply{Status: 200, Body: resp.Data, ContentType: resp.Header.Get(HdrContentType),
		Disposition: resp.Header.Get(HdrDisposition), NextCursor: resp.Header.Get(HdrNextCursor)}
	if code := resp.Header.Get(HdrErrorCode); code != "" {
		r.ErrCode = code
		r.Status = errs.Status(code)
		return r, nil
	}
	if s, err := strconv.Atoi(resp.Header.Get(HdrStatus)); err == nil {
		r.Status = s
	}
	return r, nil
}

// Call is the typed form for service-to-service calls: in is sent as JSON,
// a success body is decoded into out (when non-nil) and an error reply
// becomes an *errs.Error with the service's code, message and details.
func (c *Client) Call(ctx context.Context, subject string, params url.Values, in, out any) error {
	req := &Request{Params: params}
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("natsx.Call %s: encode: %w", subject, err)
		}
		req.Body = b
	}
	return c.call(ctx, subject, req, out)
}

// CallQuery is Call for a GET route: no body, the query parameters travel
// as the request's query.
func (c *Client) CallQuery(ctx context.Context, subject string, params, query url.Values, out any) error {
	return c.call(ctx, subject, &Request{Params: params, Query: query}, out)
}

// CallFile is Call for a route that takes an upload as the gateway sends
// one: a multipart/form-data body with content as the file of field (a
// name that is not ASCII goes as RFC 2231).
func (c *Client) CallFile(ctx context.Context, subject, field, name, mimeType string, content []byte, out any) error {
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", mime.FormatMediaType("form-data", map[string]string{"name": field, "filename": name}))
	h.Set("Content-Type", mimeType)
	part, err := w.CreatePart(h)
	if err == nil {
		_, err = part.Write(content)
	}
	if err == nil {
		err = w.Close()
	}
	if err != nil {
		return fmt.Errorf("natsx.CallFile %s: encode: %w", subject, err)
	}
	return c.call(ctx, subject, &Request{Body: body.Bytes(), ContentType: w.FormDataContentType()}, out)
}

func (c *Client) call(ctx context.Context, subject string, req *Request, out any) error {
	r, err := c.Do(ctx, subject, req)
	if err != nil {
		return err
	}
	if r.ErrCode != "" {
		var b errs.Body
		_ = json.Unmarshal(r.Body, &b)
		return &errs.Error{Code: r.ErrCode, Message: b.Error, Details: b.Details, Op: subject}
	}
	if out != nil {
		if err := json.Unmarshal(r.Body, out); err != nil {
			return fmt.Errorf("natsx.Call %s: decode: %w", subject, err)
		}
	}
	return nil
}
