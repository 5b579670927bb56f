package api_test

import (
	"net/http"
	"testing"

	"github.com/kessai/kessai/server/payment"
)

// TestBrowserTokenCannotMoveMoney: a store's browser credential (its app
// token without the secret, from one of its domains) cannot refund, capture
// or cancel a charge, nor list its refunds: 403 INVALID_PERMISSIONS, and
// nothing happens to the charge.
func TestBrowserTokenCannotMoveMoney(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	paid := f.paidCharge(t, "4000020000000000", 1000, true)
	auth := f.paidCharge(t, "4000020000000000", 1000, false)
	br, fromShop := browser(f.a1), origin(payShopOrigin)
	cases := []struct {
		name, method, path string
		body               any
	}{
		{"refund", "POST", f.chargePath(paid) + "/refunds", map[string]any{"amount": 500, "currency": "JPY"}},
		{"refund list", "GET", f.chargePath(paid) + "/refunds", nil},
		{"capture", "POST", f.chargePath(auth) + "/capture", map[string]any{"amount": 500, "currency": "JPY"}},
		{"cancel", "POST", f.chargePath(auth) + "/cancels", map[string]any{}},
		{"cancel list", "GET", f.chargePath(auth) + "/cancels", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, f.do(t, tc.method, tc.path, br, tc.body, fromShop), http.StatusForbidden, payment.CodeInvalidPermissions)
		})
	}
	f.process(t)
	if got := listIDs(t, ok(t, f.do(t, "GET", f.chargePath(paid)+"/refunds", server(f.a1), nil), http.StatusOK)); len(got) != 0 {
		t.Errorf("refunds after browser requests: %v", got)
	}
	if got := listIDs(t, ok(t, f.do(t, "GET", f.chargePath(auth)+"/cancels", server(f.a1), nil), http.StatusOK)); len(got) != 0 {
		t.Errorf("cancels after browser requests: %v", got)
	}
	if st := jstr(f.getCharge(t, auth), "status"); st != "authorized" {
		t.Errorf("authorised charge is %s after browser requests, want authorized", st)
	}
	if st := jstr(f.getCharge(t, paid), "status"); st != "successful" {
		t.Errorf("paid charge is %s after browser requests, want successful", st)
	}
}
