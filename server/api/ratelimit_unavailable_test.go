package api_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/kessai/kessai/server/api"
	"github.com/kessai/kessai/server/limit"
	"github.com/kessai/kessai/server/payment"
)

// downLimiter is a limiter whose store cannot be reached: every call fails.
type downLimiter struct{ calls atomic.Int64 }

func (d *downLimiter) Admit(context.Context, []limit.Bucket) (limit.Result, error) {
	d.calls.Add(1)
	return limit.Result{}, errors.New("redis: rate limiter store unavailable: dial tcp 127.0.0.1:6379: connect: connection refused")
}

// lockedBuffer is a log destination handlers may write from any goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestRateLimiterUnavailable: when the limiter cannot decide, the request
// is refused with 503 and a short Retry-After, never admitted uncounted,
// and the failure is logged with the request id.
func TestRateLimiterUnavailable(t *testing.T) {
	f := newFixture(t)
	var logs lockedBuffer
	limiter := &downLimiter{}
	srv := api.New(api.Config{
		Service: f.svc, Logger: slog.New(slog.NewTextHandler(&logs, nil)), PublicOrigin: publicOrigin,
		RateLimits: api.RateLimits{Limiter: limiter, Rules: limit.DefaultRules()},
	})
	tokens := countStoreTokens(t, f)
	for _, tc := range []struct {
		name, method, path, body string
	}{
		{"standard class", http.MethodGet, "/stores/" + f.storeA1.String() + "/charges", ""},
		{"charge class", http.MethodPost, "/tokens", rlTokenBody("one_time")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := limiter.calls.Load()
			req := httptest.NewRequest(tc.method, tc.path, strings.NewReader(tc.body))
			req.Header.Set("Authorization", server(f.tokA1))
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			srv.ServeHTTP(rec, req)
			if rec.Code != http.StatusServiceUnavailable {
				t.Fatalf("status %d %s, want 503", rec.Code, rec.Body)
			}
			if got, want := strings.TrimSpace(rec.Body.String()), `{"status":"error","code":"SERVICE_UNAVAILABLE_TRY_AGAIN","errors":[]}`; got != want {
				t.Errorf("body %s, want %s", got, want)
			}
			if got := rec.Header().Get("Retry-After"); got != "1" {
				t.Errorf("Retry-After %q, want 1", got)
			}
			if limiter.calls.Load() != before+1 {
				t.Errorf("limiter called %d times, want once", limiter.calls.Load()-before)
			}
			id := rec.Header().Get(api.RequestIDHeader)
			if id == "" || !strings.Contains(logs.String(), "request_id="+id) || !strings.Contains(logs.String(), "connection refused") {
				t.Errorf("log %q does not name request %q and the cause", logs.String(), id)
			}
		})
	}
	if n := countStoreTokens(t, f) - tokens; n != 0 {
		t.Errorf("%d tokens created behind a limiter that could not count", n)
	}
}

// countStoreTokens counts store A1's tokens through the service, past the
// API and its limiter.
func countStoreTokens(tb testing.TB, f *fixture) int {
	tb.Helper()
	c, err := f.svc.Access.Authenticate(context.Background(), server(f.tokA1), "")
	if err != nil {
		tb.Fatal(err)
	}
	p, err := f.svc.Tokens.Tokens(context.Background(), c, f.storeA1, payment.TokenFilter{}, payment.ListParams{Limit: 100})
	if err != nil {
		tb.Fatal(err)
	}
	return rlHits(p)
}
