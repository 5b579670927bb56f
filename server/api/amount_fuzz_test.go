package api_test

import (
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kessai/kessai/server/payment"
)

// Fuzz targets for the amounts of POST /charges, POST .../refunds and
// POST .../capture: a raw JSON value for "amount" and one for "currency",
// through the real router over a real SQLite file (the payments fixture).
// Every target checks that no answer is a 5xx and every 4xx is exactly the
// error envelope; each adds what a success must hold. One gateway serves a
// whole fuzzing process; a charge is replaced only once an input has used
// it up, so every input meets the same state.

// amountSeeds are raw JSON values for "amount".
var amountSeeds = []string{
	"1000", "1", "50", "49", "0", "-1", "-1000", "9999999", "10000000", "9223372036854775807",
	"9223372036854775808", "-9223372036854775808", "-9223372036854775809", "18446744073709551616",
	"1e3", "1E3", "1e309", "1000.0", "1000.5", "0.1", "-0", "1000e0", `"1000"`, `""`, "null", "true",
	"[1000]", `{"value":1000}`, "01000", "0x3e8", "1_000", "NaN", "Infinity", "１０００", "",
	"1000,\"amount\":5", strings.Repeat("9", 400),
}

// currencySeeds are raw JSON values for "currency".
var currencySeeds = []string{`"JPY"`, `"jpy"`, `"USD"`, `"XXX"`, `""`, "null", "1", `"ＪＰＹ"`, `"JPY\u0000"`, `["JPY"]`}

// fuzzAnswer checks what every answer must hold: never a 5xx, and a 4xx
// is the error envelope (status "error", a code, an errors array).
func fuzzAnswer(t *testing.T, what string, rec *httptest.ResponseRecorder) {
	t.Helper()
	switch {
	case rec.Code >= 500:
		t.Fatalf("%s: %d %s", what, rec.Code, rec.Body)
	case rec.Code >= 400:
		var env struct {
			Code *string `json:"code"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &env); err != nil || env.Code == nil || *env.Code == "" {
			t.Fatalf("%s: %d without an error code: %s", what, rec.Code, rec.Body)
		}
		wantError(t, rec, rec.Code, payment.Code(*env.Code))
		if t.Failed() {
			t.FailNow()
		}
	}
}

// amountBody is a JSON object with "amount" and "currency" set to the raw
// values, either left out when empty, then the other fields.
func amountBody(amount, currency string, fields ...string) string {
	if amount != "" {
		fields = append(fields, `"amount":`+amount)
	}
	if currency != "" {
		fields = append(fields, `"currency":`+currency)
	}
	return "{" + strings.Join(fields, ",") + "}"
}

// FuzzChargeAmount: POST /charges on a recurring token. A 201 is a charge
// with 0 < requested_amount <= 10^12.
func FuzzChargeAmount(f *testing.F) {
	fx := newPayFixture(f, payOptions{})
	tok := fx.token(f, "4242424242424242", "type", "recurring")
	for _, a := range amountSeeds {
		f.Add(a, `"JPY"`)
	}
	for _, c := range currencySeeds {
		f.Add("1000", c)
	}
	f.Fuzz(func(t *testing.T, amount, currency string) {
		body := amountBody(amount, currency, `"transaction_token_id":"`+tok+`"`)
		rec := fx.do(t, "POST", "/charges", server(fx.a1), body)
		fuzzAnswer(t, "POST /charges "+body, rec)
		if rec.Code != http.StatusCreated {
			return
		}
		// The next charge is no duplicate and the daily test-charge
		// quota never binds.
		fx.clock.Advance(61 * time.Second)
		var ch struct {
			ID              string      `json:"id"`
			RequestedAmount json.Number `json:"requested_amount"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &ch); err != nil || ch.ID == "" {
			t.Fatalf("POST /charges %s: 201 %s", body, rec.Body)
		}
		if n := bigInt(t, ch.RequestedAmount); n.Sign() <= 0 || n.Cmp(big.NewInt(1e12)) > 0 {
			t.Fatalf("POST /charges %s: 201 with requested_amount %s", body, ch.RequestedAmount)
		}
	})
}

// FuzzRefundAmount: two refunds in a row on a successful charge of 10,000
// JPY. After any 201 the non-failed refunds of the charge, read back from
// its refund list, add up to no more than the charged amount.
func FuzzRefundAmount(f *testing.F) {
	const charged = 10000
	fx := newPayFixture(f, payOptions{})
	for _, a := range amountSeeds {
		f.Add(a, "", `"JPY"`)
		f.Add("1", a, `"JPY"`)
	}
	for _, c := range currencySeeds {
		f.Add("1000", "", c)
	}
	f.Add("10000", "1", `"JPY"`)
	f.Add("5000", "5001", `"JPY"`)
	var chargeID string
	f.Fuzz(func(t *testing.T, first, second, currency string) {
		if chargeID == "" {
			fx.clock.Advance(61 * time.Second)
			chargeID = fx.paidCharge(t, "5555555555554444", charged, true)
		}
		used := false
		for _, amount := range []string{first, second} {
			if amount == "" {
				continue
			}
			body := amountBody(amount, currency)
			rec := fx.do(t, "POST", fx.chargePath(chargeID)+"/refunds", server(fx.a1), body)
			fuzzAnswer(t, "refund "+body, rec)
			if rec.Code == http.StatusCreated {
				used = true
			}
		}
		if !used {
			return
		}
		id := chargeID
		chargeID = "" // used: the next input gets a fresh charge
		rec := fx.do(t, "GET", fx.chargePath(id)+"/refunds?limit=100", server(fx.a1), nil)
		if rec.Code != http.StatusOK {
			t.Fatalf("refund list: %d %s", rec.Code, rec.Body)
		}
		var list struct {
			Items []struct {
				Amount json.Number `json:"amount"`
				Status string      `json:"status"`
			} `json:"items"`
		}
		dec := json.NewDecoder(strings.NewReader(rec.Body.String()))
		dec.UseNumber()
		if err := dec.Decode(&list); err != nil {
			t.Fatalf("refund list: %v: %s", err, rec.Body)
		}
		sum := new(big.Int)
		for _, it := range list.Items {
			n := bigInt(t, it.Amount)
			if n.Sign() <= 0 {
				t.Errorf("a refund of %s", it.Amount)
			}
			if it.Status != "failed" {
				sum.Add(sum, n)
			}
		}
		if sum.Cmp(big.NewInt(charged)) > 0 {
			t.Fatalf("refunds %q then %q (currency %s): the refunds add up to %s, more than the %d charged: %s",
				first, second, currency, sum, charged, rec.Body)
		}
	})
}

// FuzzCaptureAmount: a capture of an authorised charge of 10,000 JPY; an
// empty amount leaves the key out, and both empty send a JSON null body.
// A 201 has an empty body, and once processed the charge is successful
// with 0 < charged_amount <= 10,000.
func FuzzCaptureAmount(f *testing.F) {
	const authorised = 10000
	fx := newPayFixture(f, payOptions{})
	for _, a := range amountSeeds {
		f.Add(a, `"JPY"`)
	}
	for _, c := range currencySeeds {
		f.Add("1000", c)
	}
	f.Add("", "")
	var chargeID string
	f.Fuzz(func(t *testing.T, amount, currency string) {
		if chargeID == "" {
			fx.clock.Advance(61 * time.Second)
			chargeID = fx.paidCharge(t, "4242424242424242", authorised, false)
		}
		body := amountBody(amount, currency)
		if amount == "" && currency == "" {
			body = "null"
		}
		rec := fx.do(t, "POST", fx.chargePath(chargeID)+"/capture", server(fx.a1), body)
		fuzzAnswer(t, "capture "+body, rec)
		if rec.Code != http.StatusCreated {
			return
		}
		id := chargeID
		chargeID = ""
		if rec.Body.Len() != 0 {
			t.Errorf("capture %s: 201 with a body: %s", body, rec.Body)
		}
		fx.process(t)
		ch := fx.getCharge(t, id)
		if got := jnum(ch, "charged_amount"); jstr(ch, "status") != "successful" || got <= 0 || got > authorised {
			t.Fatalf("capture %s: charge %s with charged_amount %v", body, jstr(ch, "status"), ch["charged_amount"])
		}
	})
}

// bigInt reads a JSON integer exactly.
func bigInt(t *testing.T, n json.Number) *big.Int {
	t.Helper()
	v, ok := new(big.Int).SetString(n.String(), 10)
	if !ok {
		t.Fatalf("%q is not an integer", n)
	}
	return v
}
