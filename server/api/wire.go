package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
)

// flexInt reads a field that clients send as a number or as a numeric
// string (exp_month "09" from forms, 9 from SDKs).
func flexInt(raw json.RawMessage, field string) (*int, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var s string
	if raw[0] == '"' {
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, payment.Invalid(field, payment.ReasonInvalidFormat)
		}
		s = strings.TrimSpace(s)
		if s == "" {
			return nil, nil
		}
	} else {
		s = string(raw)
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return nil, payment.Invalid(field, payment.ReasonInvalidFormat)
	}
	return &n, nil
}

// query reads typed filters from a query string, collecting every mistake.
type query struct {
	values map[string][]string
	v      payment.Validation
}

func newQuery(r *http.Request) *query { return &query{values: r.URL.Query()} }

func (q *query) str(name string) string {
	if vs := q.values[name]; len(vs) > 0 {
		return strings.TrimSpace(vs[0])
	}
	return ""
}

func (q *query) oneOf(name string, allowed ...string) string {
	s := q.str(name)
	if s == "" {
		return ""
	}
	for _, a := range allowed {
		if s == a {
			return s
		}
	}
	q.v.Add(name, payment.ReasonInvalidFormat)
	return ""
}

func (q *query) int64(name string) *int64 {
	s := q.str(name)
	if s == "" {
		return nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		q.v.Add(name, payment.ReasonInvalidFormat)
		return nil
	}
	return &n
}

// intValue reads a small integer, as a number or with leading zeros ("03").
func (q *query) intValue(name string) *int {
	s := q.str(name)
	if s == "" {
		return nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || len(s) > 9 {
		q.v.Add(name, payment.ReasonInvalidFormat)
		return nil
	}
	return &n
}

// phone reads a phone number filter as its digits; the separators a
// phone number may hold (space - ( ) +) are dropped, anything else is
// refused.
func (q *query) phone(name string) string {
	s := q.str(name)
	if s == "" {
		return ""
	}
	digits := strings.Map(func(r rune) rune {
		if strings.ContainsRune(" -()+", r) {
			return -1
		}
		return r
	}, s)
	if digits == "" || strings.Trim(digits, "0123456789") != "" {
		q.v.Add(name, payment.ReasonInvalidFormat)
		return ""
	}
	return digits
}

func (q *query) id(name string) uuid.UUID {
	s := q.str(name)
	if s == "" {
		return uuid.Nil
	}
	id, err := uuid.Parse(s)
	if err != nil {
		q.v.Add(name, payment.ReasonInvalidUUID)
	}
	return id
}

// time reads an ISO-8601 timestamp or date, or Unix milliseconds.
func (q *query) time(name string) *time.Time {
	s := q.str(name)
	if s == "" {
		return nil
	}
	for _, layout := range []string{time.RFC3339Nano, time.DateOnly} {
		if t, err := time.Parse(layout, s); err == nil {
			return &t
		}
	}
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		t := time.UnixMilli(ms).UTC()
		return &t
	}
	q.v.Add(name, "INVALID_FORMAT_DATE")
	return nil
}

func (q *query) mode() payment.Mode {
	return payment.Mode(q.oneOf("mode", string(payment.ModeTest), string(payment.ModeLive)))
}

// metadata reads the metadata filter, `key: value` (`order_id: 123`).
func (q *query) metadata() (key, value string) {
	m := q.str("metadata")
	if m == "" {
		return "", ""
	}
	key, value, ok := strings.Cut(m, ":")
	if !ok || strings.TrimSpace(key) == "" {
		q.v.Add("metadata", payment.ReasonInvalidFormat)
	}
	return strings.TrimSpace(key), strings.TrimSpace(value)
}

func (q *query) polling() bool {
	return q.str("polling") == "true"
}

func (q *query) err() error { return q.v.Err() }
