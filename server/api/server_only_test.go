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

// TestBrowserTokenCannotEdit: a browser credential cannot read or change
// what only the merchant's server may (a token, a charge's metadata, a
// refund, a cancel), even of objects it made itself: 403
// INVALID_PERMISSIONS, and nothing changes. PATCH of a token and of a
// refund were unguarded (issue 25: rules removed without a test noticing).
func TestBrowserTokenCannotEdit(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	br, fromShop := browser(f.a1), origin(payShopOrigin)
	tok := jstr(f.tokenAt(t, br, with(cardBody("4000020000000000"), "type", "recurring"), fromShop), "id")
	paid := f.paidCharge(t, "4000020000000000", 1000, true)
	auth := f.paidCharge(t, "4000020000000000", 1001, false)
	rf := jstr(ok(t, f.refund(t, paid, 100, "JPY"), http.StatusCreated), "id")
	cn := jstr(ok(t, f.cancel(t, auth), http.StatusCreated), "id")
	f.process(t)
	md := map[string]any{"metadata": map[string]any{"k": "browser"}}
	token, refund, cancel := storePath(f.storeA1, "/tokens/"+tok), f.chargePath(paid)+"/refunds/"+rf, f.chargePath(auth)+"/cancels/"+cn
	for _, tc := range []struct {
		name, method, path string
		body               any
	}{
		{"token read", "GET", token, nil},
		{"token list", "GET", storePath(f.storeA1, "/tokens"), nil},
		{"token PATCH", "PATCH", token, map[string]any{"email": "thief@example.com", "metadata": map[string]any{"k": "browser"}}},
		{"token DELETE", "DELETE", token, nil},
		{"charge PATCH", "PATCH", f.chargePath(paid), md},
		{"charge list", "GET", storePath(f.storeA1, "/charges"), nil},
		{"refund read", "GET", refund, nil},
		{"refund PATCH", "PATCH", refund, md},
		{"cancel read", "GET", cancel, nil},
		{"cancel PATCH", "PATCH", cancel, md},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, f.do(t, tc.method, tc.path, br, tc.body, fromShop), http.StatusForbidden, payment.CodeInvalidPermissions)
		})
	}
	m := ok(t, f.do(t, "GET", token, server(f.a1), nil), http.StatusOK)
	if jstr(m, "email") != "buyer@example.com" || m["active"] != true || jget(m, "metadata.k") != nil {
		t.Errorf("token after browser requests: e-mail %q, active %v, metadata %v", jstr(m, "email"), m["active"], m["metadata"])
	}
	for _, path := range []string{f.chargePath(paid), refund, cancel} {
		if m := ok(t, f.do(t, "GET", path, server(f.a1), nil), http.StatusOK); jget(m, "metadata.k") != nil {
			t.Errorf("%s after browser requests: metadata %v", path, m["metadata"])
		}
	}
}
