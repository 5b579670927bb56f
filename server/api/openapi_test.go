package api_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/kessai/kessai/server/api"
	"github.com/kessai/kessai/server/limit"
	"github.com/kessai/kessai/server/openapi"
	"github.com/kessai/kessai/server/payment"
)

// The OpenAPI document (GET /openapi.json) checked against what the
// gateway really answers: every exchange below goes through the real
// router and is validated with kin-openapi's openapi3filter, request and
// response, with response bodies and undocumented statuses checked.

// exchange is one request and its answer, as the tests record them and as
// the Node SDK conformance harness writes them (one JSON object a line).
type exchange struct {
	Method          string      `json:"method"`
	URL             string      `json:"url"`
	RequestHeaders  http.Header `json:"request_headers"`
	RequestBody     string      `json:"request_body"`
	Status          int         `json:"status"`
	ResponseHeaders http.Header `json:"response_headers"`
	ResponseBody    string      `json:"response_body"`
	// Truncated says the response body was cut (an event stream): only
	// the status and headers can be checked.
	Truncated bool `json:"truncated"`
}

func (ex exchange) String() string { return fmt.Sprintf("%s %s → %d", ex.Method, ex.URL, ex.Status) }

// openAPIValidator validates exchanges against the served document.
type openAPIValidator struct {
	doc    *openapi3.T
	router routers.Router
	opts   *openapi3filter.Options
}

// registerEventStream lets openapi3filter read a text/event-stream body
// as the string the document says it is; it knows no such decoder.
var registerEventStream sync.Once

// newOpenAPIValidator loads the document as an integrator would: GET
// /openapi.json from a gateway.
func newOpenAPIValidator(tb testing.TB) *openAPIValidator {
	tb.Helper()
	rec := httptest.NewRecorder()
	api.New(api.Config{Logger: slog.New(slog.DiscardHandler)}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/openapi.json", nil))
	if rec.Code != http.StatusOK {
		tb.Fatalf("GET /openapi.json: %d %s", rec.Code, rec.Body)
	}
	doc, err := openapi.Load(rec.Body.Bytes())
	if err != nil {
		tb.Fatal(err)
	}
	return newValidatorFor(tb, doc)
}

func newValidatorFor(tb testing.TB, doc *openapi3.T) *openAPIValidator {
	tb.Helper()
	registerEventStream.Do(func() { openapi3filter.RegisterBodyDecoder("text/event-stream", openapi3filter.PlainBodyDecoder) })
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		tb.Fatal(err)
	}
	return &openAPIValidator{doc: doc, router: router, opts: &openapi3filter.Options{
		MultiError:            true,
		IncludeResponseStatus: true,
		AuthenticationFunc:    bearerPresent,
	}}
}

// bearerPresent checks what the document says of authentication: a bearer
// credential where the operation asks for one. Whether it is a good one
// is the gateway's to decide (and the status shows it).
func bearerPresent(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	if in.SecurityScheme == nil || in.SecurityScheme.Type != "http" || in.SecurityScheme.Scheme != "bearer" {
		return fmt.Errorf("unexpected security scheme %s", in.SecuritySchemeName)
	}
	if h := in.RequestValidationInput.Request.Header.Get("Authorization"); !strings.HasPrefix(h, "Bearer ") {
		return errors.New("no bearer credential")
	}
	return nil
}

// validate checks one exchange and returns the operation it was, "METHOD
// /template". A 2xx answer's request is validated as well as the answer:
// the request is what made it succeed. A path the document does not have
// may answer only the error envelope (404, 405).
func (v *openAPIValidator) validate(ex exchange) (string, error) {
	ctx := context.Background()
	target := ex.URL
	if !strings.Contains(target, "://") {
		target = "http://gateway.test" + target
	}
	req, err := http.NewRequestWithContext(ctx, ex.Method, target, strings.NewReader(ex.RequestBody))
	if err != nil {
		return "", fmt.Errorf("%s: %w", ex, err)
	}
	req.Header = ex.RequestHeaders.Clone()
	if req.Header == nil {
		req.Header = http.Header{}
	}
	route, params, err := v.router.FindRoute(req)
	if err != nil {
		if ex.Status != http.StatusNotFound && ex.Status != http.StatusMethodNotAllowed {
			return "", fmt.Errorf("%s: no operation: %w", ex, err)
		}
		return "", v.validateError(ex)
	}
	op := ex.Method + " " + route.Path
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: v.opts}
	if ex.Status >= 200 && ex.Status < 300 {
		if err := openapi3filter.ValidateRequest(ctx, in); err != nil {
			return op, fmt.Errorf("%s: request: %w", ex, err)
		}
	}
	if ex.Truncated {
		// The body was cut: what can be checked is that the status is
		// documented and the headers are as documented.
		in.Route = withoutContent(route, ex.Status)
		if in.Route == nil {
			return op, fmt.Errorf("%s: status not documented", ex)
		}
	}
	if resp := documented(in.Route, ex.Status); !ex.Truncated && resp != nil && len(resp.Content) == 0 && ex.ResponseBody != "" {
		return op, fmt.Errorf("%s: response: a body where the document has none: %.200q", ex, ex.ResponseBody)
	}
	if ex.Method == http.MethodHead {
		// openapi3filter checks nothing of an answer to HEAD; asked as a
		// GET of the HEAD operation, it checks the status and headers
		// (the operation has no content, and the answer no body).
		head := *in
		head.Request = req.Clone(ctx)
		head.Request.Method = http.MethodGet
		in = &head
	}
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in, Status: ex.Status, Header: ex.ResponseHeaders, Options: v.opts,
	}
	if out.Header == nil {
		out.Header = http.Header{}
	}
	out.SetBodyBytes([]byte(ex.ResponseBody))
	if err := openapi3filter.ValidateResponse(ctx, out); err != nil {
		return op, fmt.Errorf("%s: response: %w\nbody: %.2000s", ex, err, ex.ResponseBody)
	}
	return op, nil
}

// documented is the response the document gives for status: its own or
// the default; nil when there is neither.
func documented(route *routers.Route, status int) *openapi3.Response {
	resp := route.Operation.Responses.Status(status)
	if resp == nil {
		resp = route.Operation.Responses.Default()
	}
	if resp == nil {
		return nil
	}
	return resp.Value
}

// withoutContent is route with the response for status (or the default)
// stripped of its content, headers kept; nil when neither is documented.
func withoutContent(route *routers.Route, status int) *routers.Route {
	resp := documented(route, status)
	if resp == nil {
		return nil
	}
	bare := *resp
	bare.Content = nil
	op := *route.Operation
	op.Responses = openapi3.NewResponses(openapi3.WithStatus(status, &openapi3.ResponseRef{Value: &bare}))
	r := *route
	r.Operation = &op
	return &r
}

// validateError checks an answer to a path or method the document does
// not have: the error envelope, as JSON.
func (v *openAPIValidator) validateError(ex exchange) error {
	if ct := ex.ResponseHeaders.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		return fmt.Errorf("%s: Content-Type %q", ex, ct)
	}
	var body any
	if err := json.Unmarshal([]byte(ex.ResponseBody), &body); err != nil {
		return fmt.Errorf("%s: %w", ex, err)
	}
	schema := v.doc.Components.Schemas["Error"].Value
	if err := schema.VisitJSON(body, openapi3.EnableJSONSchema2020(), openapi3.MultiErrors()); err != nil {
		return fmt.Errorf("%s: not the error envelope: %w", ex, err)
	}
	return nil
}

// traffic drives a gateway and records every exchange.
type traffic struct {
	h         http.Handler
	exchanges []exchange
}

// send sends one request: body nil (none), a string (as is) or anything
// else (as JSON). It returns the status and the decoded JSON answer (nil
// when there is none or it is not an object).
func (tr *traffic) send(tb testing.TB, method, path, auth string, body any, opts ...reqOpt) (int, map[string]any) {
	tb.Helper()
	raw := requestBody(tb, body)
	var rb io.Reader
	if raw != nil {
		rb = bytes.NewReader(raw)
	}
	req := apiRequest(method, path, auth, rb, opts...)
	reqHeaders := req.Header.Clone()
	rec := httptest.NewRecorder()
	tr.h.ServeHTTP(rec, req)
	tr.exchanges = append(tr.exchanges, exchange{
		Method: method, URL: path, RequestHeaders: reqHeaders, RequestBody: string(raw),
		Status: rec.Code, ResponseHeaders: rec.Result().Header, ResponseBody: rec.Body.String(),
	})
	var m map[string]any
	_ = json.Unmarshal(rec.Body.Bytes(), &m)
	return rec.Code, m
}

// must sends a request that has to answer want, and returns the answer.
func (tr *traffic) must(tb testing.TB, want int, method, path, auth string, body any, opts ...reqOpt) map[string]any {
	tb.Helper()
	status, m := tr.send(tb, method, path, auth, body, opts...)
	if status != want {
		last := tr.exchanges[len(tr.exchanges)-1]
		tb.Fatalf("%s %s: %d, want %d: %s", method, path, status, want, last.ResponseBody)
	}
	return m
}

// stream opens the event stream, reads what it sends until it has said
// hello, and records the exchange.
func (tr *traffic) stream(tb testing.TB, auth string) {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req := httptest.NewRequestWithContext(ctx, http.MethodGet, "/events/stream", nil)
	req.Header.Set("Authorization", auth)
	rec := httptest.NewRecorder()
	w := &firstFlush{ResponseRecorder: rec, flushed: make(chan struct{})}
	done := make(chan struct{})
	go func() {
		defer close(done)
		tr.h.ServeHTTP(w, req)
	}()
	// The stream never ends by itself: it is closed as a client would,
	// once it has flushed its first lines (or ended at once, refused).
	select {
	case <-w.flushed:
	case <-done:
	case <-time.After(10 * time.Second):
		tb.Error("the event stream sent nothing within 10 s")
	}
	cancel()
	<-done
	tr.exchanges = append(tr.exchanges, exchange{
		Method: http.MethodGet, URL: "/events/stream", RequestHeaders: req.Header.Clone(),
		Status: rec.Code, ResponseHeaders: rec.Result().Header, ResponseBody: rec.Body.String(),
	})
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Body.String(), "retry: ") {
		tb.Fatalf("event stream: %d %q", rec.Code, rec.Body)
	}
}

// firstFlush tells when a streaming handler first flushes.
type firstFlush struct {
	*httptest.ResponseRecorder
	once    sync.Once
	flushed chan struct{}
}

func (w *firstFlush) Flush() {
	w.ResponseRecorder.Flush()
	w.once.Do(func() { close(w.flushed) })
}

// openAPIGateway is the payments fixture behind a server with every layer
// on: generous rate limits (so every answer carries their headers) and
// idempotency.
func openAPIGateway(tb testing.TB) (*payFixture, *traffic) {
	tb.Helper()
	f := newPayFixture(tb, payOptions{events: true, webhookSender: &fakeSender{status: 204}})
	srv := api.New(api.Config{
		Service: f.svc, Logger: slog.New(slog.DiscardHandler), PublicOrigin: publicOrigin, PollWait: 20 * time.Millisecond,
		RateLimits:  api.RateLimits{Limiter: limit.NewMemory(limit.MemoryConfig{Clock: f.clock}), Rules: rlGenerousRules},
		Idempotency: payment.NewIdempotency(f.db, f.clock, payment.IdempotencyConfig{FingerprintKey: []byte("openapi-test-fp")}),
	})
	return f, &traffic{h: srv}
}

// TestOpenAPITraffic drives every route of the router with realistic
// requests, errors included, and validates every exchange against the
// document. Every operation must have answered 2xx at least once.
func TestOpenAPITraffic(t *testing.T) {
	v := newOpenAPIValidator(t)
	f, tr := openAPIGateway(t)
	a1, merch := server(f.a1), server(f.merchA)
	st := f.storeA1.String()
	store := func(rest string) string { return "/stores/" + st + rest }
	id := func(m map[string]any) string { return jstr(m, "id") }

	// ---- meta, no credential
	for _, m := range []string{http.MethodGet, http.MethodHead} {
		tr.must(t, 200, m, "/heartbeat", "", nil)
		tr.must(t, 200, m, "/ready", "", nil)
		tr.must(t, 200, m, "/openapi.json", "", nil)
	}
	tr.must(t, 202, "POST", "/password_resets", "", map[string]any{"email": "nobody@example.com", "locale": "en"})

	// ---- merchant, stores, app tokens
	tr.must(t, 200, "GET", "/me", a1, nil)
	tr.must(t, 200, "GET", "/me/"+f.merchantA.String(), a1, nil)
	tr.must(t, 200, "GET", "/stores?limit=2", merch, nil)
	tr.must(t, 200, "GET", store(""), a1, nil)
	tr.must(t, 200, "GET", "/checkout_info", browser(f.a1), nil, origin(payShopOrigin))
	tr.must(t, 200, "POST", store("/create_customer_id"), a1, map[string]any{"customer_id": "customer-42"})
	tr.must(t, 200, "GET", "/app_jwts", merch, nil)
	jwt := tr.must(t, 201, "POST", "/app_jwts", merch, map[string]any{"mode": "test"})
	tr.must(t, 204, "DELETE", "/app_jwts/"+jstr(jwt, "jti"), merch, nil)
	tr.must(t, 200, "GET", store("/app_jwts"), a1, nil)
	jwt = tr.must(t, 201, "POST", store("/app_jwts"), a1, map[string]any{"domains": []string{"shop.example"}})
	tr.must(t, 204, "DELETE", store("/app_jwts/"+jstr(jwt, "jti")), a1, nil)

	// ---- webhooks first, so that the payments below fill their logs
	hook := id(tr.must(t, 201, "POST", store("/webhooks"), a1, hookBody(hookURL, "auth_token", "Bearer shop-secret")))
	mhook := id(tr.must(t, 201, "POST", "/webhooks", merch, hookBody(hookURL+"/merchant", "triggers", []string{"charge_finished", "refund_finished"})))
	tr.must(t, 200, "GET", store("/webhooks"), a1, nil)
	tr.must(t, 200, "GET", "/webhooks", merch, nil)
	tr.must(t, 200, "GET", store("/webhooks/"+hook), a1, nil)
	tr.must(t, 200, "GET", "/webhooks/"+mhook, merch, nil)
	tr.must(t, 200, "PATCH", store("/webhooks/"+hook), a1, map[string]any{"triggers": []string{"charge_finished", "subscription_created", "bank_transfer_status_updated"}})
	tr.must(t, 200, "PATCH", "/webhooks/"+mhook, merch, map[string]any{"active": true})
	// The same store's webhooks as UnivaPay's docs write their paths.
	merchantStore := func(rest string) string { return "/merchants/" + f.merchantA.String() + store(rest) }
	mshook := id(tr.must(t, 201, "POST", merchantStore("/webhooks"), a1, hookBody(hookURL+"/merchant-store")))
	tr.must(t, 200, "GET", merchantStore("/webhooks"), a1, nil)
	tr.must(t, 200, "GET", merchantStore("/webhooks/"+mshook), a1, nil)
	tr.must(t, 200, "PATCH", merchantStore("/webhooks/"+mshook), a1, map[string]any{"active": false})
	tr.must(t, 204, "DELETE", merchantStore("/webhooks/"+mshook), a1, nil)
	tr.must(t, 404, "GET", "/merchants/"+f.merchantB.String()+store("/webhooks/"+hook), a1, nil)

	// ---- tokens
	key := header("Idempotency-Key", "openapi-token-1")
	tok := id(tr.must(t, 201, "POST", "/tokens", a1, cardBody("4000020000000000"), key))
	tr.must(t, 201, "POST", "/tokens", a1, cardBody("4000020000000000"), key) // the replay
	tr.must(t, 200, "GET", "/tokens?limit=5&type=one_time", a1, nil)
	tr.must(t, 200, "GET", store("/tokens?active=active&payment_type=card"), a1, nil)
	tr.must(t, 200, "GET", store("/tokens/"+tok+"?polling=true"), a1, nil)
	tr.must(t, 200, "PATCH", store("/tokens/"+tok), a1, map[string]any{"email": "buyer2@example.com", "metadata": map[string]any{"customer": "42"}})
	recurring := id(tr.must(t, 201, "POST", "/tokens", a1, with(cardBody("4242424242424242"), "type", "recurring")))
	tr.must(t, 204, "DELETE", store("/tokens/"+recurring), a1, nil)

	// 3-D Secure on a recurring token: start, challenge, answer, withdraw.
	ds := id(tr.must(t, 201, "POST", "/tokens", a1, withData(with(cardBody("4000002760003184"), "type", "recurring"), "three_ds", map[string]any{"enabled": false})))
	tr.must(t, 200, "POST", store("/tokens/"+ds+"/three_ds"), a1, map[string]any{"redirect_endpoint": "https://shop.example/cards/done", "redirect_id": "card-1"})
	f.process(t)
	it := tr.must(t, 200, "GET", store("/tokens/"+ds+"/three_ds/issuer_token"), a1, nil)
	f.act(t, approvalKey(t, jstr(it, "issuer_token")), payment.ActionAnswer, "123456")
	tr.must(t, 200, "DELETE", store("/tokens/"+ds+"/three_ds"), a1, nil)

	// ---- charges: paid, captured, refunded, canceled
	paid := id(tr.must(t, 201, "POST", "/charges", a1, chargeBody(tok, 1000, "JPY", "metadata", map[string]any{"order_id": "A-1"})))
	f.process(t)
	tr.must(t, 200, "GET", "/charges/"+paid, a1, nil)
	tr.must(t, 200, "GET", store("/charges/"+paid+"?polling=true"), a1, nil)
	tr.must(t, 200, "GET", "/charges?limit=3&status=successful&currency=JPY", a1, nil)
	tr.must(t, 200, "GET", store("/charges?metadata=order_id:%20A-1"), a1, nil)
	tr.must(t, 200, "PATCH", store("/charges/"+paid), a1, map[string]any{"metadata": map[string]any{"shipped": true}})

	authOnly := func() string {
		t.Helper()
		f.clock.Advance(time.Minute) // out of the duplicate-charge window
		tok := id(tr.must(t, 201, "POST", "/tokens", a1, cardBody("4000020000000000")))
		ch := id(tr.must(t, 201, "POST", "/charges", a1, chargeBody(tok, 2000, "JPY", "capture", false)))
		f.process(t)
		return ch
	}
	captured := authOnly()
	tr.must(t, 201, "POST", store("/charges/"+captured+"/capture"), a1, map[string]any{})
	f.process(t)

	refunds := store("/charges/" + paid + "/refunds")
	refund := id(tr.must(t, 201, "POST", refunds, a1, map[string]any{"amount": "100", "currency": "JPY", "reason": "customer_request"}))
	f.process(t)
	tr.must(t, 200, "GET", refunds, a1, nil)
	tr.must(t, 200, "GET", refunds+"/"+refund+"?polling=true", a1, nil)
	tr.must(t, 200, "PATCH", refunds+"/"+refund, a1, map[string]any{"message": "damaged in transit"})

	canceled := authOnly()
	cancels := store("/charges/" + canceled + "/cancels")
	cancel := id(tr.must(t, 201, "POST", cancels, a1, map[string]any{"metadata": map[string]any{"why": "out of stock"}}))
	f.process(t)
	tr.must(t, 200, "GET", cancels, a1, nil)
	tr.must(t, 200, "GET", cancels+"/"+cancel, a1, nil)
	tr.must(t, 200, "PATCH", cancels+"/"+cancel, a1, map[string]any{"metadata": map[string]any{"ticket": 7}})

	// What PHP's SDK sends (seen by make conformance-php): a card token
	// whose data says "three_ds": null, a cancel whose body is [].
	f.clock.Advance(time.Minute)
	phpTok := id(tr.must(t, 201, "POST", "/tokens", a1, withData(cardBody("4000020000000000"), "three_ds", nil)))
	phpCharge := id(tr.must(t, 201, "POST", "/charges", a1, chargeBody(phpTok, 3000, "JPY", "capture", false)))
	f.process(t)
	tr.must(t, 201, "POST", store("/charges/"+phpCharge+"/cancels"), a1, "[]")

	// Shopper approvals: an online wallet, 3-D Secure, a merchant QR code.
	f.clock.Advance(time.Minute)
	wallet := id(tr.must(t, 201, "POST", "/tokens", a1, onlineBody("pay_pay_online", "web")))
	online := id(tr.must(t, 201, "POST", "/charges", a1, chargeBody(wallet, 1200, "JPY")))
	f.process(t)
	tr.must(t, 200, "GET", store("/charges/"+online+"/issuer_token"), a1, nil)
	tr.must(t, 200, "GET", store("/charges/"+online+"/issuerToken"), a1, nil)
	challenge := id(tr.must(t, 201, "POST", "/tokens", a1, cardBody("4000002760003184")))
	threeDS := id(tr.must(t, 201, "POST", "/charges", a1, chargeBody(challenge, 3000, "JPY",
		"three_ds", map[string]any{"mode": "normal", "redirect_endpoint": "https://shop.example/3ds/done", "redirect_id": "order-7"})))
	f.process(t)
	tr.must(t, 200, "GET", store("/charges/"+threeDS+"/three_ds/issuer_token"), a1, nil)
	qrTok := id(tr.must(t, 201, "POST", "/tokens", a1, map[string]any{"payment_type": "qr_merchant", "data": map[string]any{"brand": "pay_pay_merchant"}}))
	qr := id(tr.must(t, 201, "POST", "/charges", a1, chargeBody(qrTok, 980, "JPY")))
	tr.must(t, 200, "GET", store("/charges/"+qr+"/qr"), a1, nil)
	f.process(t)
	tr.must(t, 200, "GET", store("/charges/"+qr+"/qr"), a1, nil)
	// Konbini and bank transfers: tokens as PHP writes them, charges
	// awaiting their shopper, their deadlines, the ledger, the sandbox's
	// test helpers, and the refusals of each.
	f.clock.Advance(time.Minute)
	konbini := tr.must(t, 201, "POST", "/tokens", a1, konbiniBody("SEVEN_ELEVEN", "expiration_period", "P7D",
		"expiration_time_shift", "23:59:59+09:00"))
	tr.must(t, 200, "GET", store("/tokens/"+id(konbini)), a1, nil)
	slip := id(tr.must(t, 201, "POST", "/charges", a1, chargeBody(id(konbini), 1500, "JPY")))
	f.process(t)
	slipPath := store("/charges/" + slip)
	tr.must(t, 200, "GET", slipPath+"/issuer_token", a1, nil)
	tr.must(t, 200, "GET", slipPath+"/expiry/latest", a1, nil)
	tr.must(t, 200, "POST", slipPath+"/expiry", a1, map[string]any{"expiration_period": "P3D"})
	tr.must(t, 400, "POST", slipPath+"/expiry", a1, map[string]any{"expiration_period": "P3D", "expiration_date": "2026-04-01T00:00:00Z"})
	tr.must(t, 400, "POST", slipPath+"/expiry", a1, map[string]any{"expiration_period": "P31D"})
	tr.must(t, 403, "POST", slipPath+"/expiry", browser(f.a1), map[string]any{"expiration_period": "P1D"}, origin(payShopOrigin))
	tr.must(t, 403, "POST", slipPath+"/test_helpers/pay", server(f.a1Live), nil)
	tr.must(t, 200, "POST", slipPath+"/test_helpers/pay", a1, nil)
	tr.must(t, 400, "POST", "/tokens", a1, konbiniBody("lawson", "expiration_period", "P0D"))
	family := id(tr.must(t, 201, "POST", "/tokens", a1, konbiniBody("family_mart")))
	unpaid := id(tr.must(t, 201, "POST", "/charges", a1, chargeBody(family, 2500, "JPY")))
	f.process(t)
	tr.must(t, 200, "GET", store("/charges/"+unpaid+"/issuerToken"), a1, nil)
	tr.must(t, 200, "POST", store("/charges/"+unpaid+"/test_helpers/expire"), a1, nil)
	bank := id(tr.must(t, 201, "POST", "/tokens", a1, with(bankBody("bank_test_brand"), "metadata", map[string]any{"order_id": "T-1"})))
	transfer := id(tr.must(t, 201, "POST", "/charges", a1, chargeBody(bank, 1000, "JPY", "metadata", map[string]any{"order_id": "O-1"})))
	f.process(t)
	transferPath := store("/charges/" + transfer)
	tr.must(t, 200, "GET", transferPath+"/issuer_token", a1, nil)
	tr.must(t, 200, "GET", transferPath+"/bank_transfer_ledgers", a1, nil) // empty
	tr.must(t, 200, "POST", transferPath+"/test_helpers/deposit", a1, map[string]any{"amount": "400"})
	tr.must(t, 400, "POST", transferPath+"/test_helpers/deposit", a1, map[string]any{"amount": 0})
	tr.must(t, 200, "POST", transferPath+"/test_helpers/deposit", a1, map[string]any{"amount": 700})
	tr.must(t, 200, "GET", transferPath+"/bank_transfer_ledgers", a1, nil) // the payment and the deposits
	tr.must(t, 200, "GET", transferPath+"/bank_transfer_ledgers?limit=2&cursor_direction=asc", a1, nil)
	tr.must(t, 403, "GET", transferPath+"/bank_transfer_ledgers", browser(f.a1), nil, origin(payShopOrigin))
	tr.must(t, 404, "GET", "/stores/"+f.storeB1.String()+"/charges/"+transfer+"/bank_transfer_ledgers", server(f.b1), nil)
	tr.must(t, 400, "POST", store("/charges/"+paid+"/test_helpers/deposit"), a1, map[string]any{"amount": 100})
	tr.must(t, 201, "POST", store("/charges/"+transfer+"/refunds"), a1, map[string]any{"amount": 100, "currency": "JPY"}) // of the excess
	f.process(t)

	// Answers whose optional parts are filled: a billing address, declines
	// with their error, a failed refund, a redirect, a delayed capture.
	billed := id(tr.must(t, 201, "POST", "/tokens", a1, withData(cardBody("5555555555554444"),
		"line1", "1-2-3 Marunouchi", "city", "Chiyoda", "state", "Tokyo", "country", "JP", "zip", "100-0001",
		"phone_number", map[string]any{"country_code": "81", "local_number": "312345678"}, "exp_month", "09")))
	tr.must(t, 200, "GET", store("/tokens/"+billed), a1, nil)
	tr.must(t, 201, "POST", "/charges", a1, chargeBody(billed, 1500, "JPY", "redirect", map[string]any{"endpoint": "https://shop.example/done"},
		"capture_at", f.clock.Now().Add(48*time.Hour).Format(time.RFC3339), "capture", false, "descriptor", "KESSAI COFFEE"))
	for _, pan := range []string{"4000000000000002", "4000000000000119"} {
		declined := id(tr.must(t, 201, "POST", "/tokens", a1, cardBody(pan)))
		tr.must(t, 201, "POST", "/charges", a1, chargeBody(declined, 700, "JPY"))
	}
	f.clock.Advance(time.Minute)
	refused := id(tr.must(t, 201, "POST", "/tokens", a1, cardBody("4242424242424242")))
	refusedCharge := id(tr.must(t, 201, "POST", "/charges", a1, chargeBody(refused, 4000, "USD")))
	f.process(t)
	tr.must(t, 201, "POST", store("/charges/"+refusedCharge+"/refunds"), a1, map[string]any{"amount": 4000, "currency": "USD", "reason": "fraud"})
	f.process(t)
	if rf := tr.must(t, 200, "GET", store("/charges/"+refusedCharge+"/refunds"), a1, nil); jstr(rf["items"].([]any)[0].(map[string]any), "error.message") == "" {
		t.Errorf("the refund of 4242… did not fail: %v", rf)
	}
	kinds := map[string]bool{}
	for _, it := range tr.must(t, 200, "GET", store("/charges?limit=100"), a1, nil)["items"].([]any) { // every kind of charge in one page
		ch := it.(map[string]any)
		kinds[jstr(ch, "status")+"/"+fmt.Sprint(jget(ch, "error") != nil)] = true
	}
	for _, k := range []string{"successful/false", "failed/true", "error/true", "authorized/false", "canceled/false", "awaiting/false"} {
		if !kinds[k] {
			t.Errorf("no charge status/with-error %s among %v: the validation saw less than it should", k, kinds)
		}
	}
	tr.must(t, 200, "GET", store("/tokens?limit=100"), a1, nil) // every kind of token in one page

	tr.must(t, 200, "GET", "/transaction_history?type=charge", a1, nil)
	tr.must(t, 200, "GET", store("/transaction_history?limit=100"), a1, nil)

	// ---- subscriptions
	subTok := func() string {
		t.Helper()
		return id(tr.must(t, 201, "POST", "/tokens", a1, with(cardBody("4000020000000000"), "type", "subscription")))
	}
	plan := map[string]any{"amount": 1000, "currency": "JPY", "period": "monthly"}
	tr.must(t, 200, "POST", "/subscriptions/simulate_plan", a1, plan)
	tr.must(t, 200, "POST", store("/subscriptions/simulate_plan"), a1, with(plan, "subscription_plan", map[string]any{"plan_type": "fixed_cycles", "fixed_cycles": 3}))
	tr.must(t, 201, "POST", "/subscriptions", a1, subBody(subTok(), "initial_amount", "3000", "period", "",
		"cyclical_period", "P2W", "subscription_plan", map[string]any{"plan_type": "fixed_cycles", "fixed_cycles": 6},
		"schedule_settings", map[string]any{"zone_id": "Asia/Tokyo", "start_on": "2026-04-01", "termination_mode": "on_next_payment"}))
	tr.must(t, 201, "POST", "/subscriptions", a1, subBody(subTok(), "subscription_plan", map[string]any{"plan_type": "fixed_cycle_amount", "fixed_cycle_amount": 12000}))
	sub := id(tr.must(t, 201, "POST", "/subscriptions", a1, subBody(subTok(), "metadata", map[string]any{"plan": "beans"})))
	f.process(t)
	subPath := store("/subscriptions/" + sub)
	s := tr.must(t, 200, "GET", subPath+"?polling=true", a1, nil)
	tr.must(t, 200, "GET", "/subscriptions?status=current", a1, nil)
	tr.must(t, 200, "GET", "/subscriptions?limit=100", a1, nil) // every kind of subscription in one page
	tr.must(t, 200, "GET", store("/subscriptions?statuses[]=current&statuses[]=suspended"), a1, nil)
	tr.must(t, 200, "GET", subPath+"/charges", a1, nil)
	tr.must(t, 200, "GET", "/merchants/"+f.merchantA.String()+subPath+"/charges", a1, nil) // the Ruby SDK's path
	tr.must(t, 200, "GET", subPath+"/charges/latest", a1, nil)
	pays := tr.must(t, 200, "GET", subPath+"/payments", a1, nil)
	items, _ := pays["items"].([]any)
	if len(items) == 0 {
		t.Fatalf("subscription payments: %v", pays)
	}
	first := jstr(items[len(items)-1].(map[string]any), "id")
	tr.must(t, 200, "GET", subPath+"/payments/"+first, a1, nil)
	tr.must(t, 200, "GET", subPath+"/payments/"+first+"/charges", a1, nil)
	next := jstr(s, "next_payment.id")
	tr.must(t, 200, "PATCH", subPath+"/payments/"+next, a1, map[string]any{"retry_interval": "P1D"})
	tr.must(t, 200, "PATCH", subPath, a1, map[string]any{"descriptor": "BEANS", "metadata": map[string]any{"plan": "beans-2"}})
	tr.must(t, 200, "PATCH", "/subscriptions/"+sub+"/suspend", a1, map[string]any{})
	tr.must(t, 200, "PATCH", "/subscriptions/"+sub+"/unsuspend", a1, map[string]any{})
	tr.must(t, 200, "PATCH", subPath+"/suspend", a1, nil)
	tr.must(t, 200, "PATCH", subPath+"/unsuspend", a1, nil)
	tr.must(t, 200, "PATCH", "/subscriptions/"+sub+"/token", a1, map[string]any{"transaction_token_id": subTok()})
	tr.must(t, 200, "PATCH", subPath+"/token", a1, map[string]any{"transaction_token_id": subTok()})
	tr.must(t, 204, "DELETE", subPath+"?termination_mode=immediate", a1, nil)

	// ---- the webhooks' logs, the event stream, the deletions
	f.drain(t)
	log := tr.must(t, 200, "GET", store("/webhooks/"+hook+"/events"), a1, nil)
	event := jstr(log["items"].([]any)[0].(map[string]any), "id")
	tr.must(t, 200, "GET", store("/webhooks/"+hook+"/events?limit=100"), a1, nil) // every kind of event in one page
	tr.must(t, 200, "POST", store("/webhooks/"+hook+"/events/"+event+"/redeliver"), a1, nil)
	mlog := tr.must(t, 200, "GET", "/webhooks/"+mhook+"/events?limit=1", merch, nil)
	mevent := jstr(mlog["items"].([]any)[0].(map[string]any), "id")
	tr.must(t, 200, "POST", "/webhooks/"+mhook+"/events/"+mevent+"/redeliver", merch, nil)
	tr.stream(t, a1)
	tr.must(t, 204, "DELETE", store("/webhooks/"+hook), a1, nil)
	tr.must(t, 204, "DELETE", "/webhooks/"+mhook, merch, nil)

	// ---- errors, each in the envelope the document promises
	tr.must(t, 404, "GET", store("/charges/"+payment.NewID().String()), a1, nil)
	tr.must(t, 404, "GET", "/charges/not-an-id", a1, nil)
	tr.must(t, 404, "GET", "/no/such/path", a1, nil)
	tr.must(t, 405, "PUT", "/me", a1, nil)
	if bad := tr.must(t, 400, "POST", "/charges", a1, map[string]any{"transaction_token_id": tok, "amount": "12.5", "currency": "JPY"}); !strings.Contains(fmt.Sprint(bad["errors"]), "amount") {
		t.Errorf("a bad amount: %v, want the field named", bad)
	}
	tr.must(t, 400, "GET", "/charges?limit=1000", a1, nil)
	tr.must(t, 400, "POST", "/tokens", a1, `{"payment_type":`)
	tr.must(t, 401, "GET", "/me", "", nil)
	tr.must(t, 401, "GET", "/me", "Bearer not.a.token", nil)
	tr.must(t, 403, "GET", "/charges", browser(f.a1), nil, origin(payShopOrigin))
	tr.must(t, 201, "POST", "/webhooks", merch, hookBody(hookURL+"/dup"))
	tr.must(t, 409, "POST", "/webhooks", merch, hookBody(hookURL+"/dup"))
	tr.must(t, 409, "POST", "/tokens", a1, with(cardBody("4000020000000000"), "email", "other@example.com"), key)
	tr.must(t, 400, "POST", "/charges", a1, chargeBody(tok, 1000, "JPY"), header("Idempotency-Key", strings.Repeat("k", 300)))
	tr.must(t, 413, "POST", "/charges", a1, `{"metadata":"`+strings.Repeat("x", 2<<20)+`"}`)

	limited := api.New(api.Config{
		Service: f.svc, Logger: slog.New(slog.DiscardHandler), PublicOrigin: publicOrigin,
		RateLimits: api.RateLimits{Limiter: limit.NewMemory(limit.MemoryConfig{Clock: f.clock}), Rules: limit.Rules{
			Charge: limit.Rule{Burst: 1, BurstRefillPerMinute: 1, PerMinute: 1},
			Route:  limit.Rule{Burst: 1, BurstRefillPerMinute: 1, PerMinute: 1},
			Exact:  limit.Rule{Burst: 1, BurstRefillPerMinute: 1, PerMinute: 1},
		}},
		Readiness: []api.ReadinessCheck{{Name: "redis", Check: func(context.Context) error { return errors.New("down") }}},
	})
	lt := &traffic{h: limited}
	lt.must(t, 200, "GET", "/me", a1, nil)
	lt.must(t, 429, "GET", "/me", a1, nil)
	lt.must(t, 201, "POST", "/tokens", a1, cardBody("4000020000000000"))
	lt.must(t, 429, "POST", "/tokens", a1, cardBody("4000020000000000"))
	lt.must(t, 503, "GET", "/ready", "", nil)
	tr.exchanges = append(tr.exchanges, lt.exchanges...)

	routes, err := api.RouterOperations(f.srv)
	if err != nil {
		t.Fatal(err)
	}
	succeeded := map[string]bool{}
	statuses := map[int]int{}
	for _, ex := range tr.exchanges {
		op, err := v.validate(ex)
		if err != nil {
			t.Error(err)
			continue
		}
		statuses[ex.Status]++
		if ex.Status >= 200 && ex.Status < 300 {
			succeeded[op] = true
		}
	}
	for _, op := range routes {
		if !succeeded[op] {
			t.Errorf("%s never answered 2xx (with an exchange that validates) in this test", op)
		}
	}
	t.Logf("validated %d exchanges over %d operations; statuses %v", len(tr.exchanges), len(routes), statuses)
}

// readTraffic reads every *.jsonl file of dir: one exchange a line.
func readTraffic(tb testing.TB, dir string) []exchange {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	var out []exchange
	for _, name := range files {
		fh, err := os.Open(name)
		if err != nil {
			tb.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, 64<<20)
		for n := 1; sc.Scan(); n++ {
			line := bytes.TrimSpace(sc.Bytes())
			if len(line) == 0 {
				continue
			}
			var ex exchange
			if err := json.Unmarshal(line, &ex); err != nil {
				tb.Errorf("%s:%d: %v", name, n, err)
				continue
			}
			out = append(out, ex)
		}
		if err := sc.Err(); err != nil {
			tb.Errorf("%s: %v", name, err)
		}
		fh.Close()
	}
	return out
}

// validateTraffic validates every exchange of dir and returns how many
// there were and how many operations of the document they exercised.
func validateTraffic(t *testing.T, dir string) (exchanges, operations int) {
	t.Helper()
	v := newOpenAPIValidator(t)
	all := readTraffic(t, dir)
	ops := map[string]bool{}
	for _, ex := range all {
		op, err := v.validate(ex)
		if err != nil {
			t.Error(err)
		}
		if op != "" {
			ops[op] = true
		}
	}
	return len(all), len(ops)
}

// TestOpenAPIConformanceTraffic validates what the Node SDK conformance
// harness recorded against the real gateway binary, when it has.
func TestOpenAPIConformanceTraffic(t *testing.T) {
	dir := os.Getenv("KESSAI_OPENAPI_TRAFFIC")
	if dir == "" {
		t.Skip("KESSAI_OPENAPI_TRAFFIC unset: no conformance traffic to validate")
	}
	n, ops := validateTraffic(t, dir)
	if n == 0 {
		t.Fatalf("no exchanges in %s/*.jsonl", dir)
	}
	t.Logf("validated %d exchanges over %d operations from %s", n, ops, dir)
}

// TestOpenAPITrafficFiles reads the harness's format from a sample written
// by hand, so that the reader is proven before the harness's files come.
func TestOpenAPITrafficFiles(t *testing.T) {
	dir := filepath.Join("testdata", "openapi-traffic")
	if n, _ := validateTraffic(t, dir); n < 5 {
		t.Errorf("validated %d sample exchanges, want at least 5", n)
	}
}

// TestOpenAPIValidationBites: exchanges that break the document must fail
// validation, so that the tests above cannot pass by checking nothing.
func TestOpenAPIValidationBites(t *testing.T) {
	v := newOpenAPIValidator(t)
	jsonHeaders := func(kv ...string) http.Header {
		h := http.Header{"Content-Type": {"application/json; charset=utf-8"}, "X-Request-Id": {"01a2055a-cd9c-7c13-8567-80fb9a170a93"}}
		for i := 0; i+1 < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	auth := http.Header{"Authorization": {"Bearer x.y.z"}}
	good := exchange{Method: "GET", URL: "/heartbeat", Status: 200, ResponseHeaders: jsonHeaders(), ResponseBody: `{"status":"ok"}`}
	if _, err := v.validate(good); err != nil {
		t.Fatalf("the good exchange: %v", err)
	}
	cases := []struct {
		name string
		ex   exchange
		want string // in the error
	}{
		{"field of the wrong type", exchange{Method: "GET", URL: "/stores/01a2055a-cd9c-7c13-8567-80fb9a170a93/charges/01a2055a-cd9c-7c13-8567-80fb9a170a94/qr",
			RequestHeaders: auth, Status: 200, ResponseHeaders: jsonHeaders(), ResponseBody: `{"ready":"yes","qr_image_url":null}`}, "ready"},
		{"required field missing", exchange{Method: "GET", URL: "/stores/01a2055a-cd9c-7c13-8567-80fb9a170a93/charges/01a2055a-cd9c-7c13-8567-80fb9a170a94/qr",
			RequestHeaders: auth, Status: 200, ResponseHeaders: jsonHeaders(), ResponseBody: `{"ready":true}`}, "qr_image_url"},
		{"value outside its enum", exchange{Method: "GET", URL: "/heartbeat", Status: 200, ResponseHeaders: jsonHeaders(), ResponseBody: `{"status":"fine"}`}, "status"},
		{"undocumented status", exchange{Method: "GET", URL: "/heartbeat", Status: 201, ResponseHeaders: jsonHeaders(), ResponseBody: `{"status":"ok"}`}, "response"},
		{"error outside the envelope", exchange{Method: "GET", URL: "/me", RequestHeaders: auth, Status: 404, ResponseHeaders: jsonHeaders(),
			ResponseBody: `{"status":"error","code":"NOT_FOUND","errors":[],"detail":"no"}`}, "detail"},
		{"unknown error code", exchange{Method: "GET", URL: "/me", RequestHeaders: auth, Status: 404, ResponseHeaders: jsonHeaders(),
			ResponseBody: `{"status":"error","code":"MISSING","errors":[]}`}, "code"},
		{"no request id", exchange{Method: "GET", URL: "/heartbeat", Status: 200, ResponseHeaders: http.Header{"Content-Type": {"application/json"}}, ResponseBody: `{"status":"ok"}`}, "X-Request-Id"},
		{"rate-limit header not a number", exchange{Method: "GET", URL: "/heartbeat", Status: 200,
			ResponseHeaders: jsonHeaders("X-Remaining-Requests-Route", "many"), ResponseBody: `{"status":"ok"}`}, "X-Remaining-Requests-Route"},
		{"429 without Retry-After", exchange{Method: "GET", URL: "/heartbeat", Status: 429, ResponseHeaders: jsonHeaders(),
			ResponseBody: `{"status":"error","code":"TOO_MANY_REQUESTS","errors":[]}`}, "Retry-After"},
		{"wrong content type", exchange{Method: "GET", URL: "/heartbeat", Status: 200, ResponseHeaders: jsonHeaders("Content-Type", "text/plain"), ResponseBody: `ok`}, "text/plain"},
		{"2xx to a request the document refuses", exchange{Method: "GET", URL: "/charges?limit=1000", RequestHeaders: auth, Status: 200,
			ResponseHeaders: jsonHeaders(), ResponseBody: `{"items":[],"has_more":false}`}, "limit"},
		{"2xx without the credential the operation needs", exchange{Method: "GET", URL: "/me", Status: 200,
			ResponseHeaders: jsonHeaders(), ResponseBody: `{}`}, "security"},
		{"path the document lacks answering 2xx", exchange{Method: "GET", URL: "/nowhere", Status: 200, ResponseHeaders: jsonHeaders(), ResponseBody: `{}`}, "no operation"},
		{"HEAD without its request id", exchange{Method: "HEAD", URL: "/heartbeat", Status: 200, ResponseHeaders: http.Header{}}, "X-Request-Id"},
		{"a body where the document has none", exchange{Method: "DELETE", URL: "/webhooks/01a2055a-cd9c-7c13-8567-80fb9a170a93", RequestHeaders: auth, Status: 204,
			ResponseHeaders: jsonHeaders(), ResponseBody: `{}`}, "a body where the document has none"},
		{"truncated stream with an undocumented status", exchange{Method: "GET", URL: "/events/stream", RequestHeaders: auth, Status: 299,
			ResponseHeaders: http.Header{"Content-Type": {"text/event-stream"}}, Truncated: true}, "X-Request-Id"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := v.validate(c.ex)
			if err == nil {
				t.Fatalf("%s validated", c.ex)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v does not mention %q", err, c.want)
			}
		})
	}
}

// TestOpenAPIDocumentCoverageBites: a document missing a route, or
// describing one the router lacks, is told apart from the router's.
func TestOpenAPIDocumentCoverageBites(t *testing.T) {
	v := newOpenAPIValidator(t)
	routes, err := api.RouterOperations(api.New(api.Config{Logger: slog.New(slog.DiscardHandler)}))
	if err != nil {
		t.Fatal(err)
	}
	if got := api.DocumentOperations(v.doc); !slices.Equal(got, routes) {
		t.Fatalf("the document's operations differ from the router's:\n%v\n%v", got, routes)
	}
	missing := *v.doc
	missing.Paths = openapi3.NewPaths()
	for path, item := range v.doc.Paths.Map() {
		if path != "/me" {
			missing.Paths.Set(path, item)
		}
	}
	missing.Paths.Set("/me/extra", v.doc.Paths.Value("/me"))
	got := api.OperationMismatches(routes, api.DocumentOperations(&missing))
	want := []string{
		"the router serves GET /me; the document does not describe it",
		"the document describes GET /me/extra; the router does not serve it",
	}
	if !slices.Equal(got, want) {
		t.Errorf("a document without GET /me and with GET /me/extra: %q, want %q", got, want)
	}
	// The traffic validator refuses the route it no longer has.
	mv := newValidatorFor(t, &missing)
	if _, err := mv.validate(exchange{Method: "GET", URL: "/me", RequestHeaders: http.Header{"Authorization": {"Bearer x"}}, Status: 200,
		ResponseHeaders: http.Header{"Content-Type": {"application/json"}}, ResponseBody: `{}`}); err == nil {
		t.Error("GET /me validated against a document without it")
	}
}
