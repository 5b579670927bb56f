package api_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
)

// Regression tests of what a browser caller (the public appId, no secret)
// may do (issue 25), each over HTTP, on every path that takes the input or
// reaches the object; and that a merchant's server (with the secret) still
// can.

const (
	plainCard     = "4242424242424242" // enrolled; the issuer never challenges
	challengeCard = "4000002760003184" // enrolled; the issuer challenges
)

// externalMPI is a merchant's own 3-D Secure result, well formed and
// claiming a successful authentication.
var externalMPI = map[string]any{
	"authentication_value": "AAABBEg0VhI0VniQEjRWAAAAAAA=", "eci": "05",
	"ds_transaction_id": "f25084f0-5b16-4c0a-ae5d-b24808a95e4b", "server_transaction_id": "8a880dc0-d2d2-4067-bcb1-b08d1690b26e",
	"message_version": "2.2.0", "transaction_status": "Y",
}

// strictStore is a store of merchant A that requires 3-D Secure, with a
// test app token for shop.example.
func (f *payFixture) strictStore(t testing.TB) (uuid.UUID, *payment.IssuedAppToken) {
	t.Helper()
	ctx := context.Background()
	settings := payment.DefaultStoreSettings()
	settings.ThreeDSRequired = true
	st := &payment.Store{ID: payment.NewID(), MerchantID: f.merchantA, Name: "Strict", PCICompliant: true,
		Settings: settings, CreatedOn: f.clock.Now()}
	if err := f.db.Update(ctx, func(tx payment.Tx) error { return tx.CreateStore(ctx, st) }); err != nil {
		t.Fatal(err)
	}
	tok, err := f.svc.Access.IssueStoreAppToken(ctx, st.ID, payment.NewAppToken{Mode: payment.ModeTest, Domains: []string{"shop.example"}})
	if err != nil {
		t.Fatal(err)
	}
	return st.ID, tok
}

// countCharges is how many charges a store has.
func (f *payFixture) countCharges(t testing.TB, storeID uuid.UUID, auth string) int {
	t.Helper()
	return len(listIDs(t, ok(t, f.do(t, "GET", storePath(storeID, "/charges?limit=100"), auth, nil), http.StatusOK)))
}

// TestBrowserThreeDSNoWeakerThanTheStore: the appId alone sent made-up
// external MPI fields, or mode normal, and its charge ended successful
// without a challenge in a store that requires 3-D Secure. A browser may
// ask for no weaker 3-D Secure than its store's, nor for none of the
// gateway's own (skip, provided): on charges, subscriptions, tokens and
// a token's later 3-D Secure alike.
func TestBrowserThreeDSNoWeakerThanTheStore(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	strictID, strict := f.strictStore(t)
	fromShop := origin(payShopOrigin)
	type store struct {
		name string
		id   uuid.UUID
		tok  *payment.IssuedAppToken
	}
	lax, req := store{"lax", f.storeA1, f.a1}, store{"strict", strictID, strict}
	noMode := map[string]any(nil)
	mode := func(m string) map[string]any { return map[string]any{"mode": m} }
	cases := []struct {
		store   store
		name    string
		ds      map[string]any // nil: no three_ds
		allowed bool
		end     string // the charge once processed (plain card), when allowed
	}{
		{req, "external MPI", externalMPI, false, ""},
		{req, "external MPI, mode provided", with(externalMPI, "mode", "provided"), false, ""},
		{req, "skip", mode("skip"), false, ""},
		{req, "if_available", mode("if_available"), false, ""},
		{req, "normal", mode("normal"), false, ""},
		{req, "force", mode("force"), false, ""},
		{req, "require", mode("require"), true, "awaiting"},
		{req, "no three_ds", noMode, true, "awaiting"},
		{req, "no mode", map[string]any{"redirect_id": "order-1"}, true, "awaiting"},
		{lax, "external MPI", externalMPI, false, ""},
		{lax, "skip", mode("skip"), false, ""},
		{lax, "no three_ds", noMode, true, "successful"},
		{lax, "if_available", mode("if_available"), true, "successful"},
		{lax, "normal", mode("normal"), true, "successful"},
		{lax, "force", mode("force"), true, "awaiting"},
		{lax, "require", mode("require"), true, "awaiting"},
	}
	kv := func(ds map[string]any) []any {
		if ds == nil {
			return nil
		}
		return []any{"three_ds", ds}
	}

	t.Run("Charges", func(t *testing.T) {
		for _, c := range cases {
			t.Run(c.store.name+"/"+c.name, func(t *testing.T) {
				br := browser(c.store.tok)
				before := f.countCharges(t, c.store.id, server(c.store.tok))
				tok := jstr(f.tokenAt(t, br, cardBody(plainCard), fromShop), "id")
				rec := f.do(t, "POST", "/charges", br, chargeBody(tok, 3000, "JPY", kv(c.ds)...), fromShop)
				if !c.allowed {
					wantFieldReason(t, wantError(t, rec, http.StatusBadRequest, payment.CodeValidation, "three_ds.mode"), "three_ds.mode", "FORBIDDEN_PARAMETER")
					if n := f.countCharges(t, c.store.id, server(c.store.tok)); n != before {
						t.Errorf("a refused charge was recorded: %d charges, want %d", n, before)
					}
					return
				}
				id := jstr(ok(t, rec, http.StatusCreated), "id")
				f.process(t)
				if got := jstr(f.getChargeOf(t, c.store.id, c.store.tok, id), "status"); got != c.end {
					t.Errorf("charge is %s, want %s", got, c.end)
				}
			})
		}
	})

	t.Run("ChargesWithTheSecret", func(t *testing.T) {
		// The merchant's server may send its own authentication, or ask
		// for less than its store does.
		for _, c := range []struct {
			ds  map[string]any
			end string
		}{{externalMPI, "successful"}, {mode("normal"), "successful"}, {mode("skip"), "successful"}} {
			srv := server(strict)
			tok := jstr(f.tokenAt(t, srv, cardBody(plainCard)), "id")
			id := jstr(f.chargeAt(t, srv, chargeBody(tok, 3000, "JPY", "three_ds", c.ds)), "id")
			f.process(t)
			if got := jstr(f.getChargeOf(t, strictID, strict, id), "status"); got != c.end {
				t.Errorf("three_ds %v: charge is %s, want %s", c.ds, got, c.end)
			}
		}
	})

	t.Run("Subscriptions", func(t *testing.T) {
		later := map[string]any{"start_on": "2026-04-15"}
		for _, c := range cases {
			for _, sched := range []map[string]any{nil, later} {
				name := c.store.name + "/" + c.name
				if sched != nil {
					name += "/later start"
				}
				t.Run(name, func(t *testing.T) {
					br := browser(c.store.tok)
					tok := jstr(f.tokenAt(t, br, with(cardBody(plainCard), "type", "subscription"), fromShop), "id")
					b := subBody(tok, kv(c.ds)...)
					if sched != nil {
						b = with(b, "schedule_settings", sched)
					}
					rec := f.do(t, "POST", "/subscriptions", br, b, fromShop)
					if !c.allowed {
						wantFieldReason(t, wantError(t, rec, http.StatusBadRequest, payment.CodeValidation, "three_ds.mode"), "three_ds.mode", "FORBIDDEN_PARAMETER")
						return
					}
					ok(t, rec, http.StatusCreated)
				})
			}
		}
		srv := server(strict)
		tok := jstr(f.tokenAt(t, srv, with(cardBody(plainCard), "type", "subscription")), "id")
		ok(t, f.do(t, "POST", "/subscriptions", srv, subBody(tok, "three_ds", mode("normal"))), http.StatusCreated)
		tok = jstr(f.tokenAt(t, srv, with(cardBody(plainCard), "type", "subscription")), "id")
		ok(t, f.do(t, "POST", "/subscriptions", srv, subBody(tok, "three_ds", externalMPI)), http.StatusCreated)
	})

	// A token's own 3-D Secure counts for its charges (a charge on an
	// authenticated token goes frictionless unless forced), so a browser
	// that could authenticate its token frictionlessly, or skip, in a
	// store that requires a challenge would charge it without one. A
	// token's 3-D Secure without a mode runs as normal.
	tokenCases := []struct {
		store   store
		name    string
		body    map[string]any
		allowed bool
	}{
		{req, "three_ds enabled", with(cardBody(plainCard), "three_ds", map[string]any{"enabled": true}), false},
		{req, "data.three_ds enabled", withData(cardBody(plainCard), "three_ds", map[string]any{"enabled": true}), false},
		{req, "three_ds force", with(cardBody(plainCard), "three_ds", map[string]any{"enabled": true, "mode": "force"}), false},
		{req, "three_ds skip", with(cardBody(plainCard), "three_ds", map[string]any{"enabled": true, "mode": "skip"}), false},
		{req, "no three_ds", cardBody(plainCard), true},
		{lax, "three_ds skip", with(cardBody(plainCard), "three_ds", map[string]any{"enabled": true, "mode": "skip"}), false},
		{lax, "three_ds mode skip, not enabled", with(cardBody(plainCard), "three_ds", map[string]any{"mode": "skip"}), false},
		{lax, "three_ds enabled", with(cardBody(plainCard), "three_ds", map[string]any{"enabled": true}), true},
		{lax, "data.three_ds enabled", withData(cardBody(plainCard), "three_ds", map[string]any{"enabled": true}), true},
		{lax, "three_ds force", with(cardBody(plainCard), "three_ds", map[string]any{"enabled": true, "mode": "force"}), true},
	}
	t.Run("Tokens", func(t *testing.T) {
		for _, c := range tokenCases {
			t.Run(c.store.name+"/"+c.name, func(t *testing.T) {
				rec := f.do(t, "POST", "/tokens", browser(c.store.tok), c.body, fromShop)
				if !c.allowed {
					wantFieldReason(t, wantError(t, rec, http.StatusBadRequest, payment.CodeValidation, "three_ds.mode"), "three_ds.mode", "FORBIDDEN_PARAMETER")
					return
				}
				ok(t, rec, http.StatusCreated)
			})
		}
		// The merchant's server may.
		for _, c := range tokenCases {
			ok(t, f.do(t, "POST", "/tokens", server(c.store.tok), c.body), http.StatusCreated)
		}
	})

	t.Run("TokenThreeDSLater", func(t *testing.T) {
		for _, c := range []struct {
			store   store
			body    map[string]any
			allowed bool
		}{
			{req, nil, false},
			{req, map[string]any{"mode": "normal"}, false},
			{req, map[string]any{"mode": "force"}, false},
			{lax, map[string]any{"mode": "skip"}, false},
			{lax, nil, true},
			{lax, map[string]any{"mode": "if_available"}, true},
			{lax, map[string]any{"mode": "force"}, true},
		} {
			t.Run(c.store.name+"/"+jstr(c.body, "mode"), func(t *testing.T) {
				br := browser(c.store.tok)
				tok := jstr(f.tokenAt(t, br, with(cardBody(plainCard), "type", "recurring"), fromShop), "id")
				path := storePath(c.store.id, "/tokens/"+tok+"/three_ds")
				rec := f.do(t, "POST", path, br, c.body, fromShop)
				if !c.allowed {
					wantFieldReason(t, wantError(t, rec, http.StatusBadRequest, payment.CodeValidation, "mode"), "mode", "FORBIDDEN_PARAMETER")
					ok(t, f.do(t, "POST", path, server(c.store.tok), c.body), http.StatusOK)
					return
				}
				ok(t, rec, http.StatusOK)
			})
		}
	})
}

// TestBrowserCannotAuthenticateItsTokenFrictionlessly is the way round
// the store's 3-D Secure that token creation left open: a browser token
// authenticated without a challenge, then charged with no three_ds (as
// require), went through frictionlessly.
func TestBrowserCannotAuthenticateItsTokenFrictionlessly(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	_, strict := f.strictStore(t)
	br, fromShop := browser(strict), origin(payShopOrigin)
	rec := f.do(t, "POST", "/tokens", br, with(cardBody(plainCard), "three_ds", map[string]any{"enabled": true}), fromShop)
	if rec.Code == http.StatusCreated {
		tok := jstr(body(t, rec), "id")
		f.process(t)
		id := jstr(f.chargeAt(t, br, chargeBody(tok, 3000, "JPY"), fromShop), "id")
		f.process(t)
		t.Fatalf("a browser token authenticated frictionlessly was charged: %s", jstr(ok(t, f.do(t, "GET", "/charges/"+id, server(strict), nil), http.StatusOK), "status"))
	}
	wantError(t, rec, http.StatusBadRequest, payment.CodeValidation, "three_ds.mode")
}

// getChargeOf reads a charge of storeID with the store's secret.
func (f *payFixture) getChargeOf(t testing.TB, storeID uuid.UUID, tok *payment.IssuedAppToken, id string) map[string]any {
	t.Helper()
	return ok(t, f.do(t, "GET", storePath(storeID, "/charges/"+id), server(tok), nil), http.StatusOK)
}

// wantFieldReason checks that errs name field with reason.
func wantFieldReason(t testing.TB, errs []fieldError, field, reason string) {
	t.Helper()
	for _, e := range errs {
		if e.Field == field {
			if e.Reason != reason {
				t.Errorf("%s: reason %q, want %q", field, e.Reason, reason)
			}
			return
		}
	}
	t.Errorf("no error names %s: %v", field, errs)
}

// TestBrowserRedirectsOnItsDomains: a browser token set redirect.endpoint
// or three_ds.redirect_endpoint to any host, and the wallet page's Cancel
// sent the shopper there (303 Location: https://evil.example/…). A
// browser's redirect must be on its app token's domains (the link form's
// rule) or on the gateway's own pages (the link form's return), on every
// field that becomes a redirect.
func TestBrowserRedirectsOnItsDomains(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	br, fromShop := browser(f.a1), origin(payShopOrigin)
	const evil = "https://evil.example/phish"
	refused := []string{
		evil, "https://shop.example.evil.example/", "https://evil.example/?u=https://shop.example/",
		"https://evilshop.example/", "http://pay.kessai.test.evil.example/forms/x/return",
		// The gateway's own origin as a prefix of another host's.
		publicOrigin + ".evil.example/forms/x/return", publicOrigin + "-evil.example/",
	}
	allowed := []string{
		"https://shop.example/done?order=1", "http://shop.example:8443/done", publicOrigin + "/forms/order-1/return",
	}
	cardToken := func(t *testing.T, typ string) string {
		return jstr(f.tokenAt(t, br, with(cardBody(plainCard), "type", typ), fromShop), "id")
	}
	paths := []struct {
		name, field string
		// send makes the request as auth with the redirect u; opts
		// carry a browser's origin.
		send func(t *testing.T, auth, u string, opts ...reqOpt) *httptest.ResponseRecorder
	}{
		{"charge redirect.endpoint", "redirect.endpoint", func(t *testing.T, auth, u string, opts ...reqOpt) *httptest.ResponseRecorder {
			return f.do(t, "POST", "/charges", auth, chargeBody(cardToken(t, "one_time"), 1000, "JPY", "redirect", map[string]any{"endpoint": u}), opts...)
		}},
		{"wallet charge redirect.endpoint", "redirect.endpoint", func(t *testing.T, auth, u string, opts ...reqOpt) *httptest.ResponseRecorder {
			tok := jstr(f.tokenAt(t, br, onlineBody("pay_pay_online", "web"), fromShop), "id")
			return f.do(t, "POST", "/charges", auth, chargeBody(tok, 1000, "JPY", "redirect", map[string]any{"endpoint": u}), opts...)
		}},
		{"charge three_ds.redirect_endpoint", "three_ds.redirect_endpoint", func(t *testing.T, auth, u string, opts ...reqOpt) *httptest.ResponseRecorder {
			return f.do(t, "POST", "/charges", auth, chargeBody(cardToken(t, "one_time"), 1000, "JPY", "three_ds", map[string]any{"mode": "normal", "redirect_endpoint": u}), opts...)
		}},
		{"subscription redirect.endpoint", "redirect.endpoint", func(t *testing.T, auth, u string, opts ...reqOpt) *httptest.ResponseRecorder {
			return f.do(t, "POST", "/subscriptions", auth, subBody(cardToken(t, "subscription"), "redirect", map[string]any{"endpoint": u}), opts...)
		}},
		{"subscription three_ds.redirect_endpoint", "three_ds.redirect_endpoint", func(t *testing.T, auth, u string, opts ...reqOpt) *httptest.ResponseRecorder {
			return f.do(t, "POST", "/subscriptions", auth, subBody(cardToken(t, "subscription"), "three_ds", map[string]any{"redirect_endpoint": u}), opts...)
		}},
		{"token three_ds.redirect_endpoint", "three_ds.redirect_endpoint", func(t *testing.T, auth, u string, opts ...reqOpt) *httptest.ResponseRecorder {
			return f.do(t, "POST", "/tokens", auth, with(cardBody(plainCard), "three_ds", map[string]any{"enabled": true, "redirect_endpoint": u}), opts...)
		}},
		{"token data.three_ds.redirect_endpoint", "three_ds.redirect_endpoint", func(t *testing.T, auth, u string, opts ...reqOpt) *httptest.ResponseRecorder {
			return f.do(t, "POST", "/tokens", auth, withData(cardBody(plainCard), "three_ds", map[string]any{"enabled": true, "redirect_endpoint": u}), opts...)
		}},
		{"token POST three_ds redirect_endpoint", "redirect_endpoint", func(t *testing.T, auth, u string, opts ...reqOpt) *httptest.ResponseRecorder {
			path := storePath(f.storeA1, "/tokens/"+cardToken(t, "recurring")+"/three_ds")
			return f.do(t, "POST", path, auth, map[string]any{"redirect_endpoint": u}, opts...)
		}},
	}
	for _, p := range paths {
		t.Run(p.name, func(t *testing.T) {
			for _, u := range refused {
				rec := p.send(t, br, u, fromShop)
				wantFieldReason(t, wantError(t, rec, http.StatusBadRequest, payment.CodeValidation, p.field), p.field, payment.ReasonInvalidDomain)
			}
			for _, u := range allowed {
				if rec := p.send(t, br, u, fromShop); rec.Code >= 300 {
					t.Errorf("%s refused from a browser: %d %s", u, rec.Code, rec.Body)
				}
			}
			// The merchant's server sends its shoppers where it likes.
			if rec := p.send(t, server(f.a1), evil); rec.Code >= 300 {
				t.Errorf("%s refused with the secret: %d %s", evil, rec.Code, rec.Body)
			}
		})
	}

	// What the issue showed: a wallet charge's page sent the shopper to
	// the browser's host. The merchant's server may still choose any.
	tok := jstr(f.tokenAt(t, br, onlineBody("pay_pay_online", "web"), fromShop), "id")
	wantError(t, f.do(t, "POST", "/charges", br, chargeBody(tok, 1000, "JPY", "redirect", map[string]any{"endpoint": evil}), fromShop),
		http.StatusBadRequest, payment.CodeValidation, "redirect.endpoint")
	srvTok := jstr(f.tokenAt(t, server(f.a1), onlineBody("pay_pay_online", "web")), "id")
	id := f.charge(t, srvTok, 1000, "JPY", "redirect", map[string]any{"endpoint": evil})
	f.process(t)
	it := ok(t, f.do(t, "GET", f.chargePath(id)+"/issuer_token", server(f.a1), nil), http.StatusOK)
	if page := f.act(t, approvalKey(t, jstr(it, "issuer_token")), payment.ActionCancel, ""); page.RedirectEndpoint != evil {
		t.Errorf("the wallet page of the server's charge returns to %q, want %q", page.RedirectEndpoint, evil)
	}
}

// TestBrowserReadsOnlyItsOwnChallenge: with a charge's id, the appId read
// the issuer token of any charge of its store (a 3-D Secure challenge, a
// wallet's page, a merchant QR), and with the page's key could cancel or
// fail another shopper's payment. A browser reads them only for a charge
// a browser made in the last few minutes, as the widget does at once; a
// merchant's server, always.
func TestBrowserReadsOnlyItsOwnChallenge(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	br, fromShop := browser(f.a1), origin(payShopOrigin)
	// Each way a charge awaiting its shopper comes about, by whom.
	threeDS := func(tokAuth, chargeAuth string, tokOpts ...reqOpt) func(t *testing.T) string {
		return func(t *testing.T) string {
			tok := jstr(f.tokenAt(t, tokAuth, cardBody(challengeCard), tokOpts...), "id")
			var chOpts []reqOpt
			if chargeAuth == br {
				chOpts = []reqOpt{fromShop}
			}
			return jstr(f.chargeAt(t, chargeAuth, chargeBody(tok, 3000, "JPY", "three_ds", map[string]any{"mode": "normal"}), chOpts...), "id")
		}
	}
	wallet := func(body map[string]any, tokAuth, chargeAuth string) func(t *testing.T) string {
		return func(t *testing.T) string {
			var tokOpts, chOpts []reqOpt
			if tokAuth == br {
				tokOpts = []reqOpt{fromShop}
			}
			if chargeAuth == br {
				chOpts = []reqOpt{fromShop}
			}
			tok := jstr(f.tokenAt(t, tokAuth, body, tokOpts...), "id")
			return jstr(f.chargeAt(t, chargeAuth, chargeBody(tok, 700, "JPY"), chOpts...), "id")
		}
	}
	srv := server(f.a1)
	qr := map[string]any{"payment_type": "qr_merchant", "data": map[string]any{"brand": "pay_pay_merchant"}}
	online := onlineBody("pay_pay_online", "web")
	// Each route after …/charges/{id} that leads to an approval's page.
	routes := []struct {
		path      string
		byServer  func(t *testing.T) string
		byBrowser func(t *testing.T) string
		// serverOnBrowserToken: the merchant's server charged a token
		// the browser made moments ago (the widget's token checkout).
		serverOnBrowserToken func(t *testing.T) string
	}{
		{"/three_ds/issuer_token", threeDS(srv, srv), threeDS(br, br, fromShop), threeDS(br, srv, fromShop)},
		{"/issuer_token", wallet(online, srv, srv), wallet(online, br, br), wallet(online, br, srv)},
		{"/issuerToken", wallet(online, srv, srv), wallet(online, br, br), wallet(online, br, srv)},
		{"/qr", wallet(qr, srv, srv), wallet(qr, br, br), wallet(qr, br, srv)},
	}
	read := func(t *testing.T, auth, id, route string, opts ...reqOpt) *httptest.ResponseRecorder {
		t.Helper()
		return f.do(t, "GET", f.chargePath(id)+route, auth, nil, opts...)
	}
	for _, r := range routes {
		t.Run(strings.ReplaceAll(r.path[1:], "/", "_"), func(t *testing.T) {
			// Another shopper's charge, made by the merchant's server.
			id := r.byServer(t)
			f.process(t)
			wantError(t, read(t, br, id, r.path, fromShop), http.StatusForbidden, payment.CodeInvalidPermissions)
			ok(t, read(t, srv, id, r.path), http.StatusOK)

			// The merchant's server charged the browser's fresh token.
			id = r.serverOnBrowserToken(t)
			f.process(t)
			wantError(t, read(t, br, id, r.path, fromShop), http.StatusForbidden, payment.CodeInvalidPermissions)
			ok(t, read(t, srv, id, r.path), http.StatusOK)

			// The widget's own charge, while the shopper is at it.
			id = r.byBrowser(t)
			f.process(t)
			ok(t, read(t, br, id, r.path, fromShop), http.StatusOK)
			f.clock.Advance(4 * time.Minute)
			ok(t, read(t, br, id, r.path, fromShop), http.StatusOK)
			// A few minutes on, it is no longer the browser's to read;
			// the page itself is still open to the shopper who has it.
			f.clock.Advance(2 * time.Minute)
			wantError(t, read(t, br, id, r.path, fromShop), http.StatusForbidden, payment.CodeInvalidPermissions)
			ok(t, read(t, srv, id, r.path), http.StatusOK)
		})
	}

	t.Run("TokenChallenge", func(t *testing.T) {
		// A token's own 3-D Secure challenge, the sibling route: the same
		// rule, from the token (tokenThreeDSCaller).
		challenged := func(t *testing.T, auth string, opts ...reqOpt) string {
			t.Helper()
			b := withData(with(cardBody(challengeCard), "type", "recurring"), "three_ds", map[string]any{"enabled": true})
			id := jstr(f.tokenAt(t, auth, b, opts...), "id")
			f.process(t)
			return storePath(f.storeA1, "/tokens/"+id+"/three_ds/issuer_token")
		}
		path := challenged(t, srv)
		wantError(t, f.do(t, "GET", path, br, nil, fromShop), http.StatusForbidden, payment.CodeInvalidPermissions)
		ok(t, f.do(t, "GET", path, srv, nil), http.StatusOK)
		path = challenged(t, br, fromShop)
		ok(t, f.do(t, "GET", path, br, nil, fromShop), http.StatusOK)
		f.clock.Advance(6 * time.Minute)
		wantError(t, f.do(t, "GET", path, br, nil, fromShop), http.StatusForbidden, payment.CodeInvalidPermissions)
		ok(t, f.do(t, "GET", path, srv, nil), http.StatusOK)
	})

	t.Run("SubscriptionFirstCharge", func(t *testing.T) {
		// The widget follows a new subscription's first charge as a
		// payment's: the browser made it with the subscription.
		firstCharge := func(t *testing.T, auth string, opts ...reqOpt) string {
			t.Helper()
			tok := jstr(f.tokenAt(t, auth, with(cardBody(challengeCard), "type", "subscription"), opts...), "id")
			sub := jstr(ok(t, f.do(t, "POST", "/subscriptions", auth, subBody(tok, "three_ds", map[string]any{"mode": "normal"}), opts...), http.StatusCreated), "id")
			f.process(t)
			return listIDs(t, ok(t, f.do(t, "GET", f.subPath(sub)+"/charges", auth, nil, opts...), http.StatusOK))[0]
		}
		id := firstCharge(t, br, fromShop)
		ok(t, read(t, br, id, "/three_ds/issuer_token", fromShop), http.StatusOK)
		id = firstCharge(t, srv)
		wantError(t, read(t, br, id, "/three_ds/issuer_token", fromShop), http.StatusForbidden, payment.CodeInvalidPermissions)
		ok(t, read(t, srv, id, "/three_ds/issuer_token"), http.StatusOK)
	})
}

// TestBrowserWindowEdge: what a browser may do with what it has just made
// (follow its charge's or its token's challenge, charge its token, read
// its subscription) lasts five minutes to the instant: at five minutes it
// may, a millisecond later it may not; nor on a clock set back to before
// the object was made. The other tests stepped over the edge by minutes,
// so moving it by a second went unnoticed.
func TestBrowserWindowEdge(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	br, fromShop, srv := browser(f.a1), origin(payShopOrigin), server(f.a1)
	const window = 5 * time.Minute
	cases := []struct {
		name string
		// make makes the object as a browser and returns the request
		// that uses it.
		make func(t *testing.T) (method, path string, body any)
	}{
		{"charge's challenge", func(t *testing.T) (string, string, any) {
			tok := jstr(f.tokenAt(t, br, cardBody(challengeCard), fromShop), "id")
			id := jstr(f.chargeAt(t, br, chargeBody(tok, 3000, "JPY", "three_ds", map[string]any{"mode": "force"}), fromShop), "id")
			f.process(t)
			return "GET", f.chargePath(id) + "/three_ds/issuer_token", nil
		}},
		{"token's challenge", func(t *testing.T) (string, string, any) {
			b := withData(with(cardBody(challengeCard), "type", "recurring"), "three_ds", map[string]any{"enabled": true})
			id := jstr(f.tokenAt(t, br, b, fromShop), "id")
			f.process(t)
			return "GET", storePath(f.storeA1, "/tokens/"+id+"/three_ds/issuer_token"), nil
		}},
		{"token's first charge", func(t *testing.T) (string, string, any) {
			tok := jstr(f.tokenAt(t, br, cardBody(plainCard), fromShop), "id")
			return "POST", "/charges", chargeBody(tok, 3000, "JPY")
		}},
		{"subscription", func(t *testing.T) (string, string, any) {
			tok := jstr(f.tokenAt(t, br, with(cardBody(plainCard), "type", "subscription"), fromShop), "id")
			sub := jstr(ok(t, f.do(t, "POST", "/subscriptions", br, subBody(tok), fromShop), http.StatusCreated), "id")
			return "GET", f.subPath(sub), nil
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			made := f.clock.Now()
			// Three objects made at once: one used at the edge, one just
			// past it, one before it was made.
			m1, p1, b1 := c.make(t)
			m2, p2, b2 := c.make(t)
			m3, p3, b3 := c.make(t)
			f.clock.Set(made.Add(-time.Millisecond))
			wantError(t, f.do(t, m3, p3, br, b3, fromShop), http.StatusForbidden, payment.CodeInvalidPermissions)
			f.clock.Set(made.Add(window))
			if rec := f.do(t, m1, p1, br, b1, fromShop); rec.Code >= 300 {
				t.Errorf("at five minutes: %d %s", rec.Code, rec.Body)
			}
			f.clock.Advance(time.Millisecond)
			wantError(t, f.do(t, m2, p2, br, b2, fromShop), http.StatusForbidden, payment.CodeInvalidPermissions)
			// The merchant's server still may.
			if rec := f.do(t, m2, p2, srv, b2); rec.Code >= 300 {
				t.Errorf("with the secret: %d %s", rec.Code, rec.Body)
			}
		})
	}
}
