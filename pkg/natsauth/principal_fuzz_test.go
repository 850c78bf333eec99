package natsauth_test

import (
	"testing"
	"time"

	"github.com/ledgerplatform/ledger/pkg/natsauth"
)

// FuzzVerify: the Claims-Sig header comes off the bus from whoever could
// publish there. Verify never panics, and accepts only the exact claims
// and request id a trusted key signed.
func FuzzVerify(f *testing.F) {
	ks, err := natsauth.Generate()
	if err != nil {
		f.Fatal(err)
	}
	trust, err := natsauth.ParseTrust(ks.Signers())
	if err != nil {
		f.Fatal(err)
	}
	now := time.Now()
	claims := []byte(`{"tenant_id":"5f0c6f3e-1c2b-4d7a-9a57-2f1e7d3c9b10","scopes":["journal:write"]}`)
	good, err := ks[natsauth.Gateway].Sign(claims, "req-1", now.Add(time.Minute))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(claims, "req-1", good)
	f.Add(claims, "req-2", good)
	f.Add([]byte(`{}`), "", "gateway.1.AAAA")
	f.Add([]byte(nil), "x", "..")
	f.Fuzz(func(t *testing.T, c []byte, requestID, header string) {
		signer, err := trust.Verify(c, requestID, header, now)
		if err != nil {
			return
		}
		if signer != natsauth.Gateway || string(c) != string(claims) || requestID != "req-1" {
			t.Fatalf("accepted %q for request %q with header %q (signer %q)", c, requestID, header, signer)
		}
	})
}
