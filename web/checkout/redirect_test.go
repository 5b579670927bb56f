package checkout

import (
	"html"
	"net/http"
	"strings"
	"testing"
)

// TestLinkformRefusesMalformedRedirectURLs: a redirect URL the browser could
// not use, or one that would change the meaning of the Content-Security-
// Policy it is written into (its origin goes into form-action), is refused
// with the form's error page and never reaches a header. The fixture's
// token allows shop.example and *.shop-cdn.example.
func TestLinkformRefusesMalformedRedirectURLs(t *testing.T) {
	f := newFormsFixture(t, testGateway)
	h := f.gateway(t, testGateway)
	base := baseParams(f)
	bad := []struct{ name, url, inCSP string }{
		{"port above 65535", "https://shop.example:99999/", "99999"},
		{"port 65536", "https://shop.example:65536/done", "65536"},
		{"port 0", "https://shop.example:0/done", "shop.example:0"},
		{"empty port", "https://shop.example:/done", "shop.example:"},
		{"port with a leading zero", "https://shop.example:0443/done", "0443"},
		{"huge port", "https://shop.example:184467440737095516160/", "18446744"},
		{"IPv6 with a bad port", "https://[::1]:99999/", "99999"},
		{"IPv6 zone", "https://[fe80::1%25eth0]/", "fe80"},
		{"semicolon in the host", "https://a;sandbox-x.shop-cdn.example/", "sandbox-x"},
		{"comma in the host", "https://a,b.shop-cdn.example/", "a,b"},
		{"quote in the host", "https://a'b.shop-cdn.example/", "a'b"},
		{"double quote in the host", `https://a"b.shop-cdn.example/`, `a"b`},
		{"star in the host", "https://a*b.shop-cdn.example/", "a*b"},
		{"parenthesis in the host", "https://a(b).shop-cdn.example/", "a(b)"},
		{"empty label", "https://a..shop-cdn.example/", "a..shop"},
		{"label with a leading hyphen", "https://-a.shop-cdn.example/", "-a.shop"},
		{"label too long", "https://" + strings.Repeat("a", 64) + ".shop-cdn.example/", strings.Repeat("a", 64)},
		{"non-ASCII host", "https://ショップ.shop-cdn.example/", "%E3"},
		{"userinfo", "https://user:pass@shop.example/", "user"},
		{"empty userinfo", "https://@shop.example/", "@"},
		{"DEL in the path", "https://shop.example/a\x7fb", "shop.example"},
		{"control character in the path", "https://shop.example/a\x01b", "shop.example"},
		{"line separator in the path", "https://shop.example/a\u2028b", "shop.example"},
		{"no-break space in the path", "https://shop.example/a\u00a0b", "shop.example"},
		{"vertical tab", "https://shop.example/\vdone", "shop.example"},
		{"invalid UTF-8", "https://shop.example/\xff", "shop.example"},
		{"too long", "https://shop.example/" + strings.Repeat("a", 2048), "shop.example"},
		{"too long once escaped", "https://shop.example/" + strings.Repeat("é", 400), "shop.example"},
	}
	for _, param := range []string{"successRedirectUrl", "failureRedirectUrl", "pendingRedirectUrl"} {
		for _, tc := range bad {
			t.Run(param+"/"+tc.name, func(t *testing.T) {
				// The other redirect URLs are dropped, so that a refused
				// page has no other origin to put into its policy either.
				params := with(base, "successRedirectUrl", "\x00", "failureRedirectUrl", "\x00", "pendingRedirectUrl", "\x00")
				params[param] = tc.url
				rec := get(t, h, formURL("wc-checkout", params))
				if rec.Code < 400 || rec.Code > 499 {
					t.Fatalf("%s=%q: status %d, want 4xx", param, tc.url, rec.Code)
				}
				body := html.UnescapeString(rec.Body.String())
				if !strings.Contains(body, param+" must be") {
					t.Errorf("the page does not say %s is wrong:\n%s", param, body)
				}
				csp := rec.Header().Get("Content-Security-Policy")
				if csp == "" {
					t.Error("the error page has no Content-Security-Policy")
				}
				if strings.Contains(csp, tc.inCSP) {
					t.Errorf("the policy carries the refused URL (%q): %s", tc.inCSP, csp)
				}
				if loc := rec.Header().Get("Location"); loc != "" {
					t.Errorf("a refused form redirects to %s", loc)
				}
			})
		}
	}

	// What is fine stays fine, and lands in form-action as its origin.
	for _, tc := range []struct{ url, origin string }{
		{"https://shop.example:8443/thanks", "https://shop.example:8443"},
		{"https://shop.example:1/thanks", "https://shop.example:1"},
		{"https://shop.example:65535/thanks", "https://shop.example:65535"},
		{"http://shop.example/thanks?a=1&b=2#top", "http://shop.example"},
		{"https://img.shop-cdn.example/ok", "https://img.shop-cdn.example"},
		{"https://a-b.c1.shop-cdn.example/ok", "https://a-b.c1.shop-cdn.example"},
		{"https://SHOP.example/Done", "https://SHOP.example"},
		{"https://shop.example/%E3%81%82?q=%0d%0a", "https://shop.example"},
		{"https://shop.example/" + strings.Repeat("a", 1000), "https://shop.example"},
	} {
		rec := get(t, h, formURL("wc-checkout", with(base, "successRedirectUrl", tc.url)))
		if rec.Code != http.StatusOK {
			t.Errorf("%s refused: %d\n%s", tc.url, rec.Code, rec.Body)
			continue
		}
		if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "form-action 'self' "+tc.origin) {
			t.Errorf("%s: form-action does not name %s: %s", tc.url, tc.origin, csp)
		}
	}
}
