package api_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kessai/kessai/server/api"
	"github.com/kessai/kessai/server/kessaitest/servicetest"
	"github.com/kessai/kessai/server/payment"
)

// TestPasswordResetLimit: POST /password_resets needs no credential,
// answers 202 for five requests per address and UTC day whether or not
// the address has a user, and the sixth as every resource limit is
// answered; bad input names its field.
func TestPasswordResetLimit(t *testing.T) {
	f := newFixture(t)
	for _, email := range []string{payment.DemoEmail, "nobody@kessai.test"} {
		for i := range payment.PasswordResetsPerDay {
			rec := f.do(t, http.MethodPost, "/password_resets", "", `{"email":"`+email+`"}`,
				header("X-Forwarded-For", "192.0.2."+strconv.Itoa(i)))
			if body := ok(t, rec, http.StatusAccepted); body["status"] != "accepted" {
				t.Fatalf("%s #%d: %v", email, i+1, body)
			}
		}
		rec := f.do(t, http.MethodPost, "/password_resets", "", `{"email":"`+strings.ToUpper(email)+`"}`)
		wantError(t, rec, http.StatusBadRequest, payment.CodeResourceLimit, "password_reset_token")
	}
	for _, tc := range []struct{ body, field string }{
		{`{}`, "email"},
		{`{"email":"not-an-address"}`, "email"},
		{`{"email":12}`, "email"},
	} {
		rec := f.do(t, http.MethodPost, "/password_resets", "", tc.body)
		wantError(t, rec, http.StatusBadRequest, payment.CodeValidation, tc.field)
	}
}

// unavailableThrottle cannot count (its Redis is away).
type unavailableThrottle struct{}

func (unavailableThrottle) Take(context.Context, []payment.ThrottleKey) (time.Duration, error) {
	return 0, errors.New("redis: connection refused")
}

// TestPasswordResetThrottleUnavailable: when the attempt counter cannot
// count, a reset request is refused, not let through uncounted, with 503
// and Retry-After as every 503 of the API, as the document says.
func TestPasswordResetThrottleUnavailable(t *testing.T) {
	st := servicetest.New(t, servicetest.Options{Configure: func(c *payment.Config) { c.Throttle = unavailableThrottle{} }})
	tr := &traffic{h: api.New(api.Config{Service: st.Service, Logger: slog.New(slog.DiscardHandler)})}
	tr.must(t, http.StatusServiceUnavailable, http.MethodPost, "/password_resets", "", map[string]any{"email": payment.DemoEmail})
	ex := tr.exchanges[0]
	if got := ex.ResponseHeaders.Get("Retry-After"); got != "1" {
		t.Errorf("Retry-After %q, want 1", got)
	}
	if _, err := newOpenAPIValidator(t).validate(ex); err != nil {
		t.Error(err)
	}
}
