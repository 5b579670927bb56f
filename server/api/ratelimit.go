package api

import (
	"errors"
	"log/slog"
	"math"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/forwarded"
	"github.com/kessai/kessai/server/limit"
	"github.com/kessai/kessai/server/payment"
)

// The rate-limit headers (README, "Rate limits and other limits").
const (
	headerRemaining          = "X-Remaining-Requests"
	headerPerMinute          = "X-Requests-Per-Minute"
	headerRemainingRoute     = "X-Remaining-Requests-Route"
	headerPerMinuteRoute     = "X-Requests-Per-Minute-Route"
	headerRemainingExact     = "X-Remaining-Requests-Exact"
	headerPerMinuteExact     = "X-Requests-Per-Minute-Exact"
	rateLimitBucketSeparator = "|"
)

// RateLimits configures the API's rate limiting.
type RateLimits struct {
	// Limiter keeps the buckets; nil turns rate limiting off.
	Limiter limit.Limiter
	Rules   limit.Rules
	// TrustedProxies are the peers whose X-Forwarded-For is believed; with
	// none, the client is the TCP peer.
	TrustedProxies []netip.Prefix
}

// isChargeClass reports whether a request is one of the three operations of
// the charge class: POST /tokens, /charges, /subscriptions.
func isChargeClass(r *http.Request) bool {
	if r.Method != http.MethodPost {
		return false
	}
	switch r.URL.Path {
	case "/tokens", "/charges", "/subscriptions":
		return true
	}
	return false
}

// appendSubject appends whose budget a request spends (README, "Who is
// counted"): a secret-bearing token's store or merchant; a browser token's
// store and the client's IP; anyone else's IP. Test and live never share.
//
//	store:<id>/mode:<mode>             a store token with its secret
//	merchant:<id>/mode:<mode>          a merchant token with its secret
//	store:<id>/ip:<ip>/mode:<mode>     a browser token
//	ip:<ip>                            anyone else
func (s *Server) appendSubject(b []byte, r *http.Request) []byte {
	ip := s.clientIP(r)
	c := authOf(r).caller
	if c == nil {
		return append(append(b, "ip:"...), ip...)
	}
	tok := c.Token()
	if tok.IsMerchantToken() {
		b = appendUUID(append(b, "merchant:"...), tok.MerchantID)
	} else {
		b = appendUUID(append(b, "store:"...), tok.StoreID)
	}
	if !c.WithSecret() {
		b = append(append(b, "/ip:"...), ip...)
	}
	return append(append(b, "/mode:"...), tok.Mode...)
}

// appendUUID appends id as uuid.UUID.String writes it, without allocating.
func appendUUID(b []byte, id uuid.UUID) []byte {
	const hexDigits = "0123456789abcdef"
	for i, x := range id {
		switch i {
		case 4, 6, 8, 10:
			b = append(b, '-')
		}
		b = append(b, hexDigits[x>>4], hexDigits[x&0x0f])
	}
	return b
}

func (s *Server) clientIP(r *http.Request) string {
	return ClientIP(r, s.limits.TrustedProxies)
}

// TrustedProxy reports whether a is in one of the trusted ranges, whatever
// its zone (fe80::1%eth0), and an IPv4 address whether either is written
// as IPv4 or IPv4-mapped IPv6.
func TrustedProxy(a netip.Addr, trustedProxies []netip.Prefix) bool {
	a = a.WithZone("").Unmap()
	for _, p := range trustedProxies {
		if p.Addr().Is4In6() && p.Bits() >= 96 {
			p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
		}
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// UnknownClient is ClientIP's answer for a request a trusted proxy
// forwarded without naming its client in a way that can be read: an
// X-Forwarded-For with an entry that is no address where the client should
// be ("garbage", "unknown", empty), or no X-Forwarded-For but another
// forwarding header (Forwarded, X-Real-Ip, Via, …). It is never the
// proxy's address, which would give such a request the proxy's own
// standing: /metrics, and the budget of everyone the proxy forwards for.
// All unknown clients share one rate-limit subject (ip:unknown), so that
// writing other garbage gets no fresh budget.
const UnknownClient = "unknown"

// ClientIP is the TCP peer, or, when the peer is a trusted proxy, the
// client ForwardedClient reads from what it forwarded, or UnknownClient.
// A trusted range holds an address whatever its zone (fe80::1%eth0), and
// an IPv4 address whether either is written as IPv4 or IPv4-mapped IPv6.
func ClientIP(r *http.Request, trustedProxies []netip.Prefix) string {
	peer := remoteIP(r)
	if len(trustedProxies) == 0 {
		return peer
	}
	addr, err := netip.ParseAddr(peer)
	if err != nil || !TrustedProxy(addr, trustedProxies) {
		return peer
	}
	client, ok := ForwardedClient(addr, r.Header, trustedProxies)
	if !ok {
		return UnknownClient
	}
	return client.String()
}

// ForwardedClient is the client of a request the trusted proxy peer
// passed on: the rightmost address of X-Forwarded-For (all its lines, in
// order) that is not itself a trusted proxy — the entries left of it are
// whatever the client chose to send. Without X-Forwarded-For the request
// is the proxy's own (peer), unless it carries another forwarding header.
// ok is false for an unknown client: an entry that is no address is met
// before the client is, or the client is named only in a header not read.
// Every hop being a trusted proxy gives peer.
func ForwardedClient(peer netip.Addr, h http.Header, trustedProxies []netip.Prefix) (client netip.Addr, ok bool) {
	lines := h.Values("X-Forwarded-For")
	if len(lines) == 0 {
		if forwarded.Proxied(h) {
			return netip.Addr{}, false
		}
		return peer, true
	}
	for i := len(lines) - 1; i >= 0; i-- {
		hops := lines[i]
		for {
			comma := strings.LastIndexByte(hops, ',')
			hop, err := parseHop(strings.TrimSpace(hops[comma+1:]))
			if err != nil {
				return netip.Addr{}, false
			}
			if !TrustedProxy(hop, trustedProxies) {
				return hop.Unmap(), true
			}
			if comma < 0 {
				break
			}
			hops = hops[:comma]
		}
	}
	return peer, true
}

// routeKey is the route template with every variable written {id}
// (`/stores/{id}/charges/{id}/refunds`), method ignored. Every route
// variable of this API is an id (a UUID, which always holds a digit) and
// no literal segment holds a digit, so collapsing the id-like segments of
// the path gives exactly the matched route's template — the spec's rule
// for unmatched paths and for matched ones coincide (TestRouteKeyMatchesTemplates
// walks the router to keep it so). That saves matching the request against
// every route a second time, which cost 3–15 µs a request.
func (s *Server) routeKey(r *http.Request) string {
	return collapsePath(r.URL.Path)
}

// parseHop reads one X-Forwarded-For entry: an address, or an address
// with a port as some proxies write it.
func parseHop(s string) (netip.Addr, error) {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr(), nil
	}
	return netip.ParseAddr(s)
}

func collapseTemplate(tpl string) string {
	var b strings.Builder
	for {
		open := strings.IndexByte(tpl, '{')
		if open < 0 {
			b.WriteString(tpl)
			return b.String()
		}
		end := strings.IndexByte(tpl[open:], '}')
		if end < 0 {
			b.WriteString(tpl)
			return b.String()
		}
		b.WriteString(tpl[:open])
		b.WriteString("{id}")
		tpl = tpl[open+end+1:]
	}
}

// collapsePath replaces every segment that looks like an id — anything
// with a digit in it, which every UUID has — by {id}.
func collapsePath(path string) string {
	return string(appendCollapsedPath(nil, path))
}

// appendCollapsedPath appends collapsePath(path).
func appendCollapsedPath(b []byte, path string) []byte {
	for {
		seg, rest, more := strings.Cut(path, "/")
		if strings.ContainsAny(seg, "0123456789") {
			b = append(b, "{id}"...)
		} else {
			b = append(b, seg...)
		}
		if !more {
			return b
		}
		b = append(b, '/')
		path = rest
	}
}

// exactKey is the complete path with its raw query string, method ignored.
func exactKey(r *http.Request) string {
	return string(appendExactKey(nil, r))
}

// appendExactKey appends exactKey(r).
func appendExactKey(b []byte, r *http.Request) []byte {
	b = append(b, r.URL.EscapedPath()...)
	if r.URL.RawQuery == "" {
		return b
	}
	return append(append(b, '?'), r.URL.RawQuery...)
}

// bucketKeys are the keys of a request's buckets: the subject's alone for
// the charge class; subject|route and subject|exact for the standard
// class. They are cut from one string, built in one allocation.
func (s *Server) bucketKeys(r *http.Request, charge bool) (first, second string) {
	var buf [256]byte
	b := s.appendSubject(buf[:0], r)
	if charge {
		return string(b), ""
	}
	subject := len(b)
	b = appendCollapsedPath(append(b, rateLimitBucketSeparator...), r.URL.Path)
	route := len(b)
	b = append(b, b[:subject]...)
	b = appendExactKey(append(b, rateLimitBucketSeparator...), r)
	keys := string(b)
	return keys[:route], keys[route:]
}

// withRateLimits admits or refuses every API request before any handler
// runs, and writes the class's headers on every answer, errors included.
func (s *Server) withRateLimits(next http.Handler) http.Handler {
	if s.limits.Limiter == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var buckets [2]limit.Bucket
		var list []limit.Bucket
		charge := isChargeClass(r)
		first, second := s.bucketKeys(r, charge)
		if charge {
			buckets[0] = limit.Bucket{Kind: limit.KindCharge, Key: first, Rule: s.limits.Rules.Charge}
			list = buckets[:1]
		} else {
			buckets[0] = limit.Bucket{Kind: limit.KindRoute, Key: first, Rule: s.limits.Rules.Route}
			buckets[1] = limit.Bucket{Kind: limit.KindExact, Key: second, Rule: s.limits.Rules.Exact}
			list = buckets[:2]
		}
		class := ClassStandard
		if charge {
			class = ClassCharge
		}
		if st := stateOf(r); st != nil {
			st.class = class
		}
		res, err := s.limits.Limiter.Admit(r.Context(), list)
		writeRateHeaders(w.Header(), charge, &res, s.limits.Rules)
		switch {
		case err != nil && !clientGone(r, err):
			s.meter.RateLimit(class, DecisionUnavailable)
		case err == nil && !res.Admitted:
			s.meter.RateLimit(class, DecisionRefused)
		case err == nil:
			s.meter.RateLimit(class, DecisionAdmitted)
		}
		switch {
		case errors.Is(err, limit.ErrFull):
			// Every bucket is live and the table is at its cap: refuse
			// rather than admit a request nobody counts.
			w.Header().Set("Retry-After", "1")
			s.writeError(w, r, payment.Errorf(payment.CodeServiceUnavailable, "rate limiter at capacity"))
			return
		case err != nil && clientGone(r, err):
			s.writeError(w, r, err)
			return
		case err != nil:
			// The limiter could not decide (a shared store unreachable or
			// too slow): refuse rather than admit a request nobody counts.
			s.log.LogAttrs(r.Context(), slog.LevelError, "rate limiter unavailable",
				slog.String("request_id", requestID(r.Context())), slog.String("error", err.Error()))
			w.Header().Set("Retry-After", "1")
			s.writeError(w, r, payment.Errorf(payment.CodeServiceUnavailable, "rate limiter unavailable"))
			return
		case !res.Admitted:
			w.Header().Set("Retry-After", retryAfterSeconds(res.RetryAfter))
			if r.Header.Get(idempotencyKeyHeader) != "" {
				// Refused before the key was looked at: a retry runs.
				w.Header().Set(idempotencyStatusHeader, idempotencyNotStored)
			}
			s.writeError(w, r, payment.Errorf(payment.CodeTooManyRequests, "rate limit reached"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// retryAfterSeconds rounds up to whole seconds, at least 1.
func retryAfterSeconds(d time.Duration) string {
	secs := int64(math.Ceil(d.Seconds()))
	if secs < 1 {
		secs = 1
	}
	return strconv.FormatInt(secs, 10)
}

// writeRateHeaders writes the charge class's two headers or the standard
// class's four, never both. The values go in as Header.Set would put them,
// cut from one string and one slice, so that the headers cost two
// allocations whatever the numbers.
func writeRateHeaders(h http.Header, charge bool, res *limit.Result, rules limit.Rules) {
	remaining := func(b []byte, k limit.Kind) []byte {
		if br, ok := res.Find(k); ok {
			return strconv.AppendInt(b, int64(br.Remaining), 10)
		}
		return append(b, '0')
	}
	var buf [80]byte
	var ends [4]int
	b := buf[:0]
	names := [4]string{headerRemaining, headerPerMinute}
	n := 2
	if charge {
		b = remaining(b, limit.KindCharge)
		ends[0] = len(b)
		b = strconv.AppendInt(b, int64(rules.Charge.PerMinute), 10)
		ends[1] = len(b)
	} else {
		names, n = [4]string{headerRemainingRoute, headerPerMinuteRoute, headerRemainingExact, headerPerMinuteExact}, 4
		b = remaining(b, limit.KindRoute)
		ends[0] = len(b)
		b = strconv.AppendInt(b, int64(rules.Route.PerMinute), 10)
		ends[1] = len(b)
		b = remaining(b, limit.KindExact)
		ends[2] = len(b)
		b = strconv.AppendInt(b, int64(rules.Exact.PerMinute), 10)
		ends[3] = len(b)
	}
	text := string(b)
	values := make([]string, n)
	start := 0
	for i := range n {
		values[i] = text[start:ends[i]]
		start = ends[i]
		h[names[i]] = values[i : i+1 : i+1]
	}
}
