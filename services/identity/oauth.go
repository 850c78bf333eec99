package identity

import (
	"context"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
)

// Grant is one user's authorization of an OAuth app.
type Grant struct {
	ClientID   string
	ClientName string
	Scopes     []string
	CreatedAt  time.Time
}

// App is an OAuth app authorized in a tenant: its grants merged.
type App struct {
	ClientID     string    `json:"client_id"`
	Name         string    `json:"name"`
	Scopes       []string  `json:"scopes"`
	AuthorizedAt time.Time `json:"authorized_at"`
}

// ClientInput is the body of a client registration.
type ClientInput struct {
	Name         string   `json:"name"`
	RedirectURIs []string `json:"redirect_uris"`
	Scopes       []string `json:"scopes"`
}

// OAuthClient is an OAuth client registered by a tenant: the registration
// under its id.
type OAuthClient struct {
	TenantID string `json:"-"`
	ClientID string `json:"client_id"`
	ClientInput
	SecretHash string    `json:"-"`
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
}

// PutClientResult answers a client registration; the secret is present only
// when the client was created, which is the only time it is shown.
type PutClientResult struct {
	OAuthClient
	ClientSecret string `json:"client_secret,omitempty"`
}

// clientSecretPrefix marks client secrets apart from API keys.
const clientSecretPrefix = "lgrcs_"

const maxRedirectURIs = 10

var clientIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{3,64}$`)

// ListApps lists the OAuth apps users of the caller's tenant authorized,
// one entry per app with the union of the scopes granted to it.
func (s *Service) ListApps(ctx context.Context, c *auth.Claims) ([]App, error) {
	grants, err := s.store.Grants(ctx, c.TenantID)
	if err != nil {
		return nil, errs.Wrap("identity.ListApps", err)
	}
	apps := []App{}
	index := map[string]int{}
	for _, g := range grants { // oldest first, so the first grant dates the app
		i, ok := index[g.ClientID]
		if !ok {
			index[g.ClientID] = len(apps)
			apps = append(apps, App{ClientID: g.ClientID, Name: g.ClientName, AuthorizedAt: g.CreatedAt})
			i = len(apps) - 1
		}
		apps[i].Scopes = append(apps[i].Scopes, g.Scopes...)
	}
	for i := range apps {
		slices.Sort(apps[i].Scopes)
		apps[i].Scopes = nonNil(slices.Compact(apps[i].Scopes))
	}
	return apps, nil
}

// RevokeApp withdraws every grant of an app in the caller's tenant.
func (s *Service) RevokeApp(ctx context.Context, c *auth.Claims, clientID string) error {
	if !clientIDPattern.MatchString(clientID) {
		return errs.NotFoundf("app not found")
	}
	return errs.Wrap("identity.RevokeApp", s.store.RevokeGrants(ctx, c.TenantID, clientID))
}

// ListClients lists the caller's tenant's OAuth clients.
func (s *Service) ListClients(ctx context.Context, c *auth.Claims) ([]OAuthClient, error) {
	return tenantList(ctx, c, "identity.ListClients", s.store.Clients)
}

// PutClient registers or updates an OAuth client of the caller's tenant. It
// reports whether the client was created.
func (s *Service) PutClient(ctx context.Context, c *auth.Claims, clientID string, in ClientInput) (PutClientResult, bool, error) {
	var p problems
	if !clientIDPattern.MatchString(clientID) {
		p.add("clientId", "must be 3 to 64 letters, digits, '_' or '-'")
	}
	name := strings.TrimSpace(in.Name)
	p.length("name", name, 1, 100)
	switch n := len(in.RedirectURIs); {
	case n == 0:
		p.add("redirect_uris", "required")
	case n > maxRedirectURIs:
		p.add("redirect_uris", "at most "+strconv.Itoa(maxRedirectURIs)+" entries")
	}
	for i, u := range in.RedirectURIs {
		if !validRedirectURI(u) {
			p.add("redirect_uris["+strconv.Itoa(i)+"]", "must be an https URL, or http on localhost, without a fragment")
		}
	}
	scopes := checkScopes(&p, "scopes", in.Scopes)
	if len(in.Scopes) == 0 {
		p.add("scopes", "required")
	}
	if err := p.err("invalid OAuth client"); err != nil {
		return PutClientResult{}, false, err
	}
	if !c.Covers(scopes) {
		return PutClientResult{}, false, errs.E(errs.ScopeNotGrantable, "a client cannot be given scopes the caller does not hold")
	}
	secret := clientSecretPrefix + randomToken()
	saved, created, err := s.store.PutClient(ctx, OAuthClient{
		TenantID:    c.TenantID,
		ClientID:    clientID,
		ClientInput: ClientInput{Name: name, RedirectURIs: in.RedirectURIs, Scopes: scopes},
		SecretHash:  hashToken(secret),
	})
	if err != nil {
		return PutClientResult{}, false, errs.Wrap("identity.PutClient", err)
	}
	res := PutClientResult{OAuthClient: saved}
	if created {
		res.ClientSecret = secret
	}
	return res, created, nil
}

// validRedirectURI accepts absolute https URLs, and http ones on the
// loopback host for native apps (RFC 8252), never with a fragment (RFC 6749).
func validRedirectURI(raw string) bool {
	if len(raw) > 2000 {
		return false
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Fragment != "" || u.User != nil {
		return false
	}
	switch u.Scheme {
	case "https":
		return true
	case "http":
		h := u.Hostname()
		return h == "localhost" || h == "127.0.0.1" || h == "::1"
	}
	return false
}
