package api_test

import (
	"net"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/kessai/kessai/server/api"
	"github.com/kessai/kessai/server/forwarded"
)

// FuzzClientIP fuzzes the client address behind KESSAI_TRUSTED_PROXIES,
// the parser of the forwarded chain: the socket peer (always an address,
// as net/http gives it), the trusted ranges (read as the configuration
// reads them), X-Forwarded-For (absent when empty, else one header line
// per "\n") and the name of one more header sent with it.
//
// Invariants: no panic; the result is an address or api.UnknownClient;
// with no trusted proxies it is the peer as is; otherwise it is the peer
// unless the peer is trusted, and then the rightmost hop that is not
// trusted, or UnknownClient when an entry that is no address comes first
// (garbage never yields the proxy's own address), or when there is no
// X-Forwarded-For but a forwarding header; the peer again only when every
// hop is trusted or the request is the proxy's own. So the result lies in
// a trusted range only when the peer and every hop read are trusted. A
// trusted range holds an address whatever its zone and whether it is
// written as IPv4 or IPv4-mapped IPv6.
func FuzzClientIP(f *testing.F) {
	for _, s := range []struct{ peer, trusted, xff, header string }{
		{"203.0.113.9", "", "", ""},
		{"203.0.113.9", "", "198.51.100.1", ""},
		{"10.0.0.2", "10.0.0.0/8", "198.51.100.1", ""},
		{"10.0.0.2", "10.0.0.0/8", "198.51.100.1, 10.0.0.7", ""},
		{"10.0.0.2", "10.0.0.0/8", "10.0.0.3, 10.0.0.7", ""},
		{"10.0.0.2", "10.0.0.0/8", "spoofed, 198.51.100.1, 10.0.0.7", ""},
		{"10.0.0.2", "10.0.0.0/8", "198.51.100.1, garbage, 10.0.0.7", ""},
		{"10.0.0.2", "10.0.0.0/8", "garbage", ""},
		{"10.0.0.2", "10.0.0.0/8", "unknown", ""},
		{"10.0.0.2", "10.0.0.0/8", "", ""},
		{"10.0.0.2", "10.0.0.0/8", "", "Forwarded"},
		{"10.0.0.2", "10.0.0.0/8", "", "x-real-ip"},
		{"10.0.0.2", "10.0.0.0/8", "", "Via"},
		{"10.0.0.2", "10.0.0.0/8", "", "X-Request-Id"},
		{"10.0.0.2", "10.0.0.0/8", "198.51.100.1", "Forwarded"},
		{"10.0.0.2", "10.0.0.0/8", " , ,", ""},
		{"10.0.0.2", "10.0.0.0/8", "\n", ""},
		{"10.0.0.2", "10.0.0.0/8", "198.51.100.1:99999", ""},
		{"10.0.0.2", "10.0.0.0/8", "198.51.100.1:8080", ""},
		{"10.0.0.2", "10.0.0.0/8", "[2001:db8::1]:443", ""},
		{"10.0.0.2", "10.0.0.0/8", "1.2.3.4\n5.6.7.8, 10.0.0.9", ""},
		{"10.0.0.2", "10.0.0.0/8", "10.0.0.9\ngarbage", ""},
		{"10.0.0.2", "10.0.0.0/8", "::ffff:10.0.0.9", ""},
		{"10.0.0.2", "10.0.0.0/8", "::ffff:198.51.100.1", ""},
		{"::ffff:10.0.0.2", "10.0.0.0/8", "198.51.100.1", ""},
		{"10.0.0.2", "::ffff:10.0.0.0/104", "10.0.0.9", ""},
		{"::1", "::1", "2001:db8::5", ""},
		{"fe80::1%eth0", "fe80::/10", "2001:db8::5", ""},
		{"10.0.0.2", "10.0.0.0/8,fe80::/10", "fe80::9%eth1", ""},
		{"10.0.0.2", "10.0.0.0/8", "fe80::9%25eth1", ""},
		{"10.0.0.2", "10.0.0.0/8", "203.0.113.7%", ""},
		{"10.0.0.2", "0.0.0.0/0", "1.1.1.1, 2.2.2.2", ""},
		{"2001:db8::1", "::/0", "1.1.1.1", ""},
		{"10.0.0.2", "10.0.0.1", "1.1.1.1", ""},
		{"10.0.0.2", "10.0.0.0/33,nonsense", "1.1.1.1", ""},
		{"10.0.0.2", "10.0.0.0/8", "\"1.1.1.1\"", ""},
		{"10.0.0.2", "10.0.0.0/8", "1.1.1.1\t", ""},
		{"10.0.0.2", "10.0.0.0/8", "０.０.０.０", ""},
		{"10.0.0.2", "10.0.0.0/8", strings.Repeat("10.0.0.1,", 500), ""},
	} {
		f.Add(s.peer, s.trusted, s.xff, s.header)
	}
	f.Fuzz(func(t *testing.T, peer, trustedList, xff, header string) {
		peerAddr, err := netip.ParseAddr(peer)
		if err != nil || strings.Trim(peerAddr.Zone(), zoneChars) != "" {
			return // net/http's RemoteAddr holds an address (zones are interface names)
		}
		var trusted []netip.Prefix
		for _, p := range strings.Split(trustedList, ",") {
			if pre, ok := configPrefix(strings.TrimSpace(p)); ok {
				trusted = append(trusted, pre)
			}
		}
		r := httptest.NewRequest("GET", "/charges", nil)
		r.RemoteAddr = net.JoinHostPort(peer, "40000")
		if xff != "" {
			for _, line := range strings.Split(xff, "\n") {
				r.Header.Add("X-Forwarded-For", line)
			}
		}
		if header != "" && strings.Trim(strings.ToLower(header), tokenChars) == "" && !strings.EqualFold(header, "X-Forwarded-For") {
			r.Header.Add(header, "203.0.113.99")
		}

		got := api.ClientIP(r, trusted)
		gotAddr, err := netip.ParseAddr(got)
		if err != nil && got != api.UnknownClient {
			t.Fatalf("ClientIP = %q, neither an address nor UnknownClient", got)
		}
		if len(trusted) == 0 {
			if got != peer {
				t.Fatalf("no trusted proxies: ClientIP = %q, want the peer %q", got, peer)
			}
			return
		}
		inside := func(a netip.Addr) bool {
			a = a.WithZone("").Unmap()
			for _, p := range trusted {
				// ::ffff:10.0.0.0/104 is 10.0.0.0/8 written in IPv6.
				mapped := netip.MustParsePrefix("::ffff:0:0/96")
				if mapped.Overlaps(p) && p.Bits() >= 96 {
					b := p.Addr().As16()
					p = netip.PrefixFrom(netip.AddrFrom4([4]byte(b[12:])), p.Bits()-96)
				}
				if p.Contains(a) {
					return true
				}
			}
			return false
		}
		want, known, garbage := peerAddr, true, false
		if inside(peerAddr) {
			lines := r.Header.Values("X-Forwarded-For")
			if len(lines) == 0 {
				known = !forwarded.Proxied(r.Header)
			}
			hops := strings.Split(strings.Join(lines, ","), ",")
			for i := len(hops) - 1; i >= 0 && len(lines) > 0; i-- {
				hop, ok := readHop(strings.TrimSpace(hops[i]))
				if !ok {
					known, garbage = false, true
					break
				}
				if !inside(hop) {
					want = hop
					break
				}
			}
		}
		same := func(a, b netip.Addr) bool { return a.WithZone("").Unmap() == b.WithZone("").Unmap() }
		switch {
		case !known && got != api.UnknownClient:
			t.Fatalf("peer %s, trusted %v, X-Forwarded-For %q, %s: ClientIP = %s, want UnknownClient", peer, trusted, xff, header, got)
		case known && (err != nil || !same(gotAddr, want)):
			t.Fatalf("peer %s, trusted %v, X-Forwarded-For %q, %s: ClientIP = %s, want %s", peer, trusted, xff, header, got, want)
		case garbage && err == nil && same(gotAddr, peerAddr):
			t.Fatalf("X-Forwarded-For %q, unreadable where the client should be: ClientIP = %s, the proxy's own address", xff, got)
		case err == nil && inside(gotAddr) && !same(gotAddr, peerAddr):
			t.Fatalf("ClientIP = %s, a trusted proxy that is not the peer", got)
		}
	})
}

const zoneChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-"

// tokenChars are those of a header name as the fuzz target writes one
// (lower case; net/http canonicalises the case).
const tokenChars = "abcdefghijklmnopqrstuvwxyz0123456789-"

// configPrefix reads one KESSAI_TRUSTED_PROXIES entry as server/gateway/config.go
// does: a CIDR, or a single address.
func configPrefix(s string) (netip.Prefix, bool) {
	p, err := netip.ParsePrefix(s)
	if err != nil {
		a, aerr := netip.ParseAddr(s)
		if aerr != nil {
			return netip.Prefix{}, false
		}
		p = netip.PrefixFrom(a, a.BitLen())
	}
	p = p.Masked()
	return p, p.IsValid()
}

// readHop reads an X-Forwarded-For entry: an address, with or without a
// port (1..65535 digits as net/netip reads them).
func readHop(s string) (netip.Addr, bool) {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr(), true
	}
	a, err := netip.ParseAddr(s)
	return a, err == nil
}
