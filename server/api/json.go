package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"reflect"
	"time"

	"github.com/kessai/kessai/server/payment"
)

// writeJSON encodes v as the response. Every JSON answer carries
// application/json: the Node SDK parses nothing else.
func (s *Server) writeJSON(w http.ResponseWriter, r *http.Request, status int, v any) {
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(v); err != nil {
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
// as it is.
func (s *Server) decode(r *http.Request, v any) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return payment.Errorf(payment.CodeBodyTooLarge, "request body too large")
		}
		return payment.Invalid("body", payment.ReasonInvalidFormat)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
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

// wireTime is a timestamp as UnivaPay writes it: UTC, microseconds, "Z".
type wireTime time.Time

const wireTimeLayout = "2006-01-02T15:04:05.000000Z"

func (t wireTime) MarshalJSON() ([]byte, error) {
	return []byte(`"` + time.Time(t).UTC().Format(wireTimeLayout) + `"`), nil
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

func wireTimePtr(t *time.Time) *wireTime {
	if t == nil {
		return nil
	}
	w := wireTime(*t)
	return &w
}
