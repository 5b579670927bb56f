package main

import (
	"context"
	"net/http"
	"net/netip"
	"strconv"
	"time"

	"github.com/kessai/kessai/server/api"
	"github.com/kessai/kessai/server/limit"
)

// pageGuard is the per-IP limit on hosted pages, static files and the demo
// storefront: they are not API requests and carry none of the API's
// rate-limit headers, but must not be a way around its limits.
type pageGuard struct {
	limiter *limit.Memory
	rule    limit.Rule
	trusted []netip.Prefix
}

func newPageGuard(perMinute int, trusted []netip.Prefix) *pageGuard {
	return &pageGuard{
		limiter: limit.NewMemory(limit.MemoryConfig{}),
		// A page load fetches a handful of assets at once: allow a burst
		// of a tenth of the minute's budget (at least 20).
		rule:    limit.Rule{Burst: max(20, perMinute/10), BurstRefillPerMinute: perMinute, PerMinute: perMinute},
		trusted: trusted,
	}
}

func (g *pageGuard) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ip := api.ClientIP(r, g.trusted)
		res, err := g.limiter.Admit(r.Context(), []limit.Bucket{{Kind: limit.KindExact, Key: "page|ip:" + ip, Rule: g.rule}})
		if err != nil || !res.Admitted {
			secs := int64(res.RetryAfter/time.Second) + 1
			w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
			http.Error(w, "Too many requests; please wait a moment.", http.StatusTooManyRequests)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// sweep drops refilled buckets until ctx ends.
func (g *pageGuard) sweep(ctx context.Context) { g.limiter.SweepEvery(ctx, time.Minute) }
