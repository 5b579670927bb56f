// Package webhookhttp sends webhook deliveries over HTTP: the
// payment.WebhookSender of the gateway, on net/http.
//
// Each attempt is one POST of the delivery's body with its headers. It
// follows no redirect (a 3xx is the receiver's answer, a failed attempt
// with that status), is bounded by a total timeout, and reads at most a
// small part of the answer's body, only so that the connection can be
// used again; the body never reaches an error message or the delivery
// log.
//
// Where a delivery may go: a public address in either mode; in test mode
// also loopback and private networks (RFC 1918, fc00::/7, CGNAT
// 100.64.0.0/10) when Config.TestModeLocal says so (a gateway on a
// developer's machine, whose merchants' receivers are local); nowhere
// else in any mode — link-local (169.254.0.0/16 with the cloud metadata
// address, fe80::/10), 0.0.0.0/8, unspecified, multicast, documentation
// and reserved addresses, written plainly or IPv4-mapped. The check is
// made on the address the dialer is about to connect to (net.Dialer's
// Control), after name resolution and before any packet is sent, so a
// name that resolves to a refused address, or one re-bound to it after an
// earlier check (DNS rebinding), is refused as surely as an IP literal.
// CheckURL makes the same check when a webhook is registered, on the
// addresses its host resolves to then, so that a mistake is told at once.
package webhookhttp

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kessai/kessai/server/payment"
)

// Defaults of a Sender.
const (
	// DefaultTimeout bounds one attempt, from dialling to the end of the
	// answer's headers and the part of its body that is read.
	DefaultTimeout = 15 * time.Second
	// DefaultUserAgent names the sender to receivers.
	DefaultUserAgent = "Kessai-Webhooks/1.0"
	// maxDrain is how much of an answer's body is read (and discarded)
	// so that its connection can be kept; a longer body costs the
	// connection instead.
	maxDrain = 64 << 10
	// maxAnswerHeaders bounds the answer's headers.
	maxAnswerHeaders = 64 << 10
	// lookupTimeout bounds CheckURL's resolution of a name: a registration
	// waits for it, and a name that does not resolve in time is left to
	// the dial's own check.
	lookupTimeout = 2 * time.Second
)

// refusedError is payment.ErrWebhookAddress with the address refused.
type refusedError struct{ addr string }

func (e *refusedError) Error() string {
	return e.addr + " is not an address webhooks may reach"
}
func (e *refusedError) Is(target error) bool { return target == payment.ErrWebhookAddress }

// timeoutError is payment.ErrWebhookTimeout with the timeout that ran out.
type timeoutError struct{ timeout time.Duration }

func (e *timeoutError) Error() string {
	return fmt.Sprintf("webhookhttp: no answer within the timeout (%s, or the delivery's own)", e.timeout)
}
func (e *timeoutError) Is(target error) bool { return target == payment.ErrWebhookTimeout }

// Config is how a Sender sends.
type Config struct {
	// TestModeLocal lets test-mode deliveries reach loopback and private
	// addresses (RFC 1918, fc00::/7, CGNAT 100.64.0.0/10) as well as
	// public ones. Live-mode deliveries never may, and no delivery reaches
	// link-local, metadata, multicast, unspecified or reserved addresses.
	TestModeLocal bool
	// Timeout bounds one attempt; 0 is DefaultTimeout.
	Timeout time.Duration
	// UserAgent is the User-Agent header; "" is DefaultUserAgent.
	UserAgent string
	// LookupHost resolves a host name for CheckURL; nil is the system
	// resolver. The dialer resolves names itself, at each connection.
	LookupHost func(ctx context.Context, host string) ([]netip.Addr, error)
}

// Sender is a payment.WebhookSender over HTTP. It is safe for concurrent
// use and keeps connections to receivers open between attempts.
type Sender struct {
	// live and test dial what their mode may reach. Each has its own pool
	// of connections, so a connection opened for a test-mode delivery is
	// never reused for a live one.
	live, test *http.Client
	testLocal  bool
	timeout    time.Duration
	userAgent  string
	lookupHost func(ctx context.Context, host string) ([]netip.Addr, error)
	// fence, set only by this package's tests, is asked after the rule
	// about every address the dialer is about to connect to: it keeps a
	// test's connections on this machine even when the rule is broken (a
	// mutation), so that no test ever sends a packet to the addresses it
	// checks are refused.
	fence func(netip.Addr) error
}

var _ payment.WebhookSender = (*Sender)(nil)

// New returns a Sender.
func New(cfg Config) *Sender {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = DefaultUserAgent
	}
	if cfg.LookupHost == nil {
		cfg.LookupHost = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	s := &Sender{testLocal: cfg.TestModeLocal, timeout: cfg.Timeout, userAgent: cfg.UserAgent, lookupHost: cfg.LookupHost}
	s.live = newClient(cfg.Timeout, s.control(true))
	s.test = newClient(cfg.Timeout, s.control(false))
	return s
}

func newClient(timeout time.Duration, control func(network, address string, c syscall.RawConn) error) *http.Client {
	dialer := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second, Control: control}
	return &http.Client{
		Transport: &http.Transport{
			// No proxy from the environment: the dialer's check must see
			// the receiver's address, not a proxy's.
			Proxy:                  nil,
			DialContext:            dialer.DialContext,
			ForceAttemptHTTP2:      true,
			MaxIdleConns:           256,
			MaxIdleConnsPerHost:    64, // the worker's concurrency
			IdleConnTimeout:        90 * time.Second,
			TLSHandshakeTimeout:    10 * time.Second,
			ExpectContinueTimeout:  time.Second,
			MaxResponseHeaderBytes: maxAnswerHeaders,
			// The body is thrown away: no need to ask for it compressed.
			DisableCompression: true,
		},
		// A redirect is not followed: the attempt failed with its 3xx.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Timeout:       timeout,
	}
}

// Allowed reports whether a delivery of the mode (live or test) may go to
// addr.
func (s *Sender) Allowed(addr netip.Addr, live bool) bool {
	return Public(addr) || !live && s.testLocal && Local(addr)
}

// control is the dialer's Control for the mode: it runs just before each
// connection is made, with the resolved address, and refuses any the mode
// may not reach. Nothing has been sent yet when it refuses.
func (s *Sender) control(live bool) func(network, address string, _ syscall.RawConn) error {
	return func(network, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil || network != "tcp4" && network != "tcp6" {
			return &refusedError{network + " " + address}
		}
		if !s.Allowed(ap.Addr(), live) {
			return &refusedError{ap.Addr().String()}
		}
		if s.fence != nil {
			return s.fence(ap.Addr())
		}
		return nil
	}
}

// CheckURL is payment.WebhookSender's check of a URL being registered:
// payment.ErrWebhookAddress when its host is an address the mode may not
// reach, or a name that resolves, now, to one such address or more. A URL
// that is no absolute http(s) one, or a name that does not resolve (in
// lookupTimeout), is no concern of this check.
func (s *Sender) CheckURL(ctx context.Context, rawURL string, live bool) error {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return nil
	}
	host := u.Hostname()
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else if a, ok := legacyIPv4(host); ok {
		addrs = []netip.Addr{a}
	} else {
		lctx, cancel := context.WithTimeout(ctx, lookupTimeout)
		addrs, _ = s.lookupHost(lctx, host)
		cancel()
	}
	for _, a := range addrs {
		if !s.Allowed(a, live) {
			return &refusedError{a.String()}
		}
	}
	return nil
}

// legacyIPv4 reads host as inet_aton does: one to four parts, each
// decimal, octal (a leading 0) or hex (0x), the last filling the bytes
// left (2852039166, 0251.0376.0251.0376, 0xa9fea9fe, 169.254.43518 are all
// 169.254.169.254). Go's resolver takes such a host for a name, the C
// resolver (a gateway built with cgo, GODEBUG=netdns=cgo) for that address:
// registration checks the address, so that the answer does not depend on
// the build. The dial checks what was resolved either way.
func legacyIPv4(host string) (netip.Addr, bool) {
	parts := strings.Split(host, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var v uint64
	for i, p := range parts {
		n, ok := legacyIPv4Part(p)
		if !ok {
			return netip.Addr{}, false
		}
		if i < len(parts)-1 {
			if n > 0xff {
				return netip.Addr{}, false
			}
			v |= n << (8 * (3 - i))
			continue
		}
		if n >= 1<<(8*(4-i)) {
			return netip.Addr{}, false
		}
		v |= n
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

// legacyIPv4Part reads one part of legacyIPv4's forms.
func legacyIPv4Part(p string) (uint64, bool) {
	base := 10
	switch {
	case len(p) > 1 && (p[:2] == "0x" || p[:2] == "0X"):
		base, p = 16, p[2:]
		if p == "" {
			return 0, true // inet_aton reads a bare 0x as 0
		}
	case len(p) > 1 && p[0] == '0':
		base, p = 8, p[1:]
	}
	if p == "" || p[0] == '+' || p[0] == '-' {
		return 0, false
	}
	n, err := strconv.ParseUint(p, base, 32)
	return n, err == nil
}

// Send posts one delivery attempt and returns the receiver's status. The
// error says why no answer came; it never holds the answer's body.
func (s *Sender) Send(ctx context.Context, wr payment.WebhookRequest) (int, error) {
	u, err := url.Parse(wr.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return 0, errors.New("webhookhttp: the webhook URL is not an absolute http(s) URL")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, wr.URL, bytes.NewReader(wr.Body))
	if err != nil {
		return 0, fmt.Errorf("webhookhttp: %w", unwrapURLError(err))
	}
	for k, v := range wr.Headers {
		req.Header.Set(k, v)
	}
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", s.userAgent)
	}
	client := s.test
	if wr.Live {
		client = s.live
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, s.sendError(ctx, err)
	}
	// Read a little of the body so that the connection can carry the next
	// attempt; what it says is not looked at. The status is the answer
	// even if reading fails.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxDrain))
	resp.Body.Close()
	return resp.StatusCode, nil
}

// sendError is why an attempt got no answer, for the server's log (the
// merchant is shown only payment's coarse words for it). It is made of
// what the connection said (refused, reset, a name that did not resolve, a
// TLS failure, a timeout), never of what the receiver sent: an answer that
// is not HTTP is only called that, since net/http would quote its first
// line. The URL is left out too (it may hold a secret in its query, and
// the log says whose webhook it was).
func (s *Sender) sendError(ctx context.Context, err error) error {
	inner := unwrapURLError(err)
	var (
		refused *refusedError
		opErr   *net.OpError
		dnsErr  *net.DNSError
		tlsErr  tls.AlertError
		recErr  tls.RecordHeaderError
		certErr *tls.CertificateVerificationError
	)
	switch {
	case errors.As(err, &refused):
		return fmt.Errorf("webhookhttp: refused at dial: %w", refused)
	case ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded):
		return ctx.Err()
	case isTimeout(err):
		return &timeoutError{s.timeout}
	case errors.As(err, &dnsErr):
		return fmt.Errorf("webhookhttp: %w", dnsErr)
	case errors.As(err, &opErr):
		return fmt.Errorf("webhookhttp: %w", opErr)
	case errors.As(err, &certErr), errors.As(err, &tlsErr), errors.As(err, &recErr):
		return fmt.Errorf("webhookhttp: TLS: %w", inner)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("webhookhttp: the receiver closed the connection without answering")
	}
	return errors.New("webhookhttp: the receiver's answer is not valid HTTP")
}

func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}

// Non-public IPv4 ranges that netip's predicates do not name (RFC 6890's
// special-purpose registry, less what is globally reachable).
var notPublic4 = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network"
	cgnat,                                    // shared address space (CGNAT)
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("192.0.2.0/24"),    // documentation (TEST-NET-1)
	netip.MustParsePrefix("192.88.99.0/24"),  // 6to4 relay anycast (deprecated)
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("198.51.100.0/24"), // documentation (TEST-NET-2)
	netip.MustParsePrefix("203.0.113.0/24"),  // documentation (TEST-NET-3)
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, and the broadcast address
}

var (
	// global6 is IPv6's global unicast space; everything else (ULA
	// fc00::/7, link-local, site-local, multicast, loopback, the mapped
	// and compatible forms) is not public.
	global6 = netip.MustParsePrefix("2000::/3")
	// nat64 is the well-known NAT64 prefix: public when the IPv4 address
	// it carries is (an IPv6-only host reaches IPv4 receivers through it).
	nat64      = netip.MustParsePrefix("64:ff9b::/96")
	notPublic6 = []netip.Prefix{
		netip.MustParsePrefix("2001::/23"),     // IETF protocol assignments (Teredo, ORCHID, …)
		netip.MustParsePrefix("2001:db8::/32"), // documentation
		netip.MustParsePrefix("2002::/16"),     // 6to4: carries an IPv4 address, any
		netip.MustParsePrefix("3fff::/20"),     // documentation
	}
)

// cgnat is the shared address space of carrier-grade NAT (RFC 6598),
// a private network to a gateway inside one.
var cgnat = netip.MustParsePrefix("100.64.0.0/10")

// metadata are the cloud metadata services that are not link-local (which
// is never local): AWS's IPv6 one, in fc00::/7, and Alibaba Cloud's, in
// CGNAT space. They hand out the machine's credentials.
var metadata = []netip.Addr{
	netip.MustParseAddr("fd00:ec2::254"),
	netip.MustParseAddr("100.100.100.200"),
}

// Local reports whether addr is on this machine or a private network:
// loopback, RFC 1918, fc00::/7 (unique local) or CGNAT's 100.64.0.0/10,
// written plainly or IPv4-mapped, less the cloud metadata services.
// Link-local addresses are not local: 169.254.169.254 is the metadata
// service of most clouds.
func Local(addr netip.Addr) bool {
	addr = addr.Unmap()
	if slices.Contains(metadata, addr.WithZone("")) {
		return false
	}
	return addr.IsLoopback() || addr.IsPrivate() || cgnat.Contains(addr)
}

// Public reports whether any webhook may be sent to addr: a
// globally reachable unicast address, not loopback, private (RFC 1918,
// RFC 4193), link-local, CGNAT, multicast, unspecified, documentation or
// reserved.
func Public(addr netip.Addr) bool {
	addr = addr.Unmap()
	if addr.Is6() && nat64.Contains(addr) {
		b := addr.As16()
		return Public(netip.AddrFrom4([4]byte(b[12:])))
	}
	if !addr.IsGlobalUnicast() || addr.IsPrivate() {
		return false
	}
	if addr.Is4() {
		for _, p := range notPublic4 {
			if p.Contains(addr) {
				return false
			}
		}
		return true
	}
	if !global6.Contains(addr) {
		return false
	}
	for _, p := range notPublic6 {
		if p.Contains(addr) {
			return false
		}
	}
	return true
}
