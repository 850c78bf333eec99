package strictjson_test

import (
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/go-cmp/cmp"

	"github.com/ledgerplatform/ledger/pkg/strictjson"
)

func TestTextIssue(t *testing.T) {
	for _, tc := range []struct {
		s         string
		multiLine bool
		want      string
	}{
		{"Müller GmbH €", false, ""},
		{"Zeile 1\nZeile 2\tx", true, ""},
		{"Zeile 1\nZeile 2", false, "must not contain tabs or line breaks"},
		{"a\x00b", true, "must not contain NUL characters"},
		{"a\x1bb", true, "must not contain control characters"},
		{"a\u0085b", true, "must not contain control characters"},
		{"a\x7fb", true, "must not contain control characters"},
		{"a\xffb", true, "must be valid UTF-8"},
		{"\ufffd is text", false, ""},
	} {
		if got := strictjson.TextIssue(tc.s, tc.multiLine); got != tc.want {
			t.Errorf("TextIssue(%q, %v) = %q, want %q", tc.s, tc.multiLine, got, tc.want)
		}
	}
}

func TestPaths(t *testing.T) {
	got := []string{
		strictjson.Path([]string{"lines", "0", "amount"}),
		strictjson.PointerPath(jsontext.Pointer("/pairs/12/intent_id")),
		strictjson.PointerPath(""),
		strictjson.Join("lines", "[0].amount"),
		strictjson.Join("lines[0]", "amount"),
		strictjson.Join("", "amount"),
		strictjson.Join("lines", ""),
	}
	want := []string{"lines[0].amount", "pairs[12].intent_id", "", "lines[0].amount", "lines[0].amount", "amount", "lines"}
	if d := cmp.Diff(want, got); d != "" {
		t.Error(d)
	}
}
