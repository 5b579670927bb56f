package api

import (
	"net/http"
	"strings"
	"time"

	"github.com/gorilla/mux"
)

// Meter is told of every request the gateway answered and every decision
// of its rate limits, for the operators' metrics (server/prometheus).
//
// Every value it is told comes from a fixed set, so that a metric label
// made of it stays bounded whatever clients send: route is a router
// template, a page prefix (Config.PageRoutes), RoutePages or
// RouteUnmatched, never a raw path; method is one of the methods the
// gateway knows or MethodOther; class is a Class…; decision a Decision….
type Meter interface {
	Request(route, method, class string, status int, took time.Duration)
	RateLimit(class, decision string)
}

// What a request is counted under when no route of the API matched it
// (any path a client makes up), and when it is a page outside every
// Config.PageRoutes prefix.
const (
	RouteUnmatched = "unmatched"
	RoutePages     = "pages"
)

// MethodOther stands for every method outside the standard ones.
const MethodOther = "OTHER"

// The limit classes a request is counted under: the API's two (README,
// "Rate limits and other limits"), the pages' per-address limit, and none
// (the limits are off, or the request is a static file). ClassConsole is
// the console's throttle of sign-ins, password changes and reset requests,
// whose decisions are told apart from its pages'.
const (
	ClassCharge   = "charge"
	ClassStandard = "standard"
	ClassPage     = "page"
	ClassNone     = "none"
	ClassConsole  = "console"
)

// The decisions of a rate limit: admitted, refused (429), or not made
// because the limiter could not count (503: its table full, or its shared
// store away).
const (
	DecisionAdmitted    = "admitted"
	DecisionRefused     = "refused"
	DecisionUnavailable = "unavailable"
)

// meterMethod is the method as Meter is told it.
func meterMethod(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut,
		http.MethodPatch, http.MethodDelete, http.MethodOptions:
		return m
	}
	return MethodOther
}

// routeTemplate is the template of the API route r matches, "" for none.
// The router tells the request's state as it dispatches; this is for the
// requests answered before it (refused by the rate limits), which are
// then counted under their route like the rest. Matching again costs a
// few microseconds, paid only by those and by paths no route matches.
func (s *Server) routeTemplate(r *http.Request) string {
	var m mux.RouteMatch
	if s.router == nil || !s.router.Match(r, &m) || m.MatchErr != nil || m.Route == nil {
		return ""
	}
	tpl, _ := m.Route.GetPathTemplate()
	return tpl
}

// pageRoute is the prefix of the pages a path is counted under.
func (s *Server) pageRoute(path string) string {
	best := RoutePages
	for _, p := range s.pageRoutes {
		if strings.HasPrefix(path, p) && (best == RoutePages || len(p) > len(best)) {
			best = p
		}
	}
	return best
}

type noMeter struct{}

func (noMeter) Request(string, string, string, int, time.Duration) {}
func (noMeter) RateLimit(string, string)                           {}
