package gateway

import (
	"net/http"
	"net/netip"
	"strings"
	"testing"
)

// FuzzClientAddr: whatever a client writes into X-Forwarded-For, an
// untrusted peer is its own address, and behind a trusted proxy the answer
// is the peer or one of the hops the header named.
func FuzzClientAddr(f *testing.F) {
	for _, s := range [][2]string{
		{"10.0.0.5:443", "203.0.113.7"},
		{"10.0.0.5:443", "198.51.100.1, 203.0.113.7, 10.0.0.9"},
		{"192.0.2.1:1234", "203.0.113.7"},
		{"[2001:db8::1]:80", "2001:db8::2, [2001:db8::3]:9000"},
		{"10.0.0.5:443", "unknown, ,garbage"},
		{"not-an-address", "203.0.113.7"},
	} {
		f.Add(s[0], s[1])
	}
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	f.Fuzz(func(t *testing.T, remote, xff string) {
		r := &http.Request{RemoteAddr: remote, Header: http.Header{"X-Forwarded-For": {xff}}}
		got := clientAddr(r, trusted)
		peer, ok := parseHop(remote)
		switch {
		case !ok:
			if got != remote {
				t.Fatalf("unparsable peer %q: got %q", remote, got)
			}
		case !isTrusted(peer, trusted):
			if got != peer.String() {
				t.Fatalf("untrusted peer %q believed X-Forwarded-For %q: got %q", remote, xff, got)
			}
		case got != peer.String():
			named := false
			for _, h := range strings.Split(xff, ",") {
				if a, ok := parseHop(strings.TrimSpace(h)); ok && a.String() == got {
					named = true
				}
			}
			if !named {
				t.Fatalf("peer %q, X-Forwarded-For %q: got %q, neither the peer nor a hop", remote, xff, got)
			}
		}
	})
}
