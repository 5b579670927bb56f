package api_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

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
