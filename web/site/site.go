// Package site is what the gateway's pages share because they are one
// site on one origin, whatever their audience (web/checkout for shoppers
// paying a merchant, web/sandboxpages for the sandbox acquirer's approval
// pages, web/console for the merchant): the static files, read once per
// process, and the versioned links every template writes to them; the key
// their cookies and form tokens are derived from; the rule for who may
// frame a page (the store's domains); amounts in words; and the router, on
// gorilla/mux as the API is, answering what no route takes as the pages
// always have.
//
// It holds no page of its own and asks nothing of the payment service:
// each audience's package declares what it needs of the service itself.
package site

import (
	"crypto/rand"
	"errors"
	"log/slog"
	"net/url"
	"strings"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/web/message"
)

// SessionKey is the configured key of the pages' cookies and form tokens,
// or, without one, a random key: cookies then last as long as the process.
// Each package derives keys of its own from it, so that a token of one
// means nothing to another.
func SessionKey(key []byte, log *slog.Logger) ([]byte, error) {
	if len(key) >= 32 {
		return key, nil
	}
	if len(key) > 0 {
		return nil, errors.New("site: the session key must be at least 32 bytes")
	}
	key = make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	log.Warn("hosted pages: no session key configured; using a random one")
	return key, nil
}

// Origin returns scheme://host[:port] of a URL, lower-cased, or "".
func Origin(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return ""
	}
	return strings.ToLower(u.Scheme + "://" + u.Host)
}

// Amount writes an amount for people in its currency's format.
func Amount(amount int64, currency string) string {
	c, ok := payment.LookupCurrency(currency)
	if !ok {
		c = payment.Currency{Code: currency}
	}
	return message.Amount(amount, c.Code, c.MinorUnits)
}

// FrameAncestors is the CSP frame-ancestors value for a token's domains:
// each domain on http and https, any port when the domain names none (as
// payment.OriginAllowed does), plus the gateway itself. The widget frame
// and the sandbox's approval pages, which a merchant's page may frame,
// both answer with it.
func FrameAncestors(domains []string) string {
	srcs := make([]string, 0, 2*len(domains)+1)
	for _, d := range domains {
		d = strings.ToLower(strings.TrimSpace(d))
		if d == "" || strings.Trim(d, "abcdefghijklmnopqrstuvwxyz0123456789.-:*") != "" ||
			strings.Contains(d[1:], "*") || (strings.HasPrefix(d, "*") && !strings.HasPrefix(d, "*.")) {
			continue // not a host[:port]; NormalizeDomain never lets one through
		}
		if !strings.Contains(d, ":") {
			d += ":*"
		}
		srcs = append(srcs, "http://"+d, "https://"+d)
	}
	srcs = append(srcs, "'self'")
	return strings.Join(srcs, " ")
}
