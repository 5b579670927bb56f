package api

import (
	"net/http"
	"strconv"
	"time"

	"github.com/kessai/kessai/server/payment"
)

// passwordResetRequest is POST /password_resets: the console's "forgot my
// password" for scripts and other front ends. UnivaPay's SDKs have no such
// call; the route exists so that the limit on reset links (5 a day per
// address) answers as every other resource limit does.
type passwordResetRequest struct {
	Email  string `json:"email"`
	Locale string `json:"locale"`
}

// requestPasswordReset needs no app token: whoever lost a password has
// none. It answers 202 whether or not the address has a user, 400
// RESOURCE_LIMIT_REACHED (field password_reset_token) for the sixth
// request of a UTC day, and 429 with Retry-After when one client asks
// too often.
func (s *Server) requestPasswordReset(w http.ResponseWriter, r *http.Request) {
	var in passwordResetRequest
	if err := s.decode(r, &in); err != nil {
		s.writeError(w, r, err)
		return
	}
	err := s.svc.Console.RequestPasswordReset(r.Context(), payment.PasswordResetRequest{
		Email: in.Email, Locale: in.Locale, ClientIP: s.clientIP(r),
	})
	if pe, ok := err.(*payment.Error); ok && pe.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int((pe.RetryAfter+time.Second-1)/time.Second)))
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusAccepted, map[string]string{"status": "accepted"})
}
