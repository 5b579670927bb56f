package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kessai/kessai/server/payment"
)

// responseBuffers keeps the buffers answers are encoded into: a charge is
// about a kilobyte, which a new buffer reached in five allocations.
var responseBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledResponse bounds the buffers kept: a rare long list must not pin
// its megabytes.
const maxPooledResponse = 64 << 10

// writeJSON encodes v as the response. Every JSON answer carries
// application/json: the Node SDK parses nothing else.
func (s *Server) writeJSON(w http.ResponseWriter, r *http.Request, status int, v any) {
	buf := responseBuffers.Get().(*bytes.Buffer)
	buf.Reset()
	defer func() {
		// Write copies what it is given (io.Writer's contract), so the
		// buffer is free again once it returns.
		if buf.Cap() <= maxPooledResponse {
			responseBuffers.Put(buf)
		}
	}()
	if err := json.NewEncoder(buf).Encode(v); err != nil {
		s.log.LogAttrs(r.Context(), slog.LevelError, "encode response",
			slog.String("request_id", requestID(r.Context())), slog.String("error", err.Error()))
		status = http.StatusInternalServerError
		buf.Reset()
		buf.WriteString(`{"status":"error","code":"INTERNAL_SERVER_ERROR","errors":[]}` + "\n")
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(buf.Bytes())
	}
}

// decode reads a JSON request body into v. Unknown fields are ignored
// (clients send more than Kessai models); wrong types and broken JSON are
// VALIDATION_ERROR naming the field; an empty body or a JSON null leaves v
// as it is. So does an empty JSON array: PHP's json_encode writes an empty
// array, which is all it has for an empty map, as [] (the PHP SDK's cancel
// without metadata, an empty PATCH).
func (s *Server) decode(r *http.Request, v any) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return payment.Errorf(payment.CodeBodyTooLarge, "request body too large")
		}
		return payment.Invalid("body", payment.ReasonInvalidFormat)
	}
	if len(bytes.TrimSpace(body)) == 0 || emptyJSONArray(body) {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		// A body that is not one JSON value is the body's fault, whatever
		// its first value holds: without this, `{"amount":""}}` would
		// blame amount. Checked only here, so a good body is parsed once.
		if !json.Valid(body) {
			return payment.Invalid("body", payment.ReasonInvalidFormat)
		}
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field != "" {
			return payment.Invalid(typeErr.Field, payment.ReasonInvalidFormat)
		}
		var fieldErr interface{ Field() string }
		if errors.As(err, &fieldErr) && fieldErr.Field() != "" {
			return payment.Invalid(fieldErr.Field(), payment.ReasonInvalidFormat)
		}
		return payment.Invalid("body", payment.ReasonInvalidFormat)
	}
	if _, err := dec.Token(); err != io.EOF {
		return payment.Invalid("body", payment.ReasonInvalidFormat)
	}
	return nil
}

// inputTime is a time in a request body: an RFC 3339 string. Anything else
// is reported as a type error, which decode turns into a VALIDATION_ERROR
// naming the field (time.Time's own parse errors carry no field, and would
// name the whole body).
type inputTime struct{ time.Time }

func (t *inputTime) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	if err := t.Time.UnmarshalJSON(b); err != nil {
		return &json.UnmarshalTypeError{Value: "time", Type: reflect.TypeFor[time.Time]()}
	}
	return nil
}

// ptr is the time, nil when the field was absent or null.
func (t *inputTime) ptr() *time.Time {
	if t == nil {
		return nil
	}
	v := t.Time
	return &v
}

// emptyJSONArray reports whether b is [] (white space allowed).
func emptyJSONArray(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) >= 2 && b[0] == '[' && b[len(b)-1] == ']' && len(bytes.TrimSpace(b[1:len(b)-1])) == 0
}

// maxIntegerJSON bounds the raw JSON of an integer sent as a string: 20
// characters, each of which could be a \uXXXX escape, and the quotes. A
// longer value (a megabyte of digits) is refused before it is decoded.
const maxIntegerJSON = 2 + 20*6

// jsonInteger reads a JSON integer, or a JSON string holding one, as an
// int64. PHP clients send money as strings (moneyphp/money serialises an
// amount as "1000") where Node and Java send numbers; both mean the same.
// The string must hold exactly what a JSON integer literal would: an
// optional minus, no plus, no spaces, no leading zeros, no exponent, ASCII
// digits only, within int64. Anything else is not an integer.
func jsonInteger(raw []byte) (int64, bool) {
	if len(raw) == 0 || len(raw) > maxIntegerJSON {
		return 0, false
	}
	digits := raw
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return 0, false
		}
		digits = []byte(s)
	}
	if !integerLiteral(digits) {
		return 0, false
	}
	n, err := strconv.ParseInt(string(digits), 10, 64)
	return n, err == nil
}

// integerLiteral reports whether b is -?(0|[1-9][0-9]*), JSON's grammar of
// an integer.
func integerLiteral(b []byte) bool {
	if len(b) > 0 && b[0] == '-' {
		b = b[1:]
	}
	if len(b) == 0 || (b[0] == '0' && len(b) > 1) {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// amountJSON is an amount in a request body: a JSON integer or a string
// holding one (jsonInteger). Set tells a given amount from an absent or
// null one; a null given after a value clears it, as the last occurrence
// of a key wins.
type amountJSON struct {
	Value int64
	Set   bool
}

func (a *amountJSON) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*a = amountJSON{}
		return nil
	}
	n, ok := jsonInteger(b)
	if !ok {
		// A type error is what decode turns into a VALIDATION_ERROR
		// naming the field.
		return &json.UnmarshalTypeError{Value: "amount", Type: reflect.TypeFor[int64]()}
	}
	*a = amountJSON{Value: n, Set: true}
	return nil
}

// ptr is the amount, nil when it was absent or null.
func (a amountJSON) ptr() *int64 {
	if !a.Set {
		return nil
	}
	v := a.Value
	return &v
}

// countryCodeJSON is a phone number's country code: a number, or a string
// of digits as PHP's SDK sends it ("81"), with the international prefix's
// plus or not ("+81", as a merchant writes it and the Node SDK passes it
// on). The domain checks its range; a
// null is no code, which it refuses.
type countryCodeJSON int

func (c *countryCodeJSON) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*c = 0
		return nil
	}
	b = withoutPlus(b)
	n, ok := jsonInteger(b)
	if !ok || int64(int(n)) != n {
		return &json.UnmarshalTypeError{Value: "country code", Type: reflect.TypeFor[int]()}
	}
	*c = countryCodeJSON(n)
	return nil
}

// withoutPlus is the JSON string b without the plus of an international
// prefix that starts it ("+81" → "81"); any other value is left as it is.
func withoutPlus(b []byte) []byte {
	if len(b) == 0 || b[0] != '"' {
		return b
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return b
	}
	rest, ok := strings.CutPrefix(s, "+")
	if !ok || rest == "" || rest[0] < '1' || rest[0] > '9' {
		return b
	}
	out, err := json.Marshal(rest)
	if err != nil {
		return b
	}
	return out
}
