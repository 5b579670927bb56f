package api_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kessai/kessai/server/api"
	"github.com/kessai/kessai/server/kessaitest"
	"github.com/kessai/kessai/server/limit"
)

// TestMiddlewareLayers holds the order of the one chain both handlers are
// built from. The API's: an id and a log line for every response, even one
// that panicked; the caller known before CORS, the rate limits (whose
// subject it is) and the handlers; a request the limits refuse never
// reserving an idempotency key. The pages share the first three and have
// their own per-IP limit instead of the API's layers.
func TestMiddlewareLayers(t *testing.T) {
	srv := api.New(api.Config{})
	if got, want := srv.Layers(api.ScopeAPI), []string{"request-id", "logging", "recovery", "authentication", "cors", "rate-limit", "idempotency"}; !slices.Equal(got, want) {
		t.Errorf("API layers: %v, want %v", got, want)
	}
	if got, want := srv.Layers(api.ScopePages), []string{"request-id", "logging", "recovery", "page-limit"}; !slices.Equal(got, want) {
		t.Errorf("page layers: %v, want %v", got, want)
	}
}

// TestPagesLayers: a page gets the layers the chain names for it, in that
// order, and none of the API's. Its answers carry a request id and a log
// line even when it panics or the page limit refuses it (so the limit is
// inside the id and the log); it sees its own CORS preflights and carries
// no rate-limit headers of the API.
func TestPagesLayers(t *testing.T) {
	clock := kessaitest.NewClock(time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC))
	logs := &kessaitest.Buffer{}
	const perMinute = 200 // a burst of 20
	srv := api.New(api.Config{
		Logger:     slog.New(slog.NewTextHandler(logs, nil)),
		RateLimits: api.RateLimits{Limiter: limit.NewMemory(limit.MemoryConfig{Clock: clock}), Rules: limit.DefaultRules()},
		PageLimits: api.PageLimits{Limiter: limit.NewMemory(limit.MemoryConfig{Clock: clock}), PerMinute: perMinute},
	})
	var pageSaw []string
	page := srv.Pages(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pageSaw = append(pageSaw, r.Method+" "+r.URL.Path)
		if r.URL.Path == "/boom" {
			panic("page bug")
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	do := func(method, path string, h http.Header) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, path, nil)
		for k, v := range h {
			r.Header[k] = v
		}
		w := httptest.NewRecorder()
		page.ServeHTTP(w, r)
		return w
	}

	w := do(http.MethodGet, "/forms/x", nil)
	if w.Code != http.StatusNoContent || w.Header().Get(api.RequestIDHeader) == "" {
		t.Fatalf("page: %d, request id %q", w.Code, w.Header().Get(api.RequestIDHeader))
	}
	if h := w.Header().Get("X-Remaining-Requests"); h != "" {
		t.Errorf("a page carries the API's rate-limit header X-Remaining-Requests: %q", h)
	}
	preflight := http.Header{"Origin": {"https://shop.example"}, "Access-Control-Request-Method": {"POST"}}
	if w := do(http.MethodOptions, "/forms/x", preflight); w.Code != http.StatusNoContent || w.Header().Get("Access-Control-Allow-Origin") != "" ||
		!slices.Contains(pageSaw, "OPTIONS /forms/x") {
		t.Errorf("a page's preflight was answered by the API's CORS layer: %d %v", w.Code, w.Header())
	}

	w = do(http.MethodGet, "/boom", nil)
	id := w.Header().Get(api.RequestIDHeader)
	if w.Code != http.StatusInternalServerError || id == "" {
		t.Fatalf("panicking page: %d, request id %q", w.Code, id)
	}
	if !strings.Contains(logs.String(), "msg=panic request_id="+id) || !strings.Contains(logs.String(), "request_id="+id+" method=GET path=/boom status=500") {
		t.Errorf("the panic is not logged with its request id %s:\n%s", id, logs)
	}

	// Static files are not counted: a shop's page fetches a score of them
	// for each shopper behind one address.
	for i := range 100 {
		for _, path := range []string{"/static/x.css", "/client/checkout.js"} {
			if w := do(http.MethodGet, path, nil); w.Code != http.StatusNoContent {
				t.Fatalf("static file %s, request %d: %d", path, i, w.Code)
			}
		}
	}
	var refused *httptest.ResponseRecorder
	for range 40 {
		if w := do(http.MethodGet, "/forms/x", nil); w.Code == http.StatusTooManyRequests {
			refused = w
			break
		}
	}
	if refused == nil {
		t.Fatalf("40 page requests at once from one IP and none refused (burst %d)", 20)
	}
	id = refused.Header().Get(api.RequestIDHeader)
	if id == "" || refused.Header().Get("Retry-After") == "" {
		t.Errorf("refused page: request id %q, Retry-After %q", id, refused.Header().Get("Retry-After"))
	}
	if !strings.Contains(logs.String(), "request_id="+id+" method=GET path=/forms/x status=429") {
		t.Errorf("the refused page has no log line with its request id %s:\n%s", id, logs)
	}
	clock.Advance(time.Minute)
	if w := do(http.MethodGet, "/forms/x", nil); w.Code != http.StatusNoContent {
		t.Errorf("a minute later: %d, want the page", w.Code)
	}
}
