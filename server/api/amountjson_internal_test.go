package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"math/big"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kessai/kessai/server/payment"
)

// Fuzz targets for the integers of request bodies that clients may send as
// numbers or as strings (amountJSON, countryCodeJSON), through decode as
// every handler uses it. Each input is checked against an oracle written
// independently of jsonInteger: the body's members are read in order with
// encoding/json's tokenizer, and an integer is what the JSON grammar's
// -?(0|[1-9][0-9]*) matches (in a number, or in a string once unescaped)
// and math/big finds within int64.

var integerGrammar = regexp.MustCompile(`^-?(0|[1-9][0-9]*)$`)

// oracleInteger is what a JSON value should decode to: ok false when it is
// not an integer, null true for a JSON null.
func oracleInteger(raw json.RawMessage) (n int64, ok, null bool) {
	if string(raw) == "null" {
		return 0, false, true
	}
	text := string(raw)
	if strings.HasPrefix(text, `"`) {
		if err := json.Unmarshal(raw, &text); err != nil {
			return 0, false, false
		}
	}
	if !integerGrammar.MatchString(text) {
		return 0, false, false
	}
	b, _ := new(big.Int).SetString(text, 10)
	if !b.IsInt64() {
		return 0, false, false
	}
	return b.Int64(), true, false
}

// members reads the members of a JSON object in order, duplicates
// included; ok is false when body is not exactly one JSON object.
func members(body []byte) (keys []string, values []json.RawMessage, ok bool) {
	if !json.Valid(body) {
		return nil, nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, nil, false
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil, nil, false
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, false
		}
		keys, values = append(keys, k.(string)), append(values, v)
	}
	return keys, values, true
}

// expectInteger is what decoding the members named key should give: the
// last value given (a null clears it), or the field refused at the first
// value that is not an integer.
func expectInteger(keys []string, values []json.RawMessage, key string) (n int64, set, refused bool) {
	for i, k := range keys {
		if k != key {
			continue
		}
		v, ok, null := oracleInteger(values[i])
		switch {
		case null:
			n, set = 0, false
		case !ok:
			return 0, false, true
		default:
			n, set = v, true
		}
	}
	return n, set, false
}

func decodeBody(t *testing.T, body []byte, v any) error {
	t.Helper()
	s := &Server{log: slog.New(slog.DiscardHandler)}
	r := httptest.NewRequest("POST", "/", io.NopCloser(bytes.NewReader(body)))
	return s.decode(r, v)
}

// wantField checks that err is a VALIDATION_ERROR naming exactly field.
func wantField(t *testing.T, body []byte, err error, field string) {
	t.Helper()
	var pe *payment.Error
	if !errors.As(err, &pe) || pe.Code != payment.CodeValidation || len(pe.Fields) != 1 || pe.Fields[0].Field != field {
		t.Fatalf("%q: error %v, want a VALIDATION_ERROR naming %s", body, err, field)
	}
}

var integerSeeds = []string{
	`1000`, `"1000"`, `-1`, `"-1"`, `0`, `"0"`, `"-0"`, `null`, `9223372036854775807`, `"9223372036854775807"`,
	`"-9223372036854775808"`, `"9223372036854775808"`, `1e3`, `"1e3"`, `" 100"`, `"+1"`, `"0x10"`, `"９９"`,
	`"01000"`, `"\u0031\u0030"`, `""`, `"1000.0"`, `1000.0`, `[1000]`, `[[1]]`, `{"a":1}`, `true`, `"` + strings.Repeat("9", 300) + `"`,
	`1000,"amount":null`, `"1000","amount":"x"`, `1000}`, `1000 1000`,
}

func FuzzAmountJSON(f *testing.F) {
	for _, s := range integerSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		// Only amount is typed, so that no other member can fail the
		// decoding: unknown members are ignored.
		body := []byte(`{"currency":"JPY","amount":` + raw + `}`)
		var got struct {
			Amount amountJSON `json:"amount"`
		}
		err := decodeBody(t, body, &got)
		keys, values, valid := members(body)
		if !valid {
			wantField(t, body, err, "body")
			return
		}
		n, set, refused := expectInteger(keys, values, "amount")
		if refused {
			wantField(t, body, err, "amount")
			return
		}
		if err != nil {
			t.Fatalf("%q: %v, want amount %d (set %v)", body, err, n, set)
		}
		if got.Amount.Set != set || got.Amount.Value != n {
			t.Fatalf("%q: amount %+v, want %d (set %v)", body, got.Amount, n, set)
		}
		if p := got.Amount.ptr(); (p != nil) != set || (p != nil && *p != n) {
			t.Fatalf("%q: ptr() %v, want %d (set %v)", body, p, n, set)
		}
	})
}

func FuzzCountryCodeJSON(f *testing.F) {
	for _, s := range integerSeeds {
		f.Add(s)
	}
	for _, s := range []string{`"+81"`, `"+0"`, `"+"`, `"++81"`, `"\u002b81"`, `"+-81"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		body := []byte(`{"payment_type":"card","data":{"phone_number":{"country_code":` + raw + `}}}`)
		var got wireNewToken
		err := decodeBody(t, body, &got)
		if !json.Valid(body) {
			wantField(t, body, err, "body")
			return
		}
		// An input that breaks out of phone_number adds members of its
		// own, which other fields' types would judge: only the body as
		// built here is checked.
		keys, values, _ := members(body)
		if !slices.Equal(keys, []string{"payment_type", "data"}) {
			t.Skip()
		}
		dk, dv, isObject := members(values[1])
		if !isObject || !slices.Equal(dk, []string{"phone_number"}) {
			t.Skip()
		}
		pk, pv, isObject := members(dv[0])
		if !isObject || slices.ContainsFunc(pk, func(k string) bool { return k != "country_code" }) {
			t.Skip()
		}
		// A country code may start with the plus of an international
		// prefix ("+81"), which is dropped before it is read.
		for i := range pv {
			var text string
			if json.Unmarshal(pv[i], &text) == nil && len(text) > 1 && text[0] == '+' && text[1] >= '1' && text[1] <= '9' {
				pv[i], _ = json.Marshal(text[1:])
			}
		}
		n, set, refused := expectInteger(pk, pv, "country_code")
		if refused || (set && int64(int(n)) != n) {
			wantField(t, body, err, "data.phone_number.country_code")
			return
		}
		if err != nil {
			t.Fatalf("%q: %v, want country code %d", body, err, n)
		}
		if got.Data == nil || got.Data.PhoneNumber == nil || int64(got.Data.PhoneNumber.CountryCode) != n {
			t.Fatalf("%q: decoded %+v, want country code %d", body, got.Data, n)
		}
	})
}
