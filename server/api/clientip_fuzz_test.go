package api_test

import (
	"net"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/kessai/kessai/server/api"
)

// FuzzClientIP fuzzes the client address behind KESSAI_TRUSTED_PROXIES:
// the socket peer (always an address, as net/http gives it), the trusted
// ranges (read as the configuration reads them) and X-Forwarded-For (one
// header line per "\n"). Properties: no panic; the result is an address;
// with no trusted proxies it is the peer as is; otherwise it is the peer
// unless the peer is trusted, and then the rightmost hop that is not
// trusted, or the peer again when the hops run out or one is unreadable —
// so the result lies in a trusted range only when the peer and every hop
// read are trusted. A trusted range holds an address whatever its zone
// and whether it is written as IPv4 or IPv4-mapped IPv6.
func FuzzClientIP(f *testing.F) {
	for _, s := range []struct{ peer, trusted, xff string }{
		{"203.0.113.9", "", ""},
		{"203.0.113.9", "", "198.51.100.1"},
		{"10.0.0.2", "10.0.0.0/8", "198.51.100.1"},
		{"10.0.0.2", "10.0.0.0/8", "198.51.100.1, 10.0.0.7"},
		{"10.0.0.2", "10.0.0.0/8", "10.0.0.3, 10.0.0.7"},
		{"10.0.0.2", "10.0.0.0/8", "spoofed, 198.51.100.1, 10.0.0.7"},
		{"10.0.0.2", "10.0.0.0/8", "198.51.100.1, garbage, 10.0.0.7"},
		{"10.0.0.2", "10.0.0.0/8", ""},
		{"10.0.0.2", "10.0.0.0/8", " , ,"},
		{"10.0.0.2", "10.0.0.0/8", "198.51.100.1:99999"},
		{"10.0.0.2", "10.0.0.0/8", "198.51.100.1:8080"},
		{"10.0.0.2", "10.0.0.0/8", "[2001:db8::1]:443"},
		{"10.0.0.2", "10.0.0.0/8", "1.2.3.4\n5.6.7.8, 10.0.0.9"},
		{"10.0.0.2", "10.0.0.0/8", "::ffff:10.0.0.9"},
		{"10.0.0.2", "10.0.0.0/8", "::ffff:198.51.100.1"},
		{"::ffff:10.0.0.2", "10.0.0.0/8", "198.51.100.1"},
		{"10.0.0.2", "::ffff:10.0.0.0/104", "10.0.0.9"},
		{"::1", "::1", "2001:db8::5"},
		{"fe80::1%eth0", "fe80::/10", "2001:db8::5"},
		{"10.0.0.2", "10.0.0.0/8,fe80::/10", "fe80::9%eth1"},
		{"10.0.0.2", "10.0.0.0/8", "fe80::9%25eth1"},
		{"10.0.0.2", "0.0.0.0/0", "1.1.1.1, 2.2.2.2"},
		{"2001:db8::1", "::/0", "1.1.1.1"},
		{"10.0.0.2", "10.0.0.1", "1.1.1.1"},
		{"10.0.0.2", "10.0.0.0/33,nonsense", "1.1.1.1"},
		{"10.0.0.2", "10.0.0.0/8", "unknown"},
		{"10.0.0.2", "10.0.0.0/8", "\"1.1.1.1\""},
		{"10.0.0.2", "10.0.0.0/8", "1.1.1.1\t"},
		{"10.0.0.2", "10.0.0.0/8", "０.０.０.０"},
		{"10.0.0.2", "10.0.0.0/8", strings.Repeat("10.0.0.1,", 500)},
	} {
		f.Add(s.peer, s.trusted, s.xff)
	}
	f.Fuzz(func(t *testing.T, peer, trustedList, xff string) {
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
		for _, line := range strings.Split(xff, "\n") {
			r.Header.Add("X-Forwarded-For", line)
		}

		got := api.ClientIP(r, trusted)
		gotAddr, err := netip.ParseAddr(got)
		if err != nil {
			t.Fatalf("ClientIP = %q, not an address", got)
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
		want := peerAddr
		if inside(peerAddr) {
			hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
			for i := len(hops) - 1; i >= 0; i-- {
				hop, ok := readHop(strings.TrimSpace(hops[i]))
				if !ok {
					break
				}
				if !inside(hop) {
					want = hop
					break
				}
			}
		}
		if same := func(a, b netip.Addr) bool { return a.WithZone("").Unmap() == b.WithZone("").Unmap() }; !same(gotAddr, want) {
			t.Fatalf("peer %s, trusted %v, X-Forwarded-For %q: ClientIP = %s, want %s", peer, trusted, xff, got, want)
		}
		if inside(gotAddr) && gotAddr.WithZone("").Unmap() != peerAddr.WithZone("").Unmap() {
			t.Fatalf("ClientIP = %s, a trusted proxy that is not the peer", got)
		}
	})
}

const zoneChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-"

// configPrefix reads one KESSAI_TRUSTED_PROXIES entry as server/config.go
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
