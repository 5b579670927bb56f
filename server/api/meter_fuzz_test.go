package api

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/kessai/kessai/server/kessaitest/servicetest"
	"github.com/kessai/kessai/server/limit"
)

// labelMeter keeps every value a Meter was told, as a label set would.
type labelMeter struct {
	mu                        sync.Mutex
	routes, methods, classes  map[string]bool
	limitClasses, decisions   map[string]bool
	requests, rateLimitEvents int
}

func newLabelMeter() *labelMeter {
	return &labelMeter{routes: map[string]bool{}, methods: map[string]bool{}, classes: map[string]bool{},
		limitClasses: map[string]bool{}, decisions: map[string]bool{}}
}

func (m *labelMeter) reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.routes, m.methods, m.classes = map[string]bool{}, map[string]bool{}, map[string]bool{}
	m.limitClasses, m.decisions = map[string]bool{}, map[string]bool{}
	m.requests, m.rateLimitEvents = 0, 0
}

func (m *labelMeter) Request(route, method, class string, status int, took time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.routes[route], m.methods[method], m.classes[class] = true, true, true
	m.requests++
}

func (m *labelMeter) RateLimit(class, decision string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.limitClasses[class], m.decisions[decision] = true, true
	m.rateLimitEvents++
}

// FuzzMeterLabels sends any method and path through the API and the pages
// and checks that what the Meter is told stays in the fixed sets: a
// route template of the router, a page prefix, or the two catch-alls;
// a known method or OTHER. A client making up paths never adds a label
// value, so never a series.
func FuzzMeterLabels(f *testing.F) {
	st := servicetest.New(f, servicetest.Options{})
	demo := st.SeedDemo(f, "shop.example")
	meter := newLabelMeter()
	pageRoutes := []string{"/static/", "/widget/", "/console", "/console/"}
	srv := New(Config{Service: st.Service, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		RateLimits: RateLimits{Limiter: limit.NewMemory(limit.MemoryConfig{}), Rules: limit.Rules{
			Charge: limit.Rule{Burst: 1e6, BurstRefillPerMinute: 1e6, PerMinute: 1e6},
			Route:  limit.Rule{Burst: 1e6, BurstRefillPerMinute: 1e6, PerMinute: 1e6},
			Exact:  limit.Rule{Burst: 1e6, BurstRefillPerMinute: 1e6, PerMinute: 1e6},
		}},
		PageLimits: PageLimits{Limiter: limit.NewMemory(limit.MemoryConfig{}), PerMinute: 1e6},
		Meter:      meter, PageRoutes: pageRoutes,
	})
	pages := srv.Pages(http.NotFoundHandler())

	routes := map[string]bool{RouteUnmatched: true, RoutePages: true}
	for _, p := range pageRoutes {
		routes[p] = true
	}
	for _, c := range mustRouteCases(f, srv, 50) {
		routes[c.tpl] = true
	}
	methods := map[string]bool{MethodOther: true}
	for _, m := range []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"} {
		methods[m] = true
	}
	classes := map[string]bool{ClassCharge: true, ClassStandard: true, ClassPage: true, ClassNone: true}
	decisions := map[string]bool{DecisionAdmitted: true, DecisionRefused: true, DecisionUnavailable: true}

	for _, seed := range []struct{ method, path string }{
		{"GET", "/charges/0196c5a0-2a4f-7c1e-9d3b-5f6a7b8c9d0e"},
		{"POST", "/charges"},
		{"GET", "/stores/" + demo.StoreID.String() + "/charges/x1/refunds"},
		{"BREW", "/4000020000000000"},
		{"get", "/charges"},
		{"GET", "/console/charges/0196c5a0-2a4f-7c1e-9d3b-5f6a7b8c9d0e"},
		{"GET", "/static/../../etc/passwd"},
		{"DELETE", "/stores/{storeId}"},
		{"GET", "//charges"},
	} {
		f.Add(seed.method, seed.path, true)
		f.Add(seed.method, seed.path, false)
	}
	f.Fuzz(func(t *testing.T, method, path string, authed bool) {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.Method, req.URL.Path, req.URL.RawPath = method, "/"+path, ""
		if authed {
			req.Header.Set("Authorization", demo.Auth)
		}
		for _, h := range []http.Handler{srv, pages} {
			h.ServeHTTP(httptest.NewRecorder(), req.Clone(req.Context()))
		}
		meter.mu.Lock()
		defer meter.mu.Unlock()
		for _, c := range []struct {
			what    string
			got     map[string]bool
			allowed map[string]bool
		}{
			{"route", meter.routes, routes},
			{"method", meter.methods, methods},
			{"class", meter.classes, classes},
			{"rate-limit class", meter.limitClasses, classes},
			{"decision", meter.decisions, decisions},
		} {
			for v := range c.got {
				if !c.allowed[v] {
					t.Fatalf("%s %q (method %q, path %q) became a %s label", c.what, v, method, path, c.what)
				}
			}
		}
	})
}

// TestMeterTellsEveryRequest: every request through the API or the pages
// is told once, and every rate-limit decision once.
func TestMeterTellsEveryRequest(t *testing.T) {
	meter := newLabelMeter()
	srv := New(Config{Logger: slog.New(slog.DiscardHandler), Meter: meter,
		RateLimits: RateLimits{Limiter: limit.NewMemory(limit.MemoryConfig{}), Rules: limit.DefaultRules()},
		PageRoutes: []string{"/widget/"}})
	pages := srv.Pages(http.NotFoundHandler())
	for _, c := range []struct {
		page           bool
		method, target string
		route, class   string
	}{
		{false, "GET", "/heartbeat", "/heartbeat", ClassStandard},
		{false, "GET", "/charges/0196c5a0-2a4f-7c1e-9d3b-5f6a7b8c9d0e", "/charges/{id}", ClassStandard},
		{false, "POST", "/charges", "/charges", ClassCharge},
		{false, "GET", "/no/such/path1", RouteUnmatched, ClassStandard},
		{false, "PUT", "/heartbeat", RouteUnmatched, ClassStandard},
		{true, "GET", "/widget/frame", "/widget/", ClassNone},
		{true, "GET", "/elsewhere", RoutePages, ClassNone},
	} {
		t.Run(c.method+" "+c.target, func(t *testing.T) {
			meter.reset()
			var h http.Handler = srv
			if c.page {
				h = pages
			}
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(c.method, c.target, nil))
			if meter.requests != 1 {
				t.Fatalf("told of %d requests, want 1", meter.requests)
			}
			if !meter.routes[c.route] || !meter.classes[c.class] {
				t.Errorf("told route %v class %v, want %s %s", meter.routes, meter.classes, c.route, c.class)
			}
			wantDecisions := 1
			if c.page {
				wantDecisions = 0 // no page limiter configured
			}
			if meter.rateLimitEvents != wantDecisions {
				t.Errorf("told of %d rate-limit decisions, want %d", meter.rateLimitEvents, wantDecisions)
			}
		})
	}
}

// TestRoutesTellTheirTemplate: the router itself tells the request's state
// which route it took, so that the metrics need not match the request a
// second time (routeTemplate is only for requests the router never saw).
func TestRoutesTellTheirTemplate(t *testing.T) {
	s := New(Config{Logger: slog.New(slog.DiscardHandler)})
	for _, c := range mustRouteCases(t, s, 50) {
		st := &requestState{id: "test"}
		req := httptest.NewRequest(c.methods[0], c.path, nil)
		req = req.WithContext(context.WithValue(req.Context(), requestIDKey, st))
		func() {
			// Routes that need a service panic without one, after the
			// template was told.
			defer func() { _ = recover() }()
			s.router.ServeHTTP(httptest.NewRecorder(), req)
		}()
		if st.route != c.tpl {
			t.Errorf("%s %s: the router told %q, want %q", c.methods[0], c.path, st.route, c.tpl)
		}
	}
}
