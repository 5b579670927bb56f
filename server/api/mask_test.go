package api

import (
	"net/http/httptest"
	"testing"
)

func TestMaskCardLike(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"/stores/x/tokens/4242424242424242", "/stores/x/tokens/[redacted]"},
		{"/charges/4242 4242 4242 4242", "/charges/[redacted]"},
		{"/charges/4242-4242-4242-4242/refunds", "/charges/[redacted]/refunds"},
		{"/amex/3782-822463-10005", "/amex/[redacted]"},
		{"/diners/30569309025904", "/diners/[redacted]"},
		// Not Luhn-valid, or too short: left alone.
		{"/charges/4242424242424241", "/charges/4242424242424241"},
		{"/charges/12345678901", "/charges/12345678901"},
		{"0f8fad5b-d9cb-469f-a165-70867728950e", "0f8fad5b-d9cb-469f-a165-70867728950e"},
		{"/stores/01a20542-0b5a-790a-b046-c0ada3848f00/charges", "/stores/01a20542-0b5a-790a-b046-c0ada3848f00/charges"},
	} {
		if got := maskCardLike(c.in); got != c.want {
			t.Errorf("maskCardLike(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestRequestOrigin(t *testing.T) {
	s := New(Config{PublicOrigin: "https://pay.example"})
	for _, c := range []struct{ origin, site, want string }{
		{"https://shop.example", "cross-site", "https://shop.example"},
		// Browsers omit Origin on same-origin GETs such as the frame's polls.
		{"", "same-origin", "https://pay.example"},
		{"", "cross-site", ""},
		{"", "", ""},
	} {
		r := httptest.NewRequest("GET", "/charges/x", nil)
		if c.origin != "" {
			r.Header.Set("Origin", c.origin)
		}
		if c.site != "" {
			r.Header.Set("Sec-Fetch-Site", c.site)
		}
		if got := s.requestOrigin(r); got != c.want {
			t.Errorf("Origin %q, Sec-Fetch-Site %q: %q, want %q", c.origin, c.site, got, c.want)
		}
	}
}
