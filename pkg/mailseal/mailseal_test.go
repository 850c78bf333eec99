package mailseal_test

import (
	"strings"
	"testing"

	"github.com/ledgerplatform/ledger/pkg/mailseal"
)

func TestSealOpen(t *testing.T) {
	pub, priv, err := mailseal.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := mailseal.ParseKey(mailseal.Encode(pub))
	if err != nil || *parsed != *pub {
		t.Fatalf("ParseKey(Encode) = %v, %v", parsed, err)
	}
	const secret = "reset-token-0123456789"
	sealed, err := mailseal.Seal(parsed, secret)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(sealed), secret) {
		t.Fatal("the sealed message contains the secret")
	}
	got, err := mailseal.Open(pub, priv, sealed)
	if err != nil || got != secret {
		t.Fatalf("Open = %q, %v; want %q", got, err, secret)
	}

	otherPub, otherPriv, _ := mailseal.GenerateKey()
	if _, err := mailseal.Open(otherPub, otherPriv, sealed); err == nil {
		t.Error("another key opened the message")
	}
	sealed[len(sealed)-1] ^= 1
	if _, err := mailseal.Open(pub, priv, sealed); err == nil {
		t.Error("a damaged message opened")
	}
	if mailseal.KeyID(pub) == mailseal.KeyID(otherPub) || len(mailseal.KeyID(pub)) != 16 {
		t.Errorf("key ids %q and %q", mailseal.KeyID(pub), mailseal.KeyID(otherPub))
	}
	for _, bad := range []string{"", "not base64!", "c2hvcnQ="} {
		if _, err := mailseal.ParseKey(bad); err == nil {
			t.Errorf("ParseKey(%q) accepted", bad)
		}
	}
}
