package checkout

import (
	"net/url"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/kessai/kessai/server/payment"
)

// FuzzRedirectURL checks the link form's redirect-URL validation with any
// string. Properties: no panic; an accepted URL parses with url.Parse, is
// http or https, has a host, no userinfo and, when it has a port, one from
// 1 to 65535; it is at most maxRedirectURL bytes; its origin holds nothing
// that could change a Content-Security-Policy (no space, control
// character, quote, comma or semicolon) and is on the token's domains; and
// it is accepted again, unchanged (the normalised form is a fixed point).
func FuzzRedirectURL(f *testing.F) {
	domains := []string{"shop.example", "*.shop-cdn.example", "127.0.0.1:8081", "[::1]"}
	for _, s := range []string{
		"https://shop.example/done", "http://shop.example:8443/a?b=c#d", "https://img.shop-cdn.example/x",
		"http://127.0.0.1:8081/orders/return?order=1", "http://[::1]:3000/", "https://SHOP.example/",
		"https://shop.example:99999/", "https://shop.example:0/", "https://shop.example:/", "https://shop.example:0443/",
		"https://shop.example:65535/", "https://shop.example:65536/", "https://a;b.shop-cdn.example/",
		"https://a,b.shop-cdn.example/", "https://user:pass@shop.example/", "https://shop.example@evil.example/",
		"javascript:alert(1)", "//shop.example/", "/relative", "https://shop.example/\u2028", "https://[fe80::1%25eth0]/",
		"https://ショップ.shop-cdn.example/", "https://shop.example/%ZZ", "https:shop.example", "https:///shop.example",
		"https://shop.example\\@evil.example/", "https://-x.shop-cdn.example/", "https://shop.example./",
		"https://" + strings.Repeat("a.", 130) + "shop-cdn.example/", "https://shop.example/" + strings.Repeat("é", 400),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		out, ok := payment.RedirectAllowed(raw, maxRedirectURL, domains)
		if !ok {
			if out != "" {
				t.Fatalf("refused %q but returned %q", raw, out)
			}
			return
		}
		if len(out) > maxRedirectURL || !utf8.ValidString(out) {
			t.Fatalf("accepted %q as %q: too long or not UTF-8", raw, out)
		}
		u, err := url.Parse(out)
		if err != nil {
			t.Fatalf("accepted %q as %q, which does not parse: %v", raw, out, err)
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			t.Fatalf("accepted %q with scheme %q", raw, u.Scheme)
		}
		if u.User != nil || u.Host == "" || u.Hostname() == "" || u.Opaque != "" {
			t.Fatalf("accepted %q: userinfo %v, host %q, opaque %q", raw, u.User, u.Host, u.Opaque)
		}
		if strings.HasSuffix(u.Host, ":") {
			t.Fatalf("accepted %q with an empty port", raw)
		}
		if p := u.Port(); p != "" {
			if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
				t.Fatalf("accepted %q with port %q", raw, p)
			}
		}
		origin := u.Scheme + "://" + u.Host
		for _, r := range origin {
			if r > unicode.MaxASCII || unicode.IsControl(r) || unicode.IsSpace(r) || strings.ContainsRune(`;,'"\`, r) {
				t.Fatalf("accepted %q, whose origin %q holds %q", raw, origin, r)
			}
		}
		if !payment.OriginAllowed(domains, origin) {
			t.Fatalf("accepted %q, whose origin %q is not on %v", raw, origin, domains)
		}
		if again, ok := payment.RedirectAllowed(out, maxRedirectURL, domains); !ok || again != out {
			t.Fatalf("accepted %q as %q, which then reads as %q, %v", raw, out, again, ok)
		}
	})
}
