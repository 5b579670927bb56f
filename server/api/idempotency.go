package api

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/kessai/kessai/server/payment"
)

// Idempotency-Key, as UnivaPay's SDKs send it. The rules are payment.Idempotency's;
// this layer decides which requests take part, which answers are stored and
// what the Idempotency-Status header says.
//
// Which requests: POST and PATCH carrying a non-empty Idempotency-Key from
// an authenticated caller. Authentication failures (and, in front of this
// layer, rate limits) never consume a key.
//
// Which answers are stored: every answer of the handler below 500 except
// 429, successes and client errors alike: a service method is one
// transaction, so a client error had no effect and replaying it is what
// re-running would say; and once acquirers answer declines, the stored
// answer is what keeps a retry from trying the card again. 5xx answers and
// 429 are not stored: the key is released so that the client's retry, with
// the same key, runs the request again (Brandur's choice, not Stripe's). A
// 5xx here means the transaction rolled back; an operation that has made a
// foreign call before failing must answer something else, or be split into
// recovery points, before this stays safe.
//
// Idempotency-Status, always lower-case and one of the values Java's SDK
// knows:
//
//	successfully_stored            first run, answer stored
//	retrieved_idempotent_response  replay of the stored answer
//	conflicting_key                409: key used with another request, or its request still runs
//	not_stored                     key present but nothing stored: authentication failed, the key
//	                               was invalid (400, field idempotency_key), the body too large
//	                               (413), the answer was 5xx or 429, the reservation was taken over
//	                               as abandoned meanwhile, or the method is not POST/PATCH (GET,
//	                               DELETE, ...: the key is ignored and the request runs as usual)
//	error                          the key store failed: before the run (500, nothing ran) or
//	                               while storing the answer (the answer is sent, but not stored)
//	disabled                       the gateway runs without idempotency (Config.Idempotency nil)
//
// Requests without a key get no Idempotency-Status.
const (
	idempotencyKeyHeader    = "Idempotency-Key"
	idempotencyStatusHeader = "Idempotency-Status"

	idempotencyStored    = "successfully_stored"
	idempotencyNotStored = "not_stored"
	idempotencyReplayed  = "retrieved_idempotent_response"
	idempotencyConflict  = "conflicting_key"
	idempotencyError     = "error"
	idempotencyDisabled  = "disabled"
)

// replayedHeaders are the response headers stored and replayed with an
// answer; the others (request id, CORS, rate limits) belong to each request.
var replayedHeaders = []string{"Content-Type", "Location", "Cache-Control"}

// idempotencyStoreTimeout bounds storing or releasing a key after the
// request ran, which must happen even when the client has gone.
const idempotencyStoreTimeout = 10 * time.Second

// storable reports whether an answer with this status is stored. A request
// whose client went away (499) may have been cut short: a retry runs it.
func storable(status int) bool {
	return status < http.StatusInternalServerError && status != http.StatusTooManyRequests &&
		status != statusClientClosedRequest
}

func idempotentMethod(method string) bool {
	return method == http.MethodPost || method == http.MethodPatch
}

// withIdempotency answers retries of POST and PATCH requests from their
// stored first answer. It runs after authentication, inside CORS.
func (s *Server) withIdempotency(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get(idempotencyKeyHeader)
		if key == "" {
			next.ServeHTTP(w, r)
			return
		}
		auth := authOf(r)
		switch {
		case s.idem == nil:
			w.Header().Set(idempotencyStatusHeader, idempotencyDisabled)
			next.ServeHTTP(w, r)
			return
		case !idempotentMethod(r.Method) || auth.err != nil || auth.caller == nil:
			w.Header().Set(idempotencyStatusHeader, idempotencyNotStored)
			next.ServeHTTP(w, r)
			return
		}
		if err := payment.ValidIdempotencyKey(key); err != nil {
			w.Header().Set(idempotencyStatusHeader, idempotencyNotStored)
			s.writeError(w, r, err)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			w.Header().Set(idempotencyStatusHeader, idempotencyNotStored)
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				s.writeError(w, r, payment.Errorf(payment.CodeBodyTooLarge, "request body too large"))
				return
			}
			s.writeError(w, r, payment.Invalid("body", payment.ReasonInvalidFormat))
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))

		res, replay, err := s.idem.Begin(r.Context(), payment.IdempotentRequest{
			Scope:      payment.IdempotencyScope(auth.caller),
			Key:        key,
			Method:     r.Method,
			Target:     r.URL.RequestURI(),
			WithSecret: auth.caller.WithSecret(),
			Body:       body,
		})
		switch {
		case err != nil:
			status := idempotencyError
			switch payment.ErrorCode(err) {
			case payment.CodeIdempotencyConflict:
				status = idempotencyConflict
			case payment.CodeValidation:
				status = idempotencyNotStored
			}
			w.Header().Set(idempotencyStatusHeader, status)
			s.writeError(w, r, err)
			return
		case replay != nil:
			w.Header().Set(idempotencyStatusHeader, idempotencyReplayed)
			writeStored(w, r, replay)
			return
		}
		s.runReserved(w, r, next, res)
	})
}

// runReserved runs the request under its reservation, then stores or
// releases the key and sends the answer.
func (s *Server) runReserved(w http.ResponseWriter, r *http.Request, next http.Handler, res *payment.IdempotencyReservation) {
	// The key must be settled even when the client has gone away.
	settleCtx := func() (context.Context, context.CancelFunc) {
		return context.WithTimeout(context.WithoutCancel(r.Context()), idempotencyStoreTimeout)
	}
	rec := &responseRecorder{ResponseWriter: w, header: http.Header{}}
	finished := false
	defer func() {
		if finished {
			return
		}
		// The handler panicked (withRecovery answers 500): free the key.
		ctx, cancel := settleCtx()
		defer cancel()
		if err := res.Release(ctx); err != nil {
			s.logIdempotency(r, "release", err)
		}
		w.Header().Set(idempotencyStatusHeader, idempotencyNotStored)
	}()
	next.ServeHTTP(rec, r)
	finished = true

	status := rec.statusCode()
	ctx, cancel := settleCtx()
	defer cancel()
	outcome := idempotencyStored
	if storable(status) {
		stored := &payment.IdempotentResponse{Status: status, Header: map[string]string{}, Body: rec.body.Bytes()}
		for _, h := range replayedHeaders {
			if v := rec.header.Get(h); v != "" {
				stored.Header[h] = v
			}
		}
		switch err := res.Complete(ctx, stored); {
		case errors.Is(err, payment.ErrIdempotencyLockLost):
			outcome = idempotencyNotStored
		case err != nil:
			// The request ran; its answer is sent, unstored. The key stays
			// in flight until the lock timeout.
			s.logIdempotency(r, "complete", err)
			outcome = idempotencyError
		}
	} else {
		if err := res.Release(ctx); err != nil {
			s.logIdempotency(r, "release", err)
		}
		outcome = idempotencyNotStored
	}

	h := w.Header()
	for k, v := range rec.header {
		h[k] = v
	}
	h.Set(idempotencyStatusHeader, outcome)
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(rec.body.Bytes())
	}
}

// writeStored sends a stored answer as it was first sent.
func writeStored(w http.ResponseWriter, r *http.Request, resp *payment.IdempotentResponse) {
	h := w.Header()
	for k, v := range resp.Header {
		h.Set(k, v)
	}
	w.WriteHeader(resp.Status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(resp.Body)
	}
}

func (s *Server) logIdempotency(r *http.Request, op string, err error) {
	s.log.LogAttrs(r.Context(), slog.LevelError, "idempotency key",
		slog.String("request_id", requestID(r.Context())), slog.String("op", op), slog.String("error", err.Error()))
}

// responseRecorder buffers a handler's answer so that it can be stored
// before it is sent. Flush is a no-op: a buffered answer cannot be sent in
// parts.
type responseRecorder struct {
	http.ResponseWriter
	header http.Header
	status int
	body   bytes.Buffer
}

func (rr *responseRecorder) Header() http.Header { return rr.header }

func (rr *responseRecorder) WriteHeader(code int) {
	if rr.status == 0 {
		rr.status = code
	}
}

func (rr *responseRecorder) Write(b []byte) (int, error) {
	if rr.status == 0 {
		rr.status = http.StatusOK
	}
	return rr.body.Write(b)
}

func (rr *responseRecorder) Flush() {}

func (rr *responseRecorder) Unwrap() http.ResponseWriter { return rr.ResponseWriter }

func (rr *responseRecorder) statusCode() int {
	if rr.status == 0 {
		return http.StatusOK
	}
	return rr.status
}
