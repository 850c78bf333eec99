package money

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestUnmarshalExact(t *testing.T) {
	tests := []struct {
		in      string
		want    string
		places  int32
		validEU bool
		wantErr bool
	}{
		{in: `119.00`, want: "119", places: 0, validEU: true},
		{in: `0.1`, want: "0.1", places: 1, validEU: true},
		{in: `"12.34"`, want: "12.34", places: 2, validEU: true},
		{in: `12.345`, want: "12.345", places: 3, validEU: false},
		{in: `-5`, want: "-5", places: 0, validEU: false},
		{in: `0`, want: "0", places: 0, validEU: false},
		{in: `123456789012345678.01`, want: "123456789012345678.01", places: 2, validEU: false},
		{in: `1e2`, want: "100", places: 0, validEU: true},
		{in: `null`, wantErr: true},
		{in: `"abc"`, wantErr: true},
		{in: `true`, wantErr: true},
	}
	for _, tt := range tests {
		var a Amount
		err := json.Unmarshal([]byte(tt.in), &a)
		if (err != nil) != tt.wantErr {
			t.Fatalf("Unmarshal(%s) err = %v, wantErr %v", tt.in, err, tt.wantErr)
		}
		if err != nil {
			continue
		}
		got := []any{a.String(), a.Places(), a.ValidEUR()}
		if diff := cmp.Diff([]any{tt.want, tt.places, tt.validEU}, got); diff != "" {
			t.Errorf("Unmarshal(%s) mismatch (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestMarshal(t *testing.T) {
	b, err := json.Marshal(map[string]Amount{"a": MustParse("100"), "b": MustParse("0.1"), "c": MustParse("1.2345")})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(`{"a":100.00,"b":0.10,"c":1.2345}`, string(b)); diff != "" {
		t.Fatalf("Marshal mismatch (-want +got):\n%s", diff)
	}
}

func TestSumIsExact(t *testing.T) {
	sum := Zero
	for i := 0; i < 10; i++ {
		sum = sum.Add(MustParse("0.1"))
	}
	if !sum.Equal(MustParse("1").Decimal) {
		t.Fatalf("ten times 0.1 = %s, want 1", sum)
	}
}
