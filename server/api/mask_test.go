package api

import (
	"net/http/httptest"
	"testing"
)

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
