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
// A live-mode delivery may only reach a public address. The check is made
// on the address the dialer is about to connect to (net.Dialer.Control),
// after name resolution, so a name that resolves to an internal address,
// or one re-bound to it after an earlier check (DNS rebinding), is refused
// as surely as an IP literal. Test-mode deliveries may go anywhere: a
// merchant's laptop and the demo storefront are local receivers.
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
)

// ErrNotPublic is the error (errors.Is) of a live-mode attempt to connect
// to an address that is not a public one (loopback, private, link-local,
// CGNAT, multicast, unspecified, documentation, reserved).
var ErrNotPublic = errors.New("not a public address")

// notPublicError is ErrNotPublic with the address the dialer refused.
type notPublicError struct{ addr string }

func (e *notPublicError) Error() string        { return e.addr + " is not a public address" }
func (e *notPublicError) Is(target error) bool { return target == ErrNotPublic }

// Config is how a Sender sends.
type Config struct {
	// AllowPrivate lets live-mode deliveries reach non-public addresses
	// too (a gateway whose merchants' receivers are on its own network).
	AllowPrivate bool
	// Timeout bounds one attempt; 0 is DefaultTimeout.
	Timeout time.Duration
	// UserAgent is the User-Agent header; "" is DefaultUserAgent.
	UserAgent string
}

// Sender is a payment.WebhookSender over HTTP. It is safe for concurrent
// use and keeps connections to receivers open between attempts.
type Sender struct {
	// guarded dials public addresses only (live mode); open dials any
	// (test mode, or live mode with AllowPrivate). Each has its own pool
	// of connections, so a connection opened for a test-mode delivery is
	// never reused for a live one.
	guarded, open *http.Client
	allowPrivate  bool
	timeout       time.Duration
	userAgent     string
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
	return &Sender{
		guarded:      newClient(cfg.Timeout, publicOnly),
		open:         newClient(cfg.Timeout, nil),
		allowPrivate: cfg.AllowPrivate,
		timeout:      cfg.Timeout,
		userAgent:    cfg.UserAgent,
	}
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
	client := s.open
	if wr.Live && !s.allowPrivate {
		client = s.guarded
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

// sendError is why an attempt got no answer. It is made of what the
// connection said (refused, reset, a name that did not resolve, a TLS
// failure, a timeout), never of what the receiver sent: an answer that is
// not HTTP is only called that, since net/http would quote its first line.
// The URL is left out too (it may hold a secret in its query, and the
// delivery log says whose webhook it was).
func (s *Sender) sendError(ctx context.Context, err error) error {
	inner := unwrapURLError(err)
	var (
		np      *notPublicError
		opErr   *net.OpError
		dnsErr  *net.DNSError
		tlsErr  tls.AlertError
		recErr  tls.RecordHeaderError
		certErr *tls.CertificateVerificationError
	)
	switch {
	case errors.As(err, &np):
		return fmt.Errorf("webhookhttp: refused at dial: %w; live-mode webhooks are only sent to public addresses", np)
	case ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded):
		return ctx.Err()
	case isTimeout(err):
		return fmt.Errorf("webhookhttp: no answer within the timeout (%s, or the delivery's own)", s.timeout)
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

// publicOnly is the guarded dialer's Control: it runs just before each
// connection is made, with the resolved address, and refuses any that is
// not public.
func publicOnly(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil || network != "tcp4" && network != "tcp6" {
		return &notPublicError{network + " " + address}
	}
	if !Public(ap.Addr()) {
		return &notPublicError{ap.Addr().String()}
	}
	return nil
}

// Non-public IPv4 ranges that netip's predicates do not name (RFC 6890's
// special-purpose registry, less what is globally reachable).
var notPublic4 = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),   // shared address space (CGNAT)
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

// Public reports whether a live-mode webhook may be sent to addr: a
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
