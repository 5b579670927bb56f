package api

import (
	"bytes"
	"context"
	"errors"
	"fmt"
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
// A crash between a request's commit and its stored answer: the answer is
// stored after the request ran, so a gateway that dies in between leaves
// the key in flight with its change made. The requests that make payment
// objects (charges, refunds, cancels, captures, subscriptions) therefore
// record what they made on the key in their own transaction, through the
// reservation this layer puts in the request's context (idempotencyRef)
// and the handler passes to the service: the object and the note commit
// together, and only while the reservation still holds the key. A retry
// after the lock timeout takes the key over (payment.Idempotency.Begin);
// when the abandoned run made something, the retry does not run the
// handler but answers with that object exactly as the handler answered
// when it made it (201 and the object as it is now, read as the caller:
// effectAnswer), Idempotency-Status retrieved_idempotent_response, and
// stores that answer. An abandoned run that was only slow and commits
// after the takeover fails with 409 IDEMPOTENCY_KEY_CONFLICT, its
// transaction rolled back. The same holds for a request whose change
// committed and whose answer then failed (5xx): its key is not released
// but answered, there and then, with the object made.
//
// Idempotency-Status, always lower-case and one of the values Java's SDK
// knows:
//
//	successfully_stored            first run, answer stored
//	retrieved_idempotent_response  replay of the stored answer, or the object an abandoned
//	                               first run made (a crash before its answer was stored)
//	conflicting_key                409: key used with another request, or its request still runs
//	not_stored                     key present but nothing stored: authentication failed, the key
//	                               was invalid (400, field idempotency_key), the body too large
//	                               (413), the answer was 5xx or 429 (and nothing was made), the
//	                               reservation was taken over
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
		case res.Effect() != nil:
			// An abandoned run of this request made something: that is
			// the answer, and the request does not run again.
			s.runReserved(w, r, s.effectAnswer(res.Effect()), res, idempotencyReplayed)
			return
		}
		r = r.WithContext(context.WithValue(r.Context(), idempotencyRefKey{}, res.Ref()))
		s.runReserved(w, r, next, res, idempotencyStored)
	})
}

type idempotencyRefKey struct{}

// idempotencyRef is the reservation of the key the request runs under (nil
// without one), for the handlers whose service method records on it what
// it makes.
func idempotencyRef(r *http.Request) *payment.IdempotencyRef {
	ref, _ := r.Context().Value(idempotencyRefKey{}).(*payment.IdempotencyRef)
	return ref
}

// runReserved runs next under the reservation, then stores its answer
// (Idempotency-Status stored when it was) or releases the key, and sends
// the answer.
func (s *Server) runReserved(w http.ResponseWriter, r *http.Request, next http.Handler, res *payment.IdempotencyReservation, stored string) {
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
		// The handler panicked (withRecovery answers 500): free the key,
		// unless the request made something before, which a retry is
		// then answered with.
		ctx, cancel := settleCtx()
		defer cancel()
		if _, err := res.Release(ctx); err != nil {
			s.logIdempotency(r, "release", err)
		}
		w.Header().Set(idempotencyStatusHeader, idempotencyNotStored)
	}()
	next.ServeHTTP(rec, r)
	finished = true

	ctx, cancel := settleCtx()
	defer cancel()
	keep := storable(rec.statusCode())
	if res.Effect() != nil {
		keep = effectShown(rec)
	}
	if !keep {
		made, err := res.Release(ctx)
		if err != nil {
			s.logIdempotency(r, "release", err)
		}
		if made == nil || res.Effect() != nil {
			s.sendRecorded(w, r, rec, idempotencyNotStored)
			return
		}
		// The request's change committed, its answer failed: the key
		// stays taken, and the object made is the answer, as a retry
		// would be told.
		rec = &responseRecorder{ResponseWriter: w, header: http.Header{}}
		s.effectAnswer(made).ServeHTTP(rec, r)
		if !effectShown(rec) {
			s.sendRecorded(w, r, rec, idempotencyNotStored)
			return
		}
	}
	if s.beforeAnswerStored != nil {
		s.beforeAnswerStored(r)
	}
	answer := &payment.IdempotentResponse{Status: rec.statusCode(), Header: map[string]string{}, Body: rec.body.Bytes()}
	for _, h := range replayedHeaders {
		if v := rec.header.Get(h); v != "" {
			answer.Header[h] = v
		}
	}
	outcome := stored
	switch err := res.Complete(ctx, answer); {
	case errors.Is(err, payment.ErrIdempotencyLockLost):
		outcome = idempotencyNotStored
	case err != nil:
		// The request ran; its answer is sent, unstored. The key stays
		// in flight until the lock timeout.
		s.logIdempotency(r, "complete", err)
		outcome = idempotencyError
	}
	s.sendRecorded(w, r, rec, outcome)
}

// sendRecorded sends a recorded answer with its Idempotency-Status.
func (s *Server) sendRecorded(w http.ResponseWriter, r *http.Request, rec *responseRecorder, outcome string) {
	h := w.Header()
	for k, v := range rec.header {
		h[k] = v
	}
	h.Set(idempotencyStatusHeader, outcome)
	w.WriteHeader(rec.statusCode())
	if r.Method != http.MethodHead {
		_, _ = w.Write(rec.body.Bytes())
	}
}

// effectShown reports whether an answer with what a request made showed
// the object: only then is it the key's answer. An error reading it (the
// object gone, or no longer the caller's to see: a browser's subscription
// after its few minutes) is not what the request answered; the key stays
// taken with its effect, and each retry past the lock timeout is answered
// afresh.
func effectShown(rec *responseRecorder) bool {
	return rec.statusCode() < http.StatusMultipleChoices
}

// effectAnswers answer with what a request made under its key, as its own
// handler answered when it made it, with the object as it is now and read
// as the caller: GET's read, the create route's answer.
var effectAnswers = map[payment.EffectKind]func(s *Server, r *http.Request, c *payment.Caller, e *payment.IdempotentEffect) (int, any, error){
	payment.EffectCharge: func(s *Server, r *http.Request, c *payment.Caller, e *payment.IdempotentEffect) (int, any, error) {
		return chargeCreated(s.svc.Charging.Charge(r.Context(), c, e.StoreID, e.ID, 0))
	},
	payment.EffectRefund: func(s *Server, r *http.Request, c *payment.Caller, e *payment.IdempotentEffect) (int, any, error) {
		return refundCreated(s.svc.Refunds.Refund(r.Context(), c, e.StoreID, e.ChargeID, e.ID, 0))
	},
	payment.EffectCancel: func(s *Server, r *http.Request, c *payment.Caller, e *payment.IdempotentEffect) (int, any, error) {
		return cancelCreated(s.svc.Refunds.Cancel(r.Context(), c, e.StoreID, e.ChargeID, e.ID, 0))
	},
	payment.EffectCapture: func(s *Server, r *http.Request, c *payment.Caller, e *payment.IdempotentEffect) (int, any, error) {
		// The charge must still be the caller's to see; the answer is
		// the capture's own, empty.
		_, err := s.svc.Charging.Charge(r.Context(), c, e.StoreID, e.ChargeID, 0)
		return captureRequested(err)
	},
	payment.EffectSubscription: func(s *Server, r *http.Request, c *payment.Caller, e *payment.IdempotentEffect) (int, any, error) {
		return subscriptionCreated(s.svc.Subscriptions.Subscription(r.Context(), c, e.StoreID, e.ID, 0))
	},
}

// effectAnswer answers a request with what an earlier run of it made
// (effectAnswers), without running it.
func (s *Server) effectAnswer(e *payment.IdempotentEffect) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		render, ok := effectAnswers[e.Kind]
		if !ok {
			s.respond(w, r, 0, nil, fmt.Errorf("idempotency key: no answer for an effect of kind %q", e.Kind))
			return
		}
		status, body, err := render(s, r, authOf(r).caller, e)
		s.respond(w, r, status, body, err)
	})
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
