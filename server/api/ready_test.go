package api_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"testing"

	"github.com/kessai/kessai/server/api"
	"github.com/kessai/kessai/server/payment"
)

// TestReady: GET /ready answers 200 while storage and every configured
// check answer, and 503 naming each part that does not, with Retry-After;
// /heartbeat answers 200 either way (it says the process runs).
func TestReady(t *testing.T) {
	f := newFixture(t)
	rec := f.do(t, http.MethodGet, "/ready", "", "")
	if body := ok(t, rec, http.StatusOK); body["status"] != "ready" {
		t.Fatalf("ready: %v", body)
	}
	down := errors.New("dial tcp 127.0.0.1:6379: connection refused")
	srv := api.New(api.Config{Service: f.svc, Logger: slog.New(slog.DiscardHandler), PublicOrigin: publicOrigin,
		Readiness: []api.ReadinessCheck{
			{Name: "redis", Check: func(context.Context) error { return down }},
			{Name: "other", Check: func(context.Context) error { return nil }},
		}})
	rec = f.doOn(t, srv, http.MethodGet, "/ready", "", "")
	wantError(t, rec, http.StatusServiceUnavailable, payment.CodeServiceUnavailable, "redis")
	if rec.Header().Get("Retry-After") != "1" {
		t.Errorf("Retry-After %q", rec.Header().Get("Retry-After"))
	}
	// A store that cannot be read: not ready, yet alive.
	if err := f.db.Close(); err != nil {
		t.Fatal(err)
	}
	rec = f.do(t, http.MethodGet, "/ready", "", "")
	wantError(t, rec, http.StatusServiceUnavailable, payment.CodeServiceUnavailable, "storage")
	ok(t, f.do(t, http.MethodGet, "/heartbeat", "", ""), http.StatusOK)
}
