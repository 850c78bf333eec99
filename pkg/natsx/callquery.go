package natsx

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"

	"github.com/ledgerplatform/ledger/pkg/errs"
)

// CallQuery is Call for a GET route: there is no body, params travel as the
// path parameters and query as the query; a success body is decoded into
// out (when non-nil) and an error reply becomes an *errs.Error with the
// service's code, message and details.
func (c *Client) CallQuery(ctx context.Context, subject string, params, query url.Values, out any) error {
	r, err := c.Do(ctx, subject, &Request{Params: params, Query: query})
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
			return fmt.Errorf("natsx.CallQuery %s: decode: %w", subject, err)
		}
	}
	return nil
}
