package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
)

// FuzzNewSubscriptionRequest: the decoder of POST /subscriptions (and of
// simulate_plan) on arbitrary bodies. It never panics; what it refuses is
// a VALIDATION_ERROR naming a field (the body, when it is not one JSON
// value); what it accepts agrees with an oracle that reads the body's
// members with encoding/json's tokenizer: amounts as jsonInteger's rules
// say, the strings as sent (the last one given), the token id and start_on
// parsed. Keys match their fields in any case, as encoding/json has it.
func FuzzNewSubscriptionRequest(f *testing.F) {
	for _, seed := range []string{
		`{"transaction_token_id":"01a2055a-cd9c-7c13-8567-80fb9a170a93","amount":1000,"currency":"JPY","period":"monthly"}`,
		// PHP: amounts as strings, nulls stripped, plans with the other
		// type's field absent.
		`{"amount":"1000","currency":"JPY","transaction_token_id":"01a2055a-cd9c-7c13-8567-80fb9a170a93","period":"monthly",` +
			`"initial_amount":"500","schedule_settings":{"start_on":"2027-01-31","zone_id":"Asia/Tokyo","preserve_end_of_month":true,` +
			`"retry_interval":"P1D"},"subscription_plan":{"plan_type":"fixed_cycle_amount","fixed_cycle_amount":"3000"},"metadata":{"order":"1"}}`,
		// Node: snake-cased, cyclical_period null beside period.
		`{"transactionTokenId":"x","transaction_token_id":"01A2055A-CD9C-7C13-8567-80FB9A170A93","amount":1250,"currency":"usd",` +
			`"cyclical_period":null,"period":"weekly","three_ds":{"mode":"force","redirect_endpoint":"https://shop.example/"},` +
			`"first_charge_authorization_only":true,"first_charge_capture_after":"P3D","schedule_settings":{"termination_mode":"on_next_payment"}}`,
		`{"payment_type":"card","amount":1000,"currency":"JPY","cyclical_period":"P1M","installment_plan":{"plan_type":"fixed_cycles","fixed_cycles":3}}`,
		`{"amount":1000,"amount":null,"amount":"7","schedule_settings":{"start_on":"2026-02-30"}}`,
		`{"schedule_settings":{"start_on":20270131}}`,
		`{"schedule_settings":null,"subscription_plan":{"fixed_cycles":"99999999999999999999"}}`,
		`{"metadata":"{\"a\":1}","redirect":{"endpoint":"javascript:alert(1)"},"ip_address":"::1"}`,
		`{"amount":1e3}`, `{"amount":"١٠٠٠"}`, `{"period":["monthly"]}`, `{"amount":1000}}`, `[]`, `[1]`, ``, `null`, `"x"`,
		`{"transaction_token_id":"` + strings.Repeat("0", 5000) + `"}`,
	} {
		f.Add([]byte(seed))
	}
	srv := &Server{log: slog.New(slog.DiscardHandler)}
	f.Fuzz(func(t *testing.T, body []byte) {
		r := httptest.NewRequest("POST", "/subscriptions", io.NopCloser(bytes.NewReader(body)))
		p, paymentType, err := srv.decodeNewSubscription(r)
		blank := len(bytes.TrimSpace(body)) == 0 || emptyJSONArray(body)
		if err != nil {
			var pe *payment.Error
			if !errors.As(err, &pe) || pe.Code != payment.CodeValidation || len(pe.Fields) == 0 {
				t.Fatalf("%q: %v, want a VALIDATION_ERROR", body, err)
			}
			for _, fe := range pe.Fields {
				if fe.Field == "" || fe.Reason == "" {
					t.Fatalf("%q: field error %+v names no field or reason", body, fe)
				}
			}
			if !json.Valid(body) && !blank && (len(pe.Fields) != 1 || pe.Fields[0].Field != "body") {
				t.Fatalf("%q is not JSON: %+v, want the body named", body, pe.Fields)
			}
			return
		}
		if blank {
			if p.Amount != 0 || p.Period != "" || p.TokenID != uuid.Nil || p.Schedule.StartOn != nil {
				t.Fatalf("%q: an empty body decoded to %+v", body, p)
			}
			return
		}
		keys, values, isObject := members(body)
		keys = canonical(keys, "amount", "initial_amount", "period", "cyclical_period", "currency", "payment_type",
			"descriptor", "first_charge_capture_after", "transaction_token_id", "schedule_settings")
		if !isObject {
			if string(bytes.TrimSpace(body)) != "null" {
				t.Fatalf("%q is not an object, and was accepted", body)
			}
			return
		}
		if n, set, refused := expectInteger(keys, values, "amount"); refused || p.Amount != n {
			t.Fatalf("%q: amount %d, want %d (set %v, refused %v)", body, p.Amount, n, set, refused)
		}
		if n, set, refused := expectInteger(keys, values, "initial_amount"); refused || (p.InitialAmount != nil) != set ||
			set && *p.InitialAmount != n {
			t.Fatalf("%q: initial_amount %v, want %d (set %v, refused %v)", body, p.InitialAmount, n, set, refused)
		}
		for key, got := range map[string]string{"period": p.Period, "cyclical_period": p.CyclicalPeriod, "currency": p.Currency,
			"payment_type": paymentType, "descriptor": p.Charge.Descriptor, "first_charge_capture_after": p.FirstChargeCaptureAfter} {
			if want := lastString(t, body, keys, values, key); got != want {
				t.Fatalf("%q: %s %q, want %q", body, key, got, want)
			}
		}
		if s := lastString(t, body, keys, values, "transaction_token_id"); s != "" {
			want, perr := uuid.Parse(s)
			if perr != nil || p.TokenID != want {
				t.Fatalf("%q: transaction_token_id %v, want %q parsed (%v)", body, p.TokenID, s, perr)
			}
		} else if p.TokenID != uuid.Nil {
			t.Fatalf("%q: transaction_token_id %v, none sent", body, p.TokenID)
		}
		// start_on, when schedule_settings is given once and holds it once.
		if ss := only(keys, values, "schedule_settings"); ss != nil {
			sk, sv, isObject := members(ss)
			sk = canonical(sk, "start_on")
			if !isObject {
				if string(ss) != "null" || p.Schedule.StartOn != nil {
					t.Fatalf("%q: schedule_settings %s accepted as %+v", body, ss, p.Schedule)
				}
				return
			}
			if raw := only(sk, sv, "start_on"); raw != nil {
				var s string
				if string(raw) == "null" {
					if p.Schedule.StartOn != nil {
						t.Fatalf("%q: start_on null decoded to %v", body, p.Schedule.StartOn)
					}
					return
				}
				d, ok := payment.Date{}, json.Unmarshal(raw, &s) == nil
				if ok {
					d, ok = payment.ParseDate(s)
				}
				if !ok || p.Schedule.StartOn == nil || *p.Schedule.StartOn != d {
					t.Fatalf("%q: start_on %s decoded to %v", body, raw, p.Schedule.StartOn)
				}
			}
		}
	})
}

// canonical names each key by the field it decodes into: encoding/json
// takes a key that matches a field's name in any case ("Amount").
func canonical(keys []string, fields ...string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k
		for _, f := range fields {
			if strings.EqualFold(k, f) {
				out[i] = f
			}
		}
	}
	return out
}

// lastString is what a string field decodes to: the last value that is
// not null ("" for none). Any other value would have been refused.
func lastString(t *testing.T, body []byte, keys []string, values []json.RawMessage, key string) string {
	t.Helper()
	out := ""
	for i, k := range keys {
		if k != key || string(values[i]) == "null" {
			continue
		}
		if err := json.Unmarshal(values[i], &out); err != nil {
			t.Fatalf("%q: %s = %s accepted", body, key, values[i])
		}
	}
	return out
}

// only is the value of the one member named key; nil when there is none
// or more than one.
func only(keys []string, values []json.RawMessage, key string) json.RawMessage {
	var out json.RawMessage
	for i, k := range keys {
		if k == key {
			if out != nil {
				return nil
			}
			out = values[i]
		}
	}
	return out
}
