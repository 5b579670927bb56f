package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/kessai/kessai/server/payment"
)

// TestIdempotencyTellsBrowserFromServer (issue 25): the same key and body
// sent by a browser (the app token without its secret) after a merchant's
// server sent them (with the secret), or the other way round, is another
// request: a conflict, never the replay of the other's answer. A replay
// would hand a browser what only the server may see, such as a new app
// token's secret.
func TestIdempotencyTellsBrowserFromServer(t *testing.T) {
	f := newPayFixture(t, payOptions{idempotency: true})
	shop := origin("https://shop.example")
	for _, c := range []struct {
		name          string
		path          string
		body          any
		first, second string
		firstStatus   int
		hidden        []string
	}{
		{"token, server then browser", "/tokens", cardBody("4000020000000000"), server(f.a1), browser(f.a1), http.StatusCreated, []string{"id"}},
		{"token, browser then server", "/tokens", cardBody("4000020000000000"), browser(f.a1), server(f.a1), http.StatusCreated, []string{"id"}},
		{"app token, server then browser", storePath(f.storeA1, "/app_jwts"), map[string]any{"mode": "test", "domains": []string{"shop.example"}},
			server(f.a1), browser(f.a1), http.StatusCreated, []string{"id", "secret", "jwt"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			key := header("Idempotency-Key", "order-"+strings.ReplaceAll(c.name, " ", "-"))
			rec := f.do(t, "POST", c.path, c.first, c.body, key, shop)
			first := ok(t, rec, c.firstStatus)
			if got := rec.Header().Get("Idempotency-Status"); got != "successfully_stored" {
				t.Fatalf("first: Idempotency-Status %q", got)
			}
			rec = f.do(t, "POST", c.path, c.second, c.body, key, shop)
			wantError(t, rec, http.StatusConflict, payment.CodeIdempotencyConflict)
			if got := rec.Header().Get("Idempotency-Status"); got != "conflicting_key" {
				t.Errorf("second: Idempotency-Status %q, want conflicting_key", got)
			}
			for _, field := range c.hidden {
				if v := jstr(first, field); v != "" && strings.Contains(rec.Body.String(), v) {
					t.Errorf("the other caller's answer holds the first one's %s: %s", field, rec.Body)
				}
			}
			// The key still belongs to the first caller: its retry replays.
			rec = f.do(t, "POST", c.path, c.first, c.body, key, shop)
			if got := ok(t, rec, c.firstStatus); jstr(got, "id") != jstr(first, "id") {
				t.Errorf("the first caller's retry answered %s, want %s", jstr(got, "id"), jstr(first, "id"))
			}
			if got := rec.Header().Get("Idempotency-Status"); got != "retrieved_idempotent_response" {
				t.Errorf("retry: Idempotency-Status %q, want retrieved_idempotent_response", got)
			}
		})
	}
}
