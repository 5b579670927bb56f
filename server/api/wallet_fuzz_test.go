package api_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
)

// Fuzz targets for the new parsers of issue 11: an online token's data and
// a charge's external 3-D Secure data, through the real router. No answer
// is a 5xx, every 4xx is the error envelope, and what is accepted holds
// the rules.

// FuzzWalletToken: POST /tokens with payment_type online and arbitrary
// brand, call_method, os_type and user_identifier. A 201 names a
// simulated brand and a known call method, and has an os_type wherever
// the call method hands over to an app.
func FuzzWalletToken(f *testing.F) {
	fx := newPayFixture(f, payOptions{})
	for _, s := range [][4]string{
		{"pay_pay_online", "web", "", ""},
		{"pay_pay_online", "app", "ios", "u1"},
		{"PAY_PAY_ONLINE", "HTTP_GET", "", ""},
		{"alipay_online", "sdk", "android", strings.Repeat("x", 129)},
		{"we_chat_online", "http_get_mobile", "IOS", "open\u0000id"},
		{"paypay_online", "carrier", "symbian", "4242424242424242"},
		{"", "", "", ""},
		{"pay_pay_merchant", "http_post", "", ""},
	} {
		f.Add(s[0], s[1], s[2], s[3])
	}
	f.Fuzz(func(t *testing.T, brand, callMethod, osType, userID string) {
		data := map[string]any{"brand": brand, "call_method": callMethod, "os_type": osType, "user_identifier": userID}
		rec := fx.do(t, "POST", "/tokens", server(fx.a1), map[string]any{"payment_type": "online", "type": "one_time", "data": data})
		fuzzAnswer(t, "POST /tokens online", rec)
		if rec.Code != http.StatusCreated {
			return
		}
		var tok struct {
			Data struct {
				Brand      string  `json:"brand"`
				CallMethod string  `json:"call_method"`
				OSType     *string `json:"os_type"`
			} `json:"data"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &tok); err != nil {
			t.Fatalf("201 %s: %v", rec.Body, err)
		}
		d := tok.Data
		if !slices.Contains(payment.OnlineBrands, d.Brand) {
			t.Fatalf("brand %q accepted as %q", brand, d.Brand)
		}
		toApp := map[string]bool{"sdk": true, "app": true, "http_get_mobile": true}
		switch {
		case !slices.Contains([]string{"http_get", "http_get_mobile", "http_post", "sdk", "web", "app"}, d.CallMethod):
			t.Fatalf("call_method %q accepted as %q", callMethod, d.CallMethod)
		case toApp[d.CallMethod] && (d.OSType == nil || (*d.OSType != "ios" && *d.OSType != "android")):
			t.Fatalf("%s accepted with os_type %v", d.CallMethod, d.OSType)
		}
	})
}

// FuzzExternalThreeDS: POST /charges with a merchant's own 3-D Secure
// result. A 201 carried all six fields, each well formed, with an
// authenticated or attempted status, and is a charge of mode provided
// that never shows the authentication value.
func FuzzExternalThreeDS(f *testing.F) {
	fx := newPayFixture(f, payOptions{})
	tok := fx.token(f, "4242424242424242", "type", "recurring")
	good := [6]string{"AAABBEg0VhI0VniQEjRWAAAAAAA=", "05", "f25084f0-5b16-4c0a-ae5d-b24808a95e4b",
		"8a880dc0-d2d2-4067-bcb1-b08d1690b26e", "2.2.0", "Y"}
	f.Add(good[0], good[1], good[2], good[3], good[4], good[5])
	f.Add(good[0], "5", good[2], good[3], "2.1.0", "A")
	f.Add("", "", "", "", "", "")
	f.Add(good[0], good[1], "F25084F0-5B16-4C0A-AE5D-B24808A95E4B", good[3], "2.10.99", "N")
	f.Add(strings.Repeat("A", 65), "٠٥", "{f25084f0-5b16-4c0a-ae5d-b24808a95e4b}", good[3], "2.2", "y")
	f.Add("<script>", "05", good[2], "urn:uuid:8a880dc0-d2d2-4067-bcb1-b08d1690b26e", "2.2.0.1", "Y")
	f.Fuzz(func(t *testing.T, value, eci, ds, server3ds, version, status string) {
		three := map[string]any{
			"authentication_value": value, "eci": eci, "ds_transaction_id": ds,
			"server_transaction_id": server3ds, "message_version": version, "transaction_status": status,
		}
		rec := fx.do(t, "POST", "/charges", server(fx.a1), chargeBody(tok, 1000, "JPY", "three_ds", three))
		fuzzAnswer(t, "POST /charges with external 3-D Secure", rec)
		if rec.Code != http.StatusCreated {
			return
		}
		fx.clock.Advance(61 * time.Second) // no duplicate next time
		if value == "" && eci == "" && ds == "" && server3ds == "" && version == "" && status == "" {
			return // no external data at all: an ordinary charge
		}
		if status != "Y" && status != "A" {
			t.Fatalf("transaction_status %q accepted", status)
		}
		if len(eci) != 2 || strings.Trim(eci, "0123456789") != "" {
			t.Fatalf("eci %q accepted", eci)
		}
		for _, id := range []string{ds, server3ds} {
			if _, err := uuid.Parse(id); err != nil || len(id) != 36 {
				t.Fatalf("transaction id %q accepted", id)
			}
		}
		var m map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		if jstr(m, "three_ds.mode") != "provided" {
			t.Fatalf("charge with external data has three_ds %v", m["three_ds"])
		}
		if len(value) >= 8 && strings.Contains(rec.Body.String(), value) {
			t.Fatalf("the charge shows the authentication value %q", value)
		}
	})
}
