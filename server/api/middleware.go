package api

import (
	"cmp"
	"context"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/kessai/kessai/server/payment"
)

type contextKey int

const (
	requestIDKey contextKey = iota
	authKey
)

// RequestIDHeader carries the id of every request, in both directions.
const RequestIDHeader = "X-Request-Id"

// A client's own request id is kept when it looks like one, so its logs
// and ours can be joined; anything else is replaced, and so is anything
// holding what could be a card number, which would otherwise be echoed and
// logged on every line.
//
// validClientRequestID is ^[A-Za-z0-9._:-]{8,128}$, written out: the
// regular expression took a few per cent of a read's time.
func validClientRequestID(id string) bool {
	if len(id) < 8 || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '.', c == '_', c == ':', c == '-':
		default:
			return false
		}
	}
	return true
}

// requestState is what the layers learn of a request, under one context
// key: its id, then what authentication made of it. One context value and
// one copy of the request for both rather than one each.
type requestState struct {
	id     string
	auth   authResult
	authed bool
	// route and class are what the request is counted under in the
	// metrics (Meter): set by the router once a route matches (the pages'
	// layer for a page) and by the rate limits.
	route, class string
}

// stateOf is the request's state, nil for a request that came in around
// the request-id layer.
func stateOf(r *http.Request) *requestState {
	st, _ := r.Context().Value(requestIDKey).(*requestState)
	return st
}

func requestID(ctx context.Context) string {
	st, _ := ctx.Value(requestIDKey).(*requestState)
	if st == nil {
		return ""
	}
	return st.id
}

func (s *Server) withRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(RequestIDHeader)
		if !validClientRequestID(id) || payment.MaskCardNumbers(id) != id {
			id = payment.NewID().String()
		}
		w.Header().Set(RequestIDHeader, id)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), requestIDKey, &requestState{id: id})))
	})
}

// statusRecorder remembers what a handler answered, for the log line.
type statusRecorder struct {
	http.ResponseWriter
	status int
	bytes  int
}

func (sr *statusRecorder) WriteHeader(code int) {
	if sr.status == 0 {
		sr.status = code
	}
	sr.ResponseWriter.WriteHeader(code)
}

func (sr *statusRecorder) Write(b []byte) (int, error) {
	if sr.status == 0 {
		sr.status = http.StatusOK
	}
	n, err := sr.ResponseWriter.Write(b)
	sr.bytes += n
	return n, err
}

func (sr *statusRecorder) Unwrap() http.ResponseWriter { return sr.ResponseWriter }

// withLogging writes one line per request. It logs the path but never the
// query string or body: nothing a client sends is trusted to be free of
// card data.
func (s *Server) withLogging(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		if rec.status == 0 {
			rec.status = http.StatusOK
		}
		level := slog.LevelInfo
		if rec.status >= 500 {
			level = slog.LevelError
		}
		took := time.Since(start)
		s.log.LogAttrs(r.Context(), level, "request",
			slog.String("request_id", requestID(r.Context())),
			slog.String("method", r.Method),
			slog.String("path", payment.MaskCardNumbers(r.URL.Path)),
			slog.Int("status", rec.status),
			slog.Int("bytes", rec.bytes),
			slog.Duration("duration", took),
			slog.String("remote", remoteIP(r)),
		)
		if _, off := s.meter.(noMeter); off {
			return
		}
		route, class := RouteUnmatched, ClassNone
		if st := stateOf(r); st != nil {
			route, class = st.route, cmp.Or(st.class, class)
			if route == "" {
				route = cmp.Or(s.routeTemplate(r), RouteUnmatched)
			}
		}
		s.meter.Request(route, meterMethod(r.Method), class, rec.status, took)
	})
}

func remoteIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

func (s *Server) withRecovery(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.LogAttrs(r.Context(), slog.LevelError, "panic",
					slog.String("request_id", requestID(r.Context())),
					slog.Any("panic", v), slog.String("stack", string(debug.Stack())))
				s.writeError(w, r, payment.Errorf(payment.CodeInternal, ""))
			}
		}()
		r.Body = http.MaxBytesReader(w, r.Body, s.maxBody)
		next.ServeHTTP(w, r)
	})
}

// authResult is what authentication made of a request, kept in its
// context for the handlers and for the layers in front of them.
type authResult struct {
	caller *payment.Caller
	err    error
}

// withAuthentication checks the Authorization header of every request that
// has one. It refuses nothing itself: routes that need a caller do that
// (authed), so that an unknown path still answers 404 and the heartbeat
// needs no token.
func (s *Server) withAuthentication(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var res authResult
		if h := r.Header.Get("Authorization"); h != "" {
			res.caller, res.err = s.svc.Access.Authenticate(r.Context(), h, s.requestOrigin(r))
		} else {
			res.err = payment.Errorf(payment.CodeAuthHeaderMissing, "the Authorization header is missing")
		}
		if st, _ := r.Context().Value(requestIDKey).(*requestState); st != nil && !st.authed {
			// Set before any handler runs, and read only by the layers
			// and the handler below this one.
			st.auth, st.authed = res, true
			next.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), authKey, res)))
	})
}

// requestOrigin is the browser origin a request comes from. Browsers send
// no Origin header on same-origin GET and HEAD requests, such as the widget
// frame's charge polling: Sec-Fetch-Site (which no page can set) says the
// request came from the gateway's own pages, and stands for its origin.
func (s *Server) requestOrigin(r *http.Request) string {
	if o := r.Header.Get("Origin"); o != "" {
		return o
	}
	if r.Header.Get("Sec-Fetch-Site") == "same-origin" && s.publicOrigin != "" {
		return s.publicOrigin
	}
	return ""
}

func authOf(r *http.Request) authResult {
	ctx := r.Context()
	if res, ok := ctx.Value(authKey).(authResult); ok {
		return res
	}
	if st, _ := ctx.Value(requestIDKey).(*requestState); st != nil {
		return st.auth
	}
	return authResult{}
}

// endpoint answers an authenticated request with a status and a body to
// encode (nil: no body, as for 204), or with an error for the envelope.
// Handlers return rather than write so that each stays a decode, one
// service call and an answer.
type endpoint func(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error)

// authed turns an endpoint into a handler for requests that need a caller.
func (s *Server) authed(h endpoint) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		res := authOf(r)
		if res.err != nil || res.caller == nil {
			err := res.err
			if err == nil {
				err = payment.Errorf(payment.CodeAuthHeaderMissing, "")
			}
			s.writeError(w, r, err)
			return
		}
		ids, err := idsOf(r)
		if err == nil && ids.merchantNamed {
			err = res.caller.InMerchant(ids.merchant)
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		status, body, err := h(r, res.caller, ids)
		s.respond(w, r, status, body, err)
	}
}

// respond sends an endpoint's answer: the error envelope, a status alone
// (body nil) or the body as JSON.
func (s *Server) respond(w http.ResponseWriter, r *http.Request, status int, body any, err error) {
	switch {
	case err != nil:
		s.writeError(w, r, err)
	case body == nil:
		w.WriteHeader(status)
	default:
		s.writeJSON(w, r, status, body)
	}
}

// corsAllowHeaders are the request headers SDKs and the widget send.
const corsAllowHeaders = "Authorization, Content-Type, Accept, Idempotency-Key, X-Request-Id"

// corsExposeHeaders are the response headers a browser client may read.
const corsExposeHeaders = "X-Request-Id, Idempotency-Status, Retry-After, X-Remaining-Requests, X-Requests-Per-Minute, " +
	"X-Remaining-Requests-Route, X-Requests-Per-Minute-Route, X-Remaining-Requests-Exact, X-Requests-Per-Minute-Exact"

// withCORS lets browsers call the API from a store's own domains. The
// answer to a real request names the origin only when the caller's token
// allows it (or it is the gateway's own pages). A preflight carries no
// credentials, so it is answered for any origin that some active token
// allows; the real request is then checked against its own token.
func (s *Server) withCORS(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin == "" {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Add("Vary", "Origin")
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			if s.preflightAllowed(r.Context(), origin) {
				h := w.Header()
				h.Set("Access-Control-Allow-Origin", origin)
				h.Set("Access-Control-Allow-Methods", "GET, POST, PATCH, PUT, DELETE, OPTIONS")
				h.Set("Access-Control-Allow-Headers", corsAllowHeaders)
				h.Set("Access-Control-Max-Age", "600")
			}
			w.WriteHeader(http.StatusNoContent)
			return
		}
		next.ServeHTTP(&corsWriter{ResponseWriter: w, s: s, r: r, origin: origin}, r)
	})
}

// corsWriter decides the CORS headers when the response starts, once
// authentication has run.
type corsWriter struct {
	http.ResponseWriter
	s       *Server
	r       *http.Request
	origin  string
	decided bool
}

func (cw *corsWriter) decide() {
	if cw.decided {
		return
	}
	cw.decided = true
	allowed := cw.s.isOwnOrigin(cw.origin)
	if c := authOf(cw.r).caller; !allowed && c != nil {
		allowed = cw.s.svc.Access.OriginAllowedFor(c, cw.origin)
	} else if !allowed && c == nil {
		// Authentication failed: let a page that some token allows read
		// the error (say INVALID_APP_TOKEN) instead of a bare CORS failure.
		// An error reveals nothing a guess could use.
		allowed = cw.s.preflightAllowed(cw.r.Context(), cw.origin)
	}
	if allowed {
		h := cw.Header()
		h.Set("Access-Control-Allow-Origin", cw.origin)
		h.Set("Access-Control-Expose-Headers", corsExposeHeaders)
	}
}

func (cw *corsWriter) WriteHeader(code int) {
	cw.decide()
	cw.ResponseWriter.WriteHeader(code)
}

func (cw *corsWriter) Write(b []byte) (int, error) {
	cw.decide()
	return cw.ResponseWriter.Write(b)
}

func (cw *corsWriter) Unwrap() http.ResponseWriter { return cw.ResponseWriter }

func (s *Server) isOwnOrigin(origin string) bool {
	return s.publicOrigin != "" && strings.EqualFold(strings.TrimRight(origin, "/"), strings.TrimRight(s.publicOrigin, "/"))
}

func (s *Server) preflightAllowed(ctx context.Context, origin string) bool {
	if s.isOwnOrigin(origin) {
		return true
	}
	s.preflight.mu.Lock()
	defer s.preflight.mu.Unlock()
	now := s.svc.Charging.Clock().Now()
	if s.preflight.loaded.IsZero() || now.Sub(s.preflight.loaded) > s.preflight.ttl {
		domains, err := s.svc.Access.AllowedOrigins(ctx)
		if err != nil {
			return false
		}
		s.preflight.domains, s.preflight.loaded = domains, now
	}
	return payment.OriginAllowed(s.preflight.domains, origin)
}
