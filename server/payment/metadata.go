package payment

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// Metadata is a merchant's own key/value data on an object. Values are
// strings, numbers (kept exactly as sent, so big integers survive),
// booleans or arrays of those; nested objects are refused.
type Metadata map[string]any

// Metadata bounds: enough for order ids and notes, small enough that an
// object's row stays small and a page of 100 objects stays under about
// 1.6 MB. They hold after every PATCH merge, not only on create.
const (
	maxMetadataKeys     = 50
	maxMetadataKeyLen   = 255
	maxMetadataValueLen = 4096
	maxMetadataSize     = 16 << 10 // the JSON encoding, in bytes
)

// ParseMetadata reads metadata as sent on the wire: a JSON object, a JSON
// string holding one (some plugins send that), or null/absent. An empty
// array is empty metadata: PHP's json_encode writes an empty map as [].
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
	if emptyArray(raw) {
		return nil, nil
	}
	if len(raw) > 4*maxMetadataSize {
		return nil, Invalid(field, ReasonInvalidLength)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, Invalid(field, ReasonInvalidFormat)
	}
	// An update may hold nulls (remove this key); merged metadata is
	// checked again.
	if err := Metadata(m).Check(field); err != nil {
		return nil, err
	}
	return Metadata(m), nil
}

// emptyArray reports whether raw is [] (white space allowed).
func emptyArray(raw []byte) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) >= 2 && raw[0] == '[' && raw[len(raw)-1] == ']' && len(bytes.TrimSpace(raw[1:len(raw)-1])) == 0
}

// Check applies the bounds to metadata as a whole: the number of keys, the
// encoded size, and each key and value.
func (m Metadata) Check(field string) error {
	if len(m) > maxMetadataKeys {
		return Invalid(field, "ILLEGAL_NUMBER_OF_ITEMS")
	}
	for k, v := range m {
		// A bad key is reported against the field: naming it would echo
		// it, card number or megabyte included.
		var ks Validation
		CheckText(&ks, field, k, maxMetadataKeyLen)
		if k == "" {
			ks.Add(field, ReasonInvalidLength)
		}
		if err := ks.Err(); err != nil {
			return err
		}
		if err := checkMetadataValue(v, field+"."+k, true); err != nil {
			return err
		}
	}
	if b, err := json.Marshal(m); err != nil || len(b) > maxMetadataSize {
		return Invalid(field, ReasonInvalidLength)
	}
	return nil
}

func checkMetadataValue(v any, field string, arrayAllowed bool) error {
	switch x := v.(type) {
	case nil, bool:
		return nil
	case json.Number:
		if ContainsCardNumber(x.String()) || ContainsCardNumber(wholeNumberDigits(x.String())) {
			return Invalid(field, ReasonCardNumber)
		}
		return nil
	case string:
		var vs Validation
		CheckNote(&vs, field, x, maxMetadataValueLen)
		return vs.Err()
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

// wholeNumberDigits writes a JSON number with an exponent (4.00002e15) as
// the digits of its value when that is a whole number of at most 19
// digits, the value a card number would have; "" for anything else.
func wholeNumberDigits(num string) string {
	mantissa, exp, ok := strings.Cut(strings.ToLower(num), "e")
	if !ok {
		return ""
	}
	e, err := strconv.Atoi(exp)
	if err != nil || e < -maxCardDigits || e > maxCardDigits {
		return ""
	}
	whole, frac, _ := strings.Cut(strings.TrimPrefix(mantissa, "-"), ".")
	digits, point := whole+frac, len(whole)+e
	if point < 1 || point > len(digits)+maxCardDigits {
		return ""
	}
	if point < len(digits) {
		if strings.Trim(digits[point:], "0") != "" {
			return ""
		}
		digits = digits[:point]
	} else {
		digits += strings.Repeat("0", point-len(digits))
	}
	if digits = strings.TrimLeft(digits, "0"); len(digits) > maxCardDigits {
		return ""
	}
	return digits
}

// Merge returns m with the keys of update applied; a null value removes a
// key, as PATCH means "change these", not "replace all". The result must
// stay within the bounds: merging is how metadata would otherwise grow
// without limit, one PATCH at a time.
func (m Metadata) Merge(update Metadata) (Metadata, error) {
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
	if err := out.Check("metadata"); err != nil {
		return nil, err
	}
	return out, nil
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
