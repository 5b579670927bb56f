package api

import "net/http"

// Scope says which of the gateway's handlers a middleware layer stands in
// front of.
type Scope uint8

const (
	// ScopeAPI is the API: the routes of the gorilla/mux router.
	ScopeAPI Scope = 1 << iota
	// ScopePages is everything else the gateway serves over HTTP: the
	// hosted pages, the static files and the demo storefront.
	ScopePages
)

// Layer is one named middleware of the gateway.
type Layer struct {
	Name  string
	Scope Scope
	wrap  func(next http.Handler) http.Handler
}

// chain is the gateway's middleware, outermost first: one list for the
// API's router and for the pages, each layer saying which it serves, so
// that the two cannot drift apart in what they share or in its order.
//
//   - request-id, logging and recovery stand in front of everything: every
//     response gets a request id and a log line carrying it, even one that
//     panicked, and every body is capped.
//   - page-limit is the pages' per-IP limit: they carry none of the API's
//     rate-limit headers but must not be a way around its limits.
//   - authentication precedes the rest of the API's layers, so that CORS,
//     the rate limits (whose subject is the caller) and the handlers know
//     who is calling.
//   - rate-limit precedes idempotency: a request the limits refuse never
//     reserves a key or reaches a handler.
func (s *Server) chain() []Layer {
	const both = ScopeAPI | ScopePages
	return []Layer{
		{Name: "request-id", Scope: both, wrap: s.withRequestID},
		{Name: "logging", Scope: both, wrap: s.withLogging},
		{Name: "recovery", Scope: both, wrap: s.withRecovery},
		{Name: "page-limit", Scope: ScopePages, wrap: s.withPageLimit},
		{Name: "authentication", Scope: ScopeAPI, wrap: s.withAuthentication},
		{Name: "cors", Scope: ScopeAPI, wrap: s.withCORS},
		{Name: "rate-limit", Scope: ScopeAPI, wrap: s.withRateLimits},
		{Name: "idempotency", Scope: ScopeAPI, wrap: s.withIdempotency},
	}
}

// behind returns h behind the layers of scope, the first of them outermost.
func (s *Server) behind(scope Scope, h http.Handler) http.Handler {
	layers := s.chain()
	for i := len(layers) - 1; i >= 0; i-- {
		if layers[i].Scope&scope != 0 {
			h = layers[i].wrap(h)
		}
	}
	return h
}

// Layers names the layers in front of scope's handlers, outermost first.
func (s *Server) Layers(scope Scope) []string {
	var names []string
	for _, l := range s.chain() {
		if l.Scope&scope != 0 {
			names = append(names, l.Name)
		}
	}
	return names
}

// Pages returns h (hosted pages, static files, the demo storefront) behind
// the layers the pages share with the API and their own per-IP limit.
func (s *Server) Pages(h http.Handler) http.Handler {
	return s.behind(ScopePages, h)
}
