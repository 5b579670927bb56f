// Package api is Kessai's HTTP API: the UnivaPay wire format on
// gorilla/mux. It is the only package that knows the API's router.
// Handlers are thin: they decode a request, call one method of one
// capability's service (services.Set) and encode the answer; the rules
// live under package payment, and the shapes of the payment resources in
// package univapay, which webhooks share.
package api

import (
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/mux"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/payment/services"
)

// Config is what the API needs.
type Config struct {
	// Service is the domain's services, one per capability.
	Service *services.Set
	Logger  *slog.Logger
	// PublicOrigin is the gateway's own origin (scheme://host[:port]); its
	// pages may always call the API from a browser.
	PublicOrigin string
	// MaxBodyBytes caps request bodies; default 1 MiB.
	MaxBodyBytes int64
	// PollWait is the longest a ?polling=true read is held while its
	// object is still being processed; default 3 s.
	PollWait time.Duration
	// RateLimits limits the API's requests (README, "Rate limits and other limits"); a nil
	// Limiter turns that off.
	RateLimits RateLimits
	// Idempotency keeps the answers of POST and PATCH requests carrying an
	// Idempotency-Key; nil turns the feature off (idempotency.go).
	Idempotency *payment.Idempotency
	// PageLimits limits the requests Pages serves.
	PageLimits PageLimits
	// Readiness are what GET /ready checks besides storage (Redis, when
	// the limits are there).
	Readiness []ReadinessCheck
	// Meter is told of every request and rate-limit decision, for the
	// operators' metrics; nil counts nothing.
	Meter Meter
	// PageRoutes are the path prefixes of the pages (their packages' Paths): a
	// page's requests are counted under the longest that matches.
	PageRoutes []string
	// BeforeIdempotentAnswerStored, when set, is called after a request
	// with an Idempotency-Key has run and before its answer is stored:
	// where the crash test stops a gateway built with the
	// kessai_crashpoints tag. Nil in every other build.
	BeforeIdempotentAnswerStored func(*http.Request)
}

// merchantPrefix is the /merchants/{merchantId} that UnivaPay documents
// before some of its /stores/{storeId} routes, as a part that may be left
// out: the Ruby SDK (generated from UnivaPay's OpenAPI document) lists a
// subscription's charges under it, and the docs' webhook pages ("Webhooks:
// Get", "Webhooks: Update") name it for a store's webhooks. Kessai serves
// those forms beside the store-prefixed ones, with the same handlers; the
// merchant must be the caller's own (authed), so that any other id is
// NOT_FOUND.
const merchantPrefix = "/merchants/{merchantId}"

// Server serves the API.
type Server struct {
	svc          *services.Set
	log          *slog.Logger
	publicOrigin string
	maxBody      int64
	pollWait     time.Duration
	limits       RateLimits
	pages        PageLimits
	router       *mux.Router
	handler      http.Handler
	idem         *payment.Idempotency
	readiness    []ReadinessCheck
	meter        Meter
	pageRoutes   []string

	beforeAnswerStored func(*http.Request)

	preflight preflightCache
	// streams ends the event streams when the server shuts down.
	streams streamStop
}

// New returns the API server with its routes and middleware.
func New(cfg Config) *Server {
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = 1 << 20
	}
	if cfg.PollWait <= 0 {
		cfg.PollWait = 3 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	s := &Server{
		svc:          cfg.Service,
		log:          cfg.Logger,
		publicOrigin: cfg.PublicOrigin,
		maxBody:      cfg.MaxBodyBytes,
		pollWait:     cfg.PollWait,
		limits:       cfg.RateLimits,
		pages:        cfg.PageLimits,
		idem:         cfg.Idempotency,
		preflight:    preflightCache{ttl: 5 * time.Second},
		readiness:    cfg.Readiness,
		meter:        cfg.Meter,
		pageRoutes:   cfg.PageRoutes,

		beforeAnswerStored: cfg.BeforeIdempotentAnswerStored,
	}
	if s.meter == nil {
		s.meter = noMeter{}
	}
	s.router = s.routes()
	s.handler = s.behind(ScopeAPI, s.router)
	return s
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.handler.ServeHTTP(w, r)
}

func (s *Server) routes() *mux.Router {
	r := mux.NewRouter()
	r.NotFoundHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, payment.Errorf(payment.CodeNotFound, "no such path"))
	})
	r.MethodNotAllowedHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, payment.Errorf(payment.CodeNotAllowed, "method not allowed on this path"))
	})

	// GET of a charge first: every checkout polls it, and gorilla/mux tries
	// the routes in order, one regular expression each, which for the
	// sixteen routes once in front of it cost more than the rest of the
	// routing. No other route matches their paths (TestRoutesShadowNothing),
	// so their place decides nothing else.
	r.HandleFunc("/stores/{storeId}/charges/{id}", s.authed(s.getCharge)).Methods(http.MethodGet)
	r.HandleFunc("/charges/{id}", s.authed(s.getCharge)).Methods(http.MethodGet)
	r.HandleFunc("/heartbeat", s.heartbeat).Methods(http.MethodGet, http.MethodHead)
	r.HandleFunc("/ready", s.ready).Methods(http.MethodGet, http.MethodHead)
	r.HandleFunc("/me", s.authed(s.getMe)).Methods(http.MethodGet)
	r.HandleFunc("/me/{id}", s.authed(s.getMeByID)).Methods(http.MethodGet)
	r.HandleFunc("/stores", s.authed(s.listStores)).Methods(http.MethodGet)
	r.HandleFunc("/stores/{storeId}", s.authed(s.getStore)).Methods(http.MethodGet)
	r.HandleFunc("/checkout_info", s.authed(s.getCheckoutInfo)).Methods(http.MethodGet)
	r.HandleFunc("/stores/{storeId}/create_customer_id", s.authed(s.createCustomerID)).Methods(http.MethodPost)
	r.HandleFunc("/password_resets", s.requestPasswordReset).Methods(http.MethodPost)
	r.HandleFunc("/openapi.json", s.openAPI).Methods(http.MethodGet, http.MethodHead)

	s.paymentRoutes(r)
	s.subscriptionRoutes(r)
	s.approvalRoutes(r)
	s.slipRoutes(r)
	s.webhookRoutes(r)

	r.HandleFunc("/app_jwts", s.authed(s.listAppJWTs)).Methods(http.MethodGet)
	r.HandleFunc("/app_jwts", s.authed(s.createAppJWT)).Methods(http.MethodPost)
	r.HandleFunc("/app_jwts/{jwtId}", s.authed(s.deleteAppJWT)).Methods(http.MethodDelete)
	r.HandleFunc("/stores/{storeId}/app_jwts", s.authed(s.listAppJWTs)).Methods(http.MethodGet)
	r.HandleFunc("/stores/{storeId}/app_jwts", s.authed(s.createAppJWT)).Methods(http.MethodPost)
	r.HandleFunc("/stores/{storeId}/app_jwts/{jwtId}", s.authed(s.deleteAppJWT)).Methods(http.MethodDelete)
	tellRoutes(r)
	return r
}

// tellRoutes has every route tell the request's state its template, which
// the metrics count it under; a path no route matches stays
// RouteUnmatched. Each route's handler is wrapped once, here, rather than
// by a router middleware, which would cost an allocation a request.
func tellRoutes(r *mux.Router) {
	_ = r.Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		tpl, err := route.GetPathTemplate()
		next := route.GetHandler()
		if err != nil || next == nil {
			return nil
		}
		route.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if st := stateOf(r); st != nil {
				st.route = tpl
			}
			next.ServeHTTP(w, r)
		}))
		return nil
	})
}

func (s *Server) heartbeat(w http.ResponseWriter, r *http.Request) {
	s.writeJSON(w, r, http.StatusOK, map[string]string{"status": "ok"})
}

// preflightCache keeps the set of origins that some active token allows,
// so that CORS preflights (which carry no credentials) cost a map lookup.
type preflightCache struct {
	ttl     time.Duration
	mu      sync.Mutex
	domains []string
	loaded  time.Time
}
