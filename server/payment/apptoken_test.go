package payment_test

import (
	"strings"
	"testing"

	"github.com/kessai/kessai/server/payment"
)

func TestNormalizeDomain(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string // "" means refused
	}{
		// Hosts as merchants type them.
		{"shop.example", "shop.example"},
		{"Shop.Example", "shop.example"},
		{"  shop.example\t", "shop.example"},
		{"localhost", "localhost"},
		{"sub-domain.shop.example", "sub-domain.shop.example"},
		{"xn--eckwd4c7c.xn--zckzah", "xn--eckwd4c7c.xn--zckzah"},
		{"127.0.0.1", "127.0.0.1"},

		// Ports.
		{"shop.example:8443", "shop.example:8443"},
		{"localhost:8081", "localhost:8081"},
		{"127.0.0.1:8081", "127.0.0.1:8081"},
		{"shop.example:", ""},
		{"shop.example:abc", ""},
		{"shop.example:-1", ""},
		{"shop.example:80:80", ""},
		{"shop.example:0080", "shop.example:80"},
		{"https://shop.example:08443", "shop.example:8443"},

		// Origins and URLs: the host[:port] is kept.
		{"https://shop.example", "shop.example"},
		{"https://shop.example/", "shop.example"},
		{"HTTPS://SHOP.EXAMPLE:8443/", "shop.example:8443"},
		{"http://localhost:8081", "localhost:8081"},
		{"https://shop.example/checkout", ""},
		{"https://shop.example?x=1", ""},
		{"https://", ""},
		{"https:///path", ""},
		{"https://shop example", ""},

		// Wildcards: one leading "*." label.
		{"*.example.com", "*.example.com"},
		{"*.Example.COM:8443", "*.example.com:8443"},
		{"https://*.example.com", "*.example.com"},
		{"*", ""},
		{"*.", ""},
		{"*.*.example.com", ""},
		{"a.*.example.com", ""},
		{"a*.example.com", ""},
		{"example.*", ""},

		// Garbage.
		{"", ""},
		{"   ", ""},
		{".", ""},
		{"shop..example", ""},
		{".shop.example", ""},
		{"shop.example.", ""},
		{"shop.example/path", ""},
		{"shop_example.com", ""},
		{"shop example.com", ""},
		{"ドメイン.jp", ""},
		{"shop.example\x00", ""},
		{"[::1]", ""},
		{"[::1]:8080", ""},
		{"[0]:1", ""},
		{"[shop.example]:443", ""},
		{"user@shop.example", ""},
		{strings.Repeat("a", 63) + ".example", strings.Repeat("a", 63) + ".example"},
		{strings.Repeat("a", 64) + ".example", ""},
		{strings.Repeat("abcdefghi.", 25) + "com", strings.Repeat("abcdefghi.", 25) + "com"}, // 253
		{strings.Repeat("abcdefghi.", 25) + "comm", ""},                                      // 254
	} {
		got, ok := payment.NormalizeDomain(tc.in)
		if ok != (tc.want != "") || got != tc.want {
			t.Errorf("NormalizeDomain(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.want != "")
		}
	}
}

// TestNormalizedDomainsAreStable checks that a normalized domain normalizes
// to itself, so that storing and re-checking it agree.
func TestNormalizedDomainsAreStable(t *testing.T) {
	for _, in := range []string{"Shop.Example", "https://shop.example:8443/", "*.Example.com", "localhost:8081"} {
		once, ok := payment.NormalizeDomain(in)
		if !ok {
			t.Fatalf("NormalizeDomain(%q) refused", in)
		}
		twice, ok := payment.NormalizeDomain(once)
		if !ok || twice != once {
			t.Errorf("NormalizeDomain(%q) = %q, %v; want %q", once, twice, ok, once)
		}
	}
}

func TestOriginAllowed(t *testing.T) {
	domains := []string{"shop.example", "pay.example:8443", "*.wild.example", "*.ported.example:9000", "localhost:8081"}
	for _, tc := range []struct {
		origin string
		want   bool
	}{
		// A domain without a port allows every port and both schemes.
		{"https://shop.example", true},
		{"http://shop.example", true},
		{"https://shop.example:8443", true},
		{"http://shop.example:3000", true},
		{"HTTPS://SHOP.EXAMPLE", true},
		{"https://shop.example/", true},

		// A domain with a port allows that port only.
		{"https://pay.example:8443", true},
		{"https://pay.example", false},
		{"https://pay.example:443", false},
		{"https://pay.example:8444", false},
		{"http://localhost:8081", true},
		{"http://localhost:8080", false},
		{"http://localhost", false},
		{"http://127.0.0.1:8081", false},

		// Wildcards allow subdomains, not the bare domain or look-alikes.
		{"https://a.wild.example", true},
		{"https://a.b.wild.example", true},
		{"https://a.wild.example:8443", true},
		{"https://wild.example", false},
		{"https://evilwild.example", false},
		{"https://a.wild.example.evil.com", false},
		{"https://a.ported.example:9000", true},
		{"https://a.ported.example:9001", false},
		{"https://a.ported.example", false},

		// Look-alikes of a plain domain.
		{"https://sub.shop.example", false},
		{"https://shop.example.evil.com", false},
		{"https://evilshop.example", false},
		{"https://shop.exampl", false},
		{"https://shop.example.", false},
		{"https://shop.example@evil.com", false},
		{"https://evil.com#shop.example", false},
		{"https://evil.com/shop.example", false},
		{"https://evil.com?shop.example", false},

		// Schemes and garbage.
		{"ftp://shop.example", false},
		{"file://shop.example", false},
		{"javascript://shop.example", false},
		{"ws://shop.example", false},
		{"chrome-extension://shop.example", false},
		{"shop.example", false},
		{"//shop.example", false},
		{"null", false},
		{"", false},
		{"https://", false},
		{"https://%zz", false},
		{"https://[::1]:8081", false},
	} {
		if got := payment.OriginAllowed(domains, tc.origin); got != tc.want {
			t.Errorf("OriginAllowed(%q) = %v, want %v", tc.origin, got, tc.want)
		}
	}
}

func TestOriginAllowedNoDomains(t *testing.T) {
	for _, domains := range [][]string{nil, {}, {""}} {
		if payment.OriginAllowed(domains, "https://shop.example") {
			t.Errorf("OriginAllowed(%q, https://shop.example) = true", domains)
		}
	}
}

// TestNormalizedDomainAllowsItsOrigin ties the two together: what a
// merchant types allows the origin they mean.
func TestNormalizedDomainAllowsItsOrigin(t *testing.T) {
	for _, tc := range []struct{ typed, origin string }{
		{"Shop.Example", "https://shop.example"},
		{"https://shop.example/", "https://shop.example"},
		{"https://shop.example:8443", "https://shop.example:8443"},
		{"*.Example.com", "https://www.example.com"},
		{"localhost:8081", "http://localhost:8081"},
	} {
		d, ok := payment.NormalizeDomain(tc.typed)
		if !ok {
			t.Fatalf("NormalizeDomain(%q) refused", tc.typed)
		}
		if !payment.OriginAllowed([]string{d}, tc.origin) {
			t.Errorf("domain %q (typed %q) does not allow %s", d, tc.typed, tc.origin)
		}
	}
}
