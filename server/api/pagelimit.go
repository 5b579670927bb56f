package api

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/kessai/kessai/server/limit"
)

// PageLimits configures the per-IP limit on the hosted pages and the demo
// storefront (not their static files: staticAsset). They are not API requests and carry none of
// the API's rate-limit headers; the client IP is found as for the API (its
// TrustedProxies).
type PageLimits struct {
	// Limiter keeps the buckets; nil turns the limit off.
	Limiter limit.Limiter
	// PerMinute is each client IP's budget.
	PerMinute int
}

// staticAsset reports whether a path is one of the gateway's static files
// (the widget's scripts, styles, images, WebAssembly, and the loader at
// UnivaPay's /client/ path). They are files from memory that touch no
// database, and one page of a shop fetches a score of them at once, for
// every shopper behind one office's or one carrier's address: counting
// them would refuse real shoppers' widgets (a page with its assets spent a
// burst of 60 in two loads) and protect nothing.
func staticAsset(path string) bool {
	return strings.HasPrefix(path, "/static/") || strings.HasPrefix(path, "/client/")
}

// pageRule is the bucket of one client IP. A page load fetches a handful of
// assets at once: it allows a burst of a tenth of the minute's budget (at
// least 20).
func pageRule(perMinute int) limit.Rule {
	return limit.Rule{Burst: max(20, perMinute/10), BurstRefillPerMinute: perMinute, PerMinute: perMinute}
}

// withPageLimit also says, for the metrics, which pages a request is of
// and whether it is limited.
func (s *Server) withPageLimit(next http.Handler) http.Handler {
	rule := pageRule(s.pages.PerMinute)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st := stateOf(r)
		if st != nil {
			st.route, st.class = s.pageRoute(r.URL.Path), ClassNone
		}
		if s.pages.Limiter == nil || staticAsset(r.URL.Path) {
			next.ServeHTTP(w, r)
			return
		}
		if st != nil {
			st.class = ClassPage
		}
		key := "page|ip:" + s.clientIP(r)
		res, err := s.pages.Limiter.Admit(r.Context(), []limit.Bucket{{Kind: limit.KindExact, Key: key, Rule: rule}})
		switch {
		case err != nil:
			s.meter.RateLimit(ClassPage, DecisionUnavailable)
		case !res.Admitted:
			s.meter.RateLimit(ClassPage, DecisionRefused)
		default:
			s.meter.RateLimit(ClassPage, DecisionAdmitted)
		}
		if err != nil || !res.Admitted {
			secs := int64(res.RetryAfter/time.Second) + 1
			w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
			http.Error(w, "Too many requests; please wait a moment.", http.StatusTooManyRequests)
			return
		}
		next.ServeHTTP(w, r)
	})
}
