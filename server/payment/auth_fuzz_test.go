package payment_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/kessai/kessai/server/kessaitest"
	"github.com/kessai/kessai/server/kessaitest/servicetest"
	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/payment/services"
)

// fuzzPublicOrigin is the gateway's own origin in FuzzAuthenticate.
const fuzzPublicOrigin = "https://pay.kessai.test"

// authFixture is a Service over a real SQLite file with three app tokens
// of one store's merchant: a store token for some domains, the merchant's
// token, and a revoked store token.
type authFixture struct {
	svc                      *services.Set
	store, merchant, revoked *payment.IssuedAppToken
}

func newAuthFixture(tb testing.TB) *authFixture {
	tb.Helper()
	ctx := context.Background()
	clk := kessaitest.NewClock(time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	stack := servicetest.New(tb, servicetest.Options{Clock: clk, PublicOrigin: fuzzPublicOrigin})
	db, svc := stack.DB, stack.Service
	now := clk.Now()
	m := &payment.Merchant{ID: payment.NewID(), Name: "Fuzz", Email: "fuzz@kessai.test", Verified: true, CreatedOn: now}
	st := &payment.Store{ID: payment.NewID(), MerchantID: m.ID, Name: "Fuzz store", Settings: payment.DefaultStoreSettings(), CreatedOn: now}
	if err := db.Update(ctx, func(tx payment.Tx) error {
		if err := tx.CreateMerchant(ctx, m); err != nil {
			return err
		}
		return tx.CreateStore(ctx, st)
	}); err != nil {
		tb.Fatal(err)
	}
	fx := &authFixture{svc: svc}
	var err error
	domains := []string{"shop.example", "*.wild.example", "localhost:8081"}
	if fx.store, err = svc.Access.IssueStoreAppToken(ctx, st.ID, payment.NewAppToken{Domains: domains}); err != nil {
		tb.Fatal(err)
	}
	if fx.revoked, err = svc.Access.IssueStoreAppToken(ctx, st.ID, payment.NewAppToken{Domains: domains}); err != nil {
		tb.Fatal(err)
	}
	if fx.merchant, err = svc.Access.IssueMerchantAppToken(ctx, m.ID, payment.NewAppToken{}); err != nil {
		tb.Fatal(err)
	}
	merchant, err := svc.Access.Authenticate(ctx, "Bearer "+fx.merchant.Secret+"."+fx.merchant.JWT, "")
	if err != nil {
		tb.Fatal(err)
	}
	if err := svc.Access.RevokeAppToken(ctx, merchant, st.ID, fx.revoked.ID); err != nil {
		tb.Fatal(err)
	}
	return fx
}

// base64URL is the JWT alphabet; FuzzAuthenticate edits a token's
// characters within it.
const base64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

// editJWT changes the character pos places from the end of s (pos 1 is
// the last): a base64url character becomes the one whose value is XORed
// with x (x = 1 on the last character of an HS256 signature touches only
// its unused low bits), anything else becomes x itself. pos 0 leaves s.
func editJWT(s string, pos uint16, x byte) string {
	if pos == 0 || s == "" {
		return s
	}
	i := len(s) - 1 - (int(pos)-1)%len(s)
	b := []byte(s)
	if v := strings.IndexByte(base64URL, b[i]); v >= 0 {
		b[i] = base64URL[v^int(x&63)]
	} else {
		b[i] = x
	}
	return string(b)
}

// FuzzAuthenticate fuzzes the Authorization header and Origin. In the
// header $SECRET/$JWT stand for the store token, $MSECRET/$MJWT for the
// merchant token and $RSECRET/$RJWT for the revoked one; pos and x edit
// the store token's JWT (editJWT) before it is put in. Properties: no
// panic; a caller comes back exactly for "Bearer {secret}.{jwt}" of an
// active token, or "Bearer {jwt}" of the store token from an origin the
// token or the gateway allows — the scheme in any case, the credential
// after one space, whitespace around both trimmed, nothing else — and it is
// that token, with WithSecret as sent; every refusal is a *payment.Error:
// AUTH_HEADER_MISSING for a blank header, INVALID_DOMAIN only for the
// store token's exact JWT from another origin, INVALID_APP_TOKEN otherwise.
func FuzzAuthenticate(f *testing.F) {
	fx := newAuthFixture(f)
	for _, s := range []struct {
		header, origin string
		pos            uint16
		x              byte
	}{
		{"Bearer $SECRET.$JWT", "", 0, 0},
		{"Bearer $SECRET.$JWT", "https://evil.example", 0, 0},
		{"Bearer $JWT", "https://shop.example", 0, 0},
		{"Bearer $JWT", "https://a.wild.example:8443", 0, 0},
		{"Bearer $JWT", fuzzPublicOrigin, 0, 0},
		{"Bearer $JWT", "HTTPS://PAY.KESSAI.TEST/", 0, 0},
		{"Bearer $JWT", "https://evil.example", 0, 0},
		{"Bearer $JWT", "", 0, 0},
		{"Bearer $JWT", "null", 0, 0},
		{"Bearer $JWT", "https://shop.example.evil.example", 0, 0},
		{"Bearer $JWT", "http://localhost:8081", 0, 0},
		{"Bearer $JWT", "http://localhost:99999", 0, 0},
		{"bearer $SECRET.$JWT", "", 0, 0},
		{"BEARER   $SECRET.$JWT \t", "", 0, 0},
		{"Bearer  x", "", 0, 0},
		{"Bearer\t$SECRET.$JWT", "", 0, 0},
		{"Bearer \t$JWT", "https://shop.example", 0, 0},
		{"Bearer\u00a0$JWT", "https://shop.example", 0, 0},
		{"Bearer $JWT\u00a0", "https://shop.example", 0, 0},
		{"Basic $SECRET.$JWT", "", 0, 0},
		{"Bearer$SECRET.$JWT", "", 0, 0},
		{"Bearer $MSECRET.$MJWT", "", 0, 0},
		{"Bearer $MJWT", "https://shop.example", 0, 0},
		{"Bearer $RSECRET.$RJWT", "", 0, 0},
		{"Bearer $RJWT", "https://shop.example", 0, 0},
		{"Bearer $SECRET.$MJWT", "", 0, 0},
		{"Bearer $MSECRET.$JWT", "", 0, 0},
		{"Bearer $RSECRET.$JWT", "", 0, 0},
		{"Bearer .$JWT", "", 0, 0},
		{"Bearer $SECRET.$JWT.x", "", 0, 0},
		{"Bearer $SECRET..$JWT", "", 0, 0},
		{"Bearer $SECRET $JWT", "", 0, 0},
		{"Bearer $SECRET.$JWT", "", 1, 0x20},
		{"Bearer $JWT", "https://shop.example", 1, 1},
		{"Bearer $SECRET.$JWT", "", 1, 3},
		{"Bearer $JWT", "https://shop.example", 44, 1},
		{"Bearer $JWT", "https://shop.example", 300, 7},
		{"Bearer $JWT", "https://shop.example", 2, '.'},
		{"", "", 0, 0},
		{"   ", "", 0, 0},
		{"\t", "", 0, 0},
		{"Bearer", "", 0, 0},
		{"Bearer ", "", 0, 0},
		{"Bearer ..", "", 0, 0},
		{"Bearer ...", "", 0, 0},
		{"Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJhcHBfdG9rZW4ifQ.", "https://shop.example", 0, 0},
		{"Bearer " + strings.Repeat("a", 10000), "", 0, 0},
		{"Bearer ﾃｽﾄ.$JWT", "", 0, 0},
	} {
		f.Add(s.header, s.origin, s.pos, s.x)
	}
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, header, origin string, pos uint16, x byte) {
		storeJWT := editJWT(fx.store.JWT, pos, x)
		header = strings.NewReplacer(
			"$MSECRET", fx.merchant.Secret, "$MJWT", fx.merchant.JWT,
			"$RSECRET", fx.revoked.Secret, "$RJWT", fx.revoked.JWT,
			"$SECRET", fx.store.Secret, "$JWT", storeJWT,
		).Replace(header)

		var want *payment.IssuedAppToken
		withSecret, wantCode := false, payment.CodeInvalidAppToken
		cred, bearer := bearerCredential(header)
		switch {
		case strings.TrimSpace(header) == "":
			wantCode = payment.CodeAuthHeaderMissing
		case !bearer:
		case cred == fx.store.Secret+"."+fx.store.JWT:
			want, withSecret = fx.store, true
		case cred == fx.merchant.Secret+"."+fx.merchant.JWT:
			want, withSecret = fx.merchant, true
		case cred == fx.store.JWT && browserOrigin(fx.store.Domains, origin):
			want = fx.store
		case cred == fx.store.JWT:
			wantCode = payment.CodeInvalidDomain
		}

		c, err := fx.svc.Access.Authenticate(ctx, header, origin)
		if want != nil {
			if err != nil {
				t.Fatalf("Authenticate(%q, %q): %v, want the %s token", header, origin, err, kindOf(fx, want))
			}
			if c == nil || c.Token().ID != want.ID || c.WithSecret() != withSecret || c.Origin() != origin {
				t.Fatalf("Authenticate(%q, %q) = %+v, want the %s token, WithSecret %v", header, origin, c, kindOf(fx, want), withSecret)
			}
			return
		}
		if c != nil || err == nil {
			t.Fatalf("Authenticate(%q, %q) = token %v, %v; want %s", header, origin, tokenID(c), err, wantCode)
		}
		var pe *payment.Error
		if !errors.As(err, &pe) || pe.Code != wantCode {
			t.Fatalf("Authenticate(%q, %q): %v (%T), want %s", header, origin, err, err, wantCode)
		}
	})
}

// bearerCredential reads an Authorization value as RFC 9110 §11.4 puts it,
// with whitespace around it and around the credential forgiven: the scheme
// "Bearer" in any case, one space, the credential.
func bearerCredential(header string) (string, bool) {
	h := strings.TrimSpace(header)
	if len(h) < len("Bearer ") || !strings.EqualFold(h[:6], "Bearer") || h[6] != ' ' {
		return "", false
	}
	return strings.TrimSpace(h[7:]), true
}

// browserOrigin is where a store token may be used without its secret:
// the gateway's own origin, or one its domains allow.
func browserOrigin(domains []string, origin string) bool {
	return origin != "" && (strings.EqualFold(strings.TrimRight(origin, "/"), fuzzPublicOrigin) || payment.OriginAllowed(domains, origin))
}

func kindOf(fx *authFixture, tok *payment.IssuedAppToken) string {
	switch tok {
	case fx.store:
		return "store"
	case fx.merchant:
		return "merchant"
	}
	return "revoked"
}

func tokenID(c *payment.Caller) any {
	if c == nil {
		return nil
	}
	return c.Token().ID
}

// FuzzOriginAllowed checks OriginAllowed over domains as app tokens store
// them (NormalizeDomain'd; "\n" separates them in the input). Properties:
// no panic; adding a domain never takes an allowed origin away; an origin
// that is not scheme://host[:port] — userinfo, a path other than "/", a
// query, a fragment, a scheme other than http and https, a port outside
// 1–65535 or a host that is not a host name — is never allowed; an allowed
// origin's host is one of the domains or under a wildcard one.
func FuzzOriginAllowed(f *testing.F) {
	for _, s := range []struct{ domains, extra, origin string }{
		{"shop.example", "other.example", "https://shop.example"},
		{"shop.example", "", "https://shop.example:8443"},
		{"shop.example", "", "https://shop.example/"},
		{"shop.example", "", "https://shop.example/checkout"},
		{"shop.example", "", "https://user@shop.example"},
		{"shop.example", "", "https://user:pw@shop.example"},
		{"shop.example", "", "https://shop.example?x=1"},
		{"shop.example", "", "https://shop.example#top"},
		{"shop.example", "", "ftp://shop.example"},
		{"shop.example", "", "HTTPS://SHOP.EXAMPLE"},
		{"shop.example", "", "https://shop.example:99999"},
		{"shop.example", "", "https://shop.example:"},
		{"shop.example", "", "https://shop.example:0"},
		{"shop.example", "", "https://shop.example."},
		{"shop.example", "", "https://shop%2eexample"},
		{"shop.example", "", "https://evil.example\\@shop.example"},
		{"shop.example", "", "https:shop.example"},
		{"shop.example", "", "https:/shop.example"},
		{"shop.example", "", "https://shop.example\t"},
		{"*.example.com", "", "https://a.example.com"},
		{"*.example.com", "", "https://.example.com"},
		{"*.example.com", "", "https://a..example.com"},
		{"*.example.com", "", "https://example.com"},
		{"*.example.com:8443", "", "https://a.example.com:8443"},
		{"*.example.com", "", "https://a.example.com:8443/x"},
		{"localhost:8081", "", "http://localhost:8081"},
		{"127.0.0.1", "", "http://127.0.0.1:3000"},
		{"[::1]", "", "http://[::1]"},
		{"https://shop.example/", "", "https://shop.example"},
		{"shop.example\n*.wild.example", "x.example", "https://a.wild.example"},
		{"ドメイン.jp", "", "https://ドメイン.jp"},
		{"xn--eckwd4c7c.xn--zckzah", "", "https://xn--eckwd4c7c.xn--zckzah"},
		{"", "", ""},
		{"", "", "null"},
		{"shop.example", "", "https://[fe80::1%25eth0]"},
	} {
		f.Add(s.domains, s.extra, s.origin)
	}
	f.Fuzz(func(t *testing.T, domainList, extra, origin string) {
		var domains []string
		for _, d := range strings.Split(domainList, "\n") {
			if n, ok := payment.NormalizeDomain(d); ok {
				domains = append(domains, n)
			}
		}
		allowed := payment.OriginAllowed(domains, origin)
		more := slices.Concat(domains, []string{extra})
		if n, ok := payment.NormalizeDomain(extra); ok {
			more = append(more, n)
		}
		if allowed && !payment.OriginAllowed(more, origin) {
			t.Fatalf("OriginAllowed(%q, %q) but not with %q added", domains, origin, extra)
		}
		if !allowed {
			return
		}
		host, ok := originHost(origin)
		if !ok {
			t.Fatalf("OriginAllowed(%q, %q): that is not an origin", domains, origin)
		}
		hostname, _, _ := strings.Cut(host, ":")
		if !slices.ContainsFunc(domains, func(d string) bool {
			if w, ok := strings.CutPrefix(d, "*."); ok {
				parent, port, hasPort := strings.Cut(w, ":")
				return strings.HasSuffix(hostname, "."+parent) && (!hasPort || host == hostname+":"+port)
			}
			return d == host || d == hostname
		}) {
			t.Fatalf("OriginAllowed(%q, %q): host %q is under none of them", domains, origin, host)
		}
	})
}

// originHost returns the lower-cased host[:port] of a serialized origin
// (RFC 6454): "http" or "https", "://", a host name or IPv4 address whose
// labels are letters, digits and hyphens, an optional port 1–65535, and at
// most a trailing "/".
func originHost(origin string) (string, bool) {
	if strings.IndexFunc(origin, func(r rune) bool { return r >= utf8.RuneSelf }) >= 0 {
		return "", false // browsers send host names in ASCII (punycode)
	}
	o := strings.ToLower(origin)
	rest, ok := strings.CutPrefix(o, "https://")
	if !ok {
		if rest, ok = strings.CutPrefix(o, "http://"); !ok {
			return "", false
		}
	}
	rest = strings.TrimSuffix(rest, "/")
	hostname, port, hasPort := strings.Cut(rest, ":")
	if hasPort {
		n := 0
		for _, c := range port {
			if c < '0' || c > '9' || n > 65535 {
				return "", false
			}
			n = n*10 + int(c-'0')
		}
		if port == "" || n < 1 || n > 65535 {
			return "", false
		}
	}
	for _, label := range strings.Split(hostname, ".") {
		if label == "" || strings.Trim(label, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" {
			return "", false
		}
	}
	return rest, true
}

// FuzzNormalizeDomain checks the app-token domain rule. Properties: no
// panic; a domain it accepts is lower-case host[:port] (a leading "*."
// allowed) of at most 253 bytes and accepted again unchanged; the origin
// https://{domain} of a non-wildcard domain is allowed by it, and the
// domain typed as that origin normalizes to the same domain.
func FuzzNormalizeDomain(f *testing.F) {
	for _, s := range []string{
		"shop.example", "Shop.Example", " shop.example\t", "https://shop.example:8443/", "HTTPS://SHOP.EXAMPLE",
		"*.example.com", "*.Example.COM:8443", "https://*.example.com", "*", "*.", "*.com", "*.*.example.com",
		"shop.example:", "shop.example:0", "shop.example:65535", "shop.example:65536", "shop.example:99999",
		"shop.example:+80", "shop.example:0080", "shop.example:80:80", "https://shop.example/path",
		"https://user@shop.example", "https://shop.example?x", "https://shop.example#x", "ftp://shop.example",
		"[::1]", "[::1]:8080", "https://[::1]", "fe80::1%eth0", "127.0.0.1", "ドメイン.jp", "xn--eckwd4c7c.xn--zckzah",
		"shop..example", ".shop.example", "shop.example.", "a_b.example", "\x00", "", "localhost:8081",
		strings.Repeat("a", 64) + ".example", strings.Repeat("abcdefghi.", 25) + "com", "https://shop.example:8443//",
		"https://shop.example%2f", "http://shop.example:80/", "K.example", "\u212a.example",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, typed string) {
		d, ok := payment.NormalizeDomain(typed)
		if !ok {
			if d != "" {
				t.Fatalf("NormalizeDomain(%q) refused but returned %q", typed, d)
			}
			return
		}
		if again, ok := payment.NormalizeDomain(d); !ok || again != d {
			t.Fatalf("NormalizeDomain(%q) = %q, which normalizes to %q, %v", typed, d, again, ok)
		}
		if len(d) > 253 || d != strings.ToLower(d) {
			t.Fatalf("NormalizeDomain(%q) = %q", typed, d)
		}
		host, ok := originHost("https://" + strings.TrimPrefix(d, "*."))
		if !ok || host != strings.TrimPrefix(d, "*.") {
			t.Fatalf("NormalizeDomain(%q) = %q, not host[:port]", typed, d)
		}
		if strings.HasPrefix(d, "*.") {
			return
		}
		if !payment.OriginAllowed([]string{d}, "https://"+d) {
			t.Fatalf("NormalizeDomain(%q) = %q, which does not allow https://%s", typed, d, d)
		}
		if again, ok := payment.NormalizeDomain("https://" + d); !ok || again != d {
			t.Fatalf("NormalizeDomain(https://%s) = %q, %v; want %q", d, again, ok, d)
		}
	})
}
