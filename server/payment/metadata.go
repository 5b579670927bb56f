package payment

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Metadata is a merchant's own key/value data on an object. Values are
// strings, numbers (kept exactly as sent, so big integers survive),
// booleans or arrays of those; nested objects are refused.
type Metadata map[string]any

// Metadata bounds: enough for order ids and notes, small enough that an
// object's row stays small.
const (
	maxMetadataKeys     = 50
	maxMetadataKeyLen   = 255
	maxMetadataValueLen = 4096
)

// ParseMetadata reads metadata as sent on the wire: a JSON object, a JSON
// string holding one (some plugins send that), or null/absent.
func ParseMetadata(raw json.RawMessage, field string) (Metadata, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, Invalid(field, ReasonInvalidFormat)
		}
		raw = []byte(strings.TrimSpace(s))
		if len(raw) == 0 {
			return nil, nil
		}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, Invalid(field, ReasonInvalidFormat)
	}
	if len(m) > maxMetadataKeys {
		return nil, Invalid(field, "ILLEGAL_NUMBER_OF_ITEMS")
	}
	for k, v := range m {
		if k == "" || len(k) > maxMetadataKeyLen {
			return nil, Invalid(field+"."+k, ReasonInvalidLength)
		}
		if err := checkMetadataValue(v, field+"."+k, true); err != nil {
			return nil, err
		}
	}
	return Metadata(m), nil
}

func checkMetadataValue(v any, field string, arrayAllowed bool) error {
	switch x := v.(type) {
	case nil, bool, json.Number:
		return nil
	case string:
		if len(x) > maxMetadataValueLen {
			return Invalid(field, ReasonInvalidLength)
		}
		return nil
	case []any:
		if !arrayAllowed {
			return Invalid(field, "NESTED_JSON_NOT_ALLOWED")
		}
		for _, e := range x {
			if err := checkMetadataValue(e, field, false); err != nil {
				return err
			}
		}
		return nil
	default:
		return Invalid(field, "NESTED_JSON_NOT_ALLOWED")
	}
}

// Merge returns m with the keys of update applied; a null value removes a
// key, as PATCH means "change these", not "replace all".
func (m Metadata) Merge(update Metadata) Metadata {
	out := Metadata{}
	for k, v := range m {
		out[k] = v
	}
	for k, v := range update {
		if v == nil {
			delete(out, k)
			continue
		}
		out[k] = v
	}
	return out
}

// Matches reports whether m holds key with a value whose text is value; the
// list filter `metadata=order_id: 123` uses it.
func (m Metadata) Matches(key, value string) bool {
	v, ok := m[key]
	if !ok {
		return false
	}
	switch x := v.(type) {
	case string:
		return x == value
	case json.Number:
		return x.String() == value
	case bool:
		if x {
			return value == "true"
		}
		return value == "false"
	}
	return false
}
