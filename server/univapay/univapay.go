// Package univapay is the UnivaPay wire format of the payment resources:
// how a transaction token, a charge, a refund, a cancel, a subscription
// with its payments and a line of the transaction history are shown,
// field for field, with the conventions they share (timestamps, formatted
// amounts, null for what is absent, the list envelope).
//
// It is its own package because two parties render these shapes and
// must agree byte for byte: the HTTP API answers with them, and the
// notifications put them in every webhook's and event's body
// (EncodeEvent, which the gateway hands the payment service). The domain
// thus gets its encoder without reaching up into the HTTP package, and the
// API imports this package rather than owning the format. What requests
// carry is not here: reading a request is the API's business.
package univapay

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
)

// Time is a timestamp as UnivaPay writes it: UTC, microseconds, "Z".
type Time time.Time

const timeLayout = "2006-01-02T15:04:05.000000Z"

// MarshalText rather than MarshalJSON: encoding/json checks what a
// MarshalJSON answers with a full JSON scanner, while a text is only
// quoted (the layout's characters need no escaping, so the bytes are the
// same).
func (t Time) MarshalText() ([]byte, error) {
	return time.Time(t).UTC().AppendFormat(make([]byte, 0, len(timeLayout)), timeLayout), nil
}

func timeOrNull(t *time.Time) *Time {
	if t == nil {
		return nil
	}
	w := Time(*t)
	return &w
}

// formatted is a *_formatted field: the amount in major units as a JSON
// number (USD 1250 → 12.5).
func formatted(amount int64, currency string) json.Number {
	cur, ok := payment.LookupCurrency(currency)
	if !ok {
		return json.Number(strconv.FormatInt(amount, 10))
	}
	return json.Number(payment.FormatAmount(amount, cur))
}

func formattedPtr(amount *int64, currency string) *json.Number {
	if amount == nil {
		return nil
	}
	f := formatted(*amount, currency)
	return &f
}

// PaymentError is why a charge, refund, cancel or 3-D Secure failed.
type PaymentError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Detail  string `json:"detail,omitempty"`
}

func paymentErrorOf(e *payment.PaymentError) *PaymentError {
	if e == nil {
		return nil
	}
	return &PaymentError{Code: e.Code, Message: e.Message, Detail: e.Detail}
}

// metadata is never null on the wire: none is {}.
func metadata(m payment.Metadata) payment.Metadata {
	if m == nil {
		return payment.Metadata{}
	}
	return m
}

// optionalString is null for an empty string: UnivaPay writes what is
// absent as null, never as "".
func optionalString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func optionalID(id uuid.UUID) *uuid.UUID {
	if id == uuid.Nil {
		return nil
	}
	return &id
}

func optionalUUIDString(id uuid.UUID) *string {
	if id == uuid.Nil {
		return nil
	}
	s := id.String()
	return &s
}

func optionalDate(d *payment.Date) *string {
	if d == nil {
		return nil
	}
	s := d.String()
	return &s
}
