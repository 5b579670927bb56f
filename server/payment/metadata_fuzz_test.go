package payment

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParseMetadata fuzzes metadata as it comes off the wire. Properties:
// no panic; what it accepts has at most maxMetadataKeys keys, keys of 1 to
// maxMetadataKeyLen characters, strings of at most maxMetadataValueLen
// characters, and values that are null, booleans, numbers, strings or flat
// arrays of those (no objects, no arrays in arrays); re-marshalled, it is
// accepted again and gives the same metadata.
func FuzzParseMetadata(f *testing.F) {
	for _, s := range []string{
		``, `null`, `{}`, `""`, `"  "`, `"null"`, `" {\"order\":\"1\"} "`, `{"order_id":"A-1","n":42,"paid":true,"none":null}`,
		`{"big":123456789012345678901234567890}`, `{"f":1.5e-300,"e":1e3,"neg":-0}`, `{"tags":["a",1,true,null]}`,
		`{"nested":{"a":1}}`, `{"deep":[[1]]}`, `{"arr":[{"a":1}]}`, `{"":1}`, `{"a":1,"a":2}`, `[1,2]`, `"[1]"`, `1`,
		`true`, `{"a":1}{"b":2}`, `{"a":1} trailing`, `"{\"a\":1} trailing"`, `{"a":"\ud800"}`, `{"\u00e9":"é"}`,
		`{"k":"` + strings.Repeat("x", 4096) + `"}`, `{"k":"` + strings.Repeat("x", 4097) + `"}`,
		`{"k":"` + strings.Repeat("日", 4096) + `"}`, `{"` + strings.Repeat("k", 255) + `":1}`,
		`{"` + strings.Repeat("k", 256) + `":1}`, `{"a":"<script>&</script>","b":"\u2028"}`, `{"pan":"4242424242424242"}`,
		`{"a":"x\ty\nz"}`, `{"a":"\u0000"}`, "{\"a\":\"\xff\"}", `"\"x\""`, `{"a":01}`, `{"a":NaN}`,
	} {
		f.Add(s)
	}
	many := make([]string, 51)
	for i := range many {
		many[i] = `"k` + strings.Repeat("x", i) + `":1`
	}
	f.Add("{" + strings.Join(many[:50], ",") + "}")
	f.Add("{" + strings.Join(many, ",") + "}")
	f.Fuzz(func(t *testing.T, raw string) {
		m, err := ParseMetadata(json.RawMessage(raw), "metadata")
		if err != nil {
			if m != nil {
				t.Fatalf("ParseMetadata(%q) = %v with error %v", raw, m, err)
			}
			return
		}
		if len(m) > maxMetadataKeys {
			t.Fatalf("ParseMetadata(%q): %d keys", raw, len(m))
		}
		for k, v := range m {
			if n := utf8.RuneCountInString(k); n == 0 || n > maxMetadataKeyLen {
				t.Fatalf("ParseMetadata(%q): a key of %d characters", raw, n)
			}
			checkFuzzedMetadataValue(t, raw, v, true)
		}
		again, err := json.Marshal(m)
		if err != nil {
			t.Fatalf("ParseMetadata(%q) = %v, which does not marshal: %v", raw, m, err)
		}
		m2, err := ParseMetadata(again, "metadata")
		if err != nil {
			t.Fatalf("ParseMetadata(%q) accepted, its re-marshalled %s refused: %v", raw, again, err)
		}
		if !reflect.DeepEqual(m, m2) {
			t.Fatalf("ParseMetadata(%q) = %#v, re-marshalled %s gives %#v", raw, m, again, m2)
		}
	})
}

func checkFuzzedMetadataValue(t *testing.T, raw string, v any, arrayAllowed bool) {
	t.Helper()
	switch x := v.(type) {
	case nil, bool, json.Number:
	case string:
		if n := utf8.RuneCountInString(x); n > maxMetadataValueLen {
			t.Fatalf("ParseMetadata(%q): a string of %d characters", raw, n)
		}
	case []any:
		if !arrayAllowed {
			t.Fatalf("ParseMetadata(%q): an array in an array", raw)
		}
		for _, e := range x {
			checkFuzzedMetadataValue(t, raw, e, false)
		}
	default:
		t.Fatalf("ParseMetadata(%q): a value of type %T", raw, v)
	}
}
