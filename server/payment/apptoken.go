package payment

import (
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// AppToken is an application token (UnivaPay's wire format): a signed JWT that
// names its merchant (and store), used alone from a browser on one of its
// domains, or with its secret from a server. The secret is kept only as a
// keyed hash.
type AppToken struct {
	ID         uuid.UUID // the JWT's jti
	MerchantID uuid.UUID
	StoreID    uuid.UUID // uuid.Nil for a merchant token
	CreatorID  uuid.UUID
	Mode       Mode
	Domains    []string
	SecretHash []byte
	JWT        string
	CreatedOn  time.Time
	RevokedOn  *time.Time
}

// IsMerchantToken reports whether the token acts for every store of its
// merchant rather than for one store.
func (t *AppToken) IsMerchantToken() bool { return t.StoreID == uuid.Nil }

// Active reports whether the token has not been revoked.
func (t *AppToken) Active() bool { return t.RevokedOn == nil }

// AppTokenClaims are the claims of an app-token JWT.
type AppTokenClaims struct {
	ID         uuid.UUID
	MerchantID uuid.UUID
	StoreID    uuid.UUID
	CreatorID  uuid.UUID
	Mode       Mode
	Domains    []string
	IssuedAt   time.Time
}

// TokenCodec signs and verifies app-token JWTs. Parse must verify the
// signature and return an error for anything it did not sign itself.
type TokenCodec interface {
	Sign(c AppTokenClaims) (string, error)
	Parse(token string) (AppTokenClaims, error)
}

// AppTokenFilter selects the tokens of a list: the merchant's own tokens
// (StoreID nil) or one store's.
type AppTokenFilter struct {
	MerchantID uuid.UUID
	StoreID    uuid.UUID
}

// NewAppToken asks for a token.
type NewAppToken struct {
	Mode    Mode
	Domains []string
}

// NormalizeDomain turns what a merchant types as a domain ("shop.example",
// "https://shop.example:8443/", "*.example.com") into the host[:port] form
// that is compared with request origins. It reports false for anything that
// is not a host.
func NormalizeDomain(d string) (string, bool) {
	d = strings.TrimSpace(strings.ToLower(d))
	if d == "" {
		return "", false
	}
	if strings.Contains(d, "://") {
		u, err := url.Parse(d)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
			(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || strings.Contains(d, "#") {
			return "", false
		}
		d = u.Host
	}
	// Brackets are IPv6 literals' and the labels below refuse those anyway;
	// without this, "[0]:1" would pass as the host "0".
	if strings.ContainsAny(d, "[]") {
		return "", false
	}
	host := d
	if h, port, err := net.SplitHostPort(d); err == nil {
		n, perr := strconv.Atoi(port)
		if perr != nil || n < 1 || n > 65535 || strings.Trim(port, "0123456789") != "" {
			return "", false
		}
		// "shop.example:0080" is port 80; written so, the domain compares
		// equal to the origin a browser sends.
		host = h
		d = h + ":" + strconv.Itoa(n)
	}
	if strings.HasPrefix(host, "*.") {
		host = host[2:]
		// "*.com" would allow a whole top-level domain.
		if !strings.Contains(host, ".") {
			return "", false
		}
	}
	if host == "" || len(d) > 253 {
		return "", false
	}
	for _, label := range strings.Split(host, ".") {
		if label == "" || len(label) > 63 {
			return "", false
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
				return "", false
			}
		}
	}
	return d, true
}

// RedirectAllowed reports whether raw is a URL the gateway may send a
// shopper to for a browser with app token domains: an absolute http(s) URL
// a browser can follow (ParseWebURL, at most maxLen bytes) whose origin is
// on one of the domains (OriginAllowed). It returns the URL normalised.
// Anything else would make the gateway an open redirector for whoever
// reads a page's public app token. The link form checks its redirect
// parameters with it, the API a browser's redirect fields
// (Caller.redirectAllowed).
func RedirectAllowed(raw string, maxLen int, domains []string) (string, bool) {
	u, ok := ParseWebURL(raw, maxLen)
	if !ok || !OriginAllowed(domains, u.Scheme+"://"+u.Host) {
		return "", false
	}
	return u.String(), true
}

// OriginAllowed reports whether a browser origin ("https://shop.example")
// belongs to one of the domains. A domain without a port allows any port of
// that host; "*.example.com" allows every subdomain of example.com.
func OriginAllowed(domains []string, origin string) bool {
	// An origin is scheme://host[:port] and nothing else: what browsers
	// send. Anything with user info, a path, a query or a fragment, a port
	// out of range or an empty label is not one and allows nothing.
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Opaque != "" || u.User != nil ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.ForceQuery || strings.Contains(origin, "#") {
		return false
	}
	host, ok := NormalizeDomain(u.Host)
	if !ok || strings.HasPrefix(host, "*") {
		return false
	}
	hostname := host
	if h, _, err := net.SplitHostPort(host); err == nil {
		hostname = h
	}
	for _, d := range domains {
		switch {
		case d == host || d == hostname:
			return true
		case strings.HasPrefix(d, "*."):
			suffix := d[1:] // ".example.com"
			if strings.HasSuffix(hostname, suffix) || strings.HasSuffix(host, suffix) {
				return true
			}
		}
	}
	return false
}

// IssuedAppToken is a freshly created token with its secret, which is shown
// this once and never again.
type IssuedAppToken struct {
	*AppToken
	Secret string
}
