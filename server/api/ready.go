package api

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/kessai/kessai/server/payment"
)

// ReadinessCheck is one part a process needs to serve: a name for the
// answer and a check that returns nil while the part answers.
type ReadinessCheck struct {
	Name  string
	Check func(context.Context) error
}

// readinessTimeout bounds each check: a load balancer polls and moves on.
const readinessTimeout = 2 * time.Second

// ready is GET /ready: 200 while storage (and every configured check)
// answers, so that a load balancer keeps sending; otherwise 503
// SERVICE_UNAVAILABLE_TRY_AGAIN naming each part that does not, with
// Retry-After, and the reason in the log under the request's id.
// /heartbeat stays the liveness answer: it says the process runs, not
// that it can serve.
func (s *Server) ready(w http.ResponseWriter, r *http.Request) {
	checks := append([]ReadinessCheck{{Name: "storage", Check: s.svc.Charging.Ready}}, s.readiness...)
	failed := &payment.Error{Code: payment.CodeServiceUnavailable, Message: "not ready"}
	for _, c := range checks {
		ctx, cancel := context.WithTimeout(r.Context(), readinessTimeout)
		err := c.Check(ctx)
		cancel()
		if err != nil {
			s.log.LogAttrs(r.Context(), slog.LevelWarn, "not ready", slog.String("request_id", requestID(r.Context())),
				slog.String("part", c.Name), slog.String("error", err.Error()))
			failed.Fields = append(failed.Fields, payment.FieldError{Field: c.Name, Reason: "UNAVAILABLE"})
		}
	}
	if len(failed.Fields) > 0 {
		w.Header().Set("Retry-After", "1")
		s.writeError(w, r, failed)
		return
	}
	s.writeJSON(w, r, http.StatusOK, map[string]string{"status": "ready"})
}
