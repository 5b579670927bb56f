package api_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kessai/kessai/server/kessaitest"
	"github.com/kessai/kessai/server/payment"
)

// TestLongPollClientGoneIsNotAnError: a client that goes away while a
// ?polling=true read is held is not a server error. Nothing is logged at
// ERROR and nothing as an internal error; the request line says 499, the
// status nginx gives a request its client closed.
func TestLongPollClientGoneIsNotAnError(t *testing.T) {
	logs := &kessaitest.Buffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	f := newPayFixture(t, payOptions{logger: logger, pollWait: 30 * time.Second})
	// The worker does not run: whatever is pending stays pending, and a
	// poll of it is held until the client goes.
	paid := f.paidCharge(t, "4000020000000000", 1000, true)
	authorized := f.paidCharge(t, "4000020000000000", 1000, false)
	refund := jstr(ok(t, f.refund(t, paid, 100, "JPY"), http.StatusCreated), "id")
	cancel := jstr(ok(t, f.cancel(t, authorized), http.StatusCreated), "id")
	pending := f.charge(t, f.token(t, "4000020000000000"), 1000, "JPY")

	for _, tc := range []struct{ name, path string }{
		{"charge", f.chargePath(pending)},
		{"charge without store", "/charges/" + pending},
		{"refund", f.chargePath(paid) + "/refunds/" + refund},
		{"cancel", f.chargePath(authorized) + "/cancels/" + cancel},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(logs.String())
			ctx, hangUp := context.WithCancel(context.Background())
			defer hangUp()
			req := httptest.NewRequest(http.MethodGet, tc.path+"?polling=true", nil).WithContext(ctx)
			req.Header.Set("Authorization", server(f.a1))
			const held = 200 * time.Millisecond
			timer := time.AfterFunc(held, hangUp)
			defer timer.Stop()
			rec := httptest.NewRecorder()
			start := time.Now()
			f.srv.ServeHTTP(rec, req)
			elapsed := time.Since(start)
			if elapsed < held-20*time.Millisecond {
				t.Fatalf("the poll answered after %v (status %d), before the client went: %s", elapsed, rec.Code, rec.Body)
			}
			if elapsed > 10*time.Second {
				t.Errorf("the poll took %v to notice the client had gone", elapsed)
			}
			out := logs.String()[before:]
			for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
				if strings.Contains(line, "level=ERROR") || strings.Contains(line, "internal error") {
					t.Errorf("a client going away is logged as a server error: %s", line)
				}
			}
			if !strings.Contains(out, "status=499") {
				t.Errorf("the request line does not say 499 (client closed request):\n%s", out)
			}
			if rec.Code >= 500 {
				t.Errorf("status %d for a client that went away", rec.Code)
			}
		})
	}
}

// TestTimeFieldErrorsNameTheField: a time in a JSON body that is not a
// valid RFC 3339 string is a VALIDATION_ERROR naming that field, not the
// whole body.
func TestTimeFieldErrorsNameTheField(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	for _, bad := range []any{"tomorrow", 12, true, map[string]any{}, []any{}, "2026-13-01T00:00:00Z", "2026-03-05", ""} {
		tok := f.token(t, "4000020000000000")
		rec := f.do(t, "POST", "/charges", server(f.a1), chargeBody(tok, 1000, "JPY", "capture", false, "capture_at", bad))
		errs := wantError(t, rec, http.StatusBadRequest, payment.CodeValidation, "capture_at")
		for _, e := range errs {
			if e.Field == "body" {
				t.Errorf("capture_at = %#v: the error names the body: %+v", bad, errs)
			}
		}
	}
	// A well-formed time is not a format error (whatever the rules then say).
	tok := f.token(t, "4000020000000000")
	at := payEpoch.Add(48 * time.Hour).Format(time.RFC3339)
	rec := f.do(t, "POST", "/charges", server(f.a1), chargeBody(tok, 1000, "JPY", "capture", false, "capture_at", at))
	if rec.Code != http.StatusCreated && strings.Contains(rec.Body.String(), `"field":"capture_at","reason":"INVALID_FORMAT"`) {
		t.Errorf("capture_at = %s refused as malformed: %s", at, rec.Body)
	}
	// null means not given.
	tok = f.token(t, "4000020000000000")
	ok(t, f.do(t, "POST", "/charges", server(f.a1), chargeBody(tok, 1000, "JPY", "capture_at", nil)), http.StatusCreated)
}
