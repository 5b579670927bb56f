package webhookhttp_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/webhookhttp"
)

// receiver is an httptest server that keeps what it was sent.
type receiver struct {
	*httptest.Server
	mu   sync.Mutex
	hits []received
}

type received struct {
	header http.Header
	body   []byte
}

func newReceiver(t *testing.T, answer func(w http.ResponseWriter, r *http.Request)) *receiver {
	t.Helper()
	rc := &receiver{}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.hits = append(rc.hits, received{r.Header.Clone(), body})
		rc.mu.Unlock()
		answer(w, r)
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) count() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.hits)
}

func request(url string, live bool) payment.WebhookRequest {
	return payment.WebhookRequest{
		URL: url, Body: []byte(`{"id":"e1","event":"charge_finished","data":{},"created_on":"2026-01-01T00:00:00Z"}`),
		Headers: map[string]string{"Content-Type": "application/json", "Authorization": "Bearer shop-token", "webhook-id": "e1"},
		Live:    live,
	}
}

func TestSendPostsHeadersAndBody(t *testing.T) {
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	s := webhookhttp.NewFenced(t, webhookhttp.Config{TestModeLocal: true})
	req := request(rc.URL+"/hooks?shop=1", false)
	status, err := s.Send(context.Background(), req)
	if err != nil || status != http.StatusNoContent {
		t.Fatalf("Send = %d, %v; want 204, nil", status, err)
	}
	hit := rc.hits[0]
	if !bytes.Equal(hit.body, req.Body) {
		t.Errorf("body %s, want %s", hit.body, req.Body)
	}
	for k, v := range req.Headers {
		if got := hit.header.Get(k); got != v {
			t.Errorf("header %s = %q, want %q", k, got, v)
		}
	}
	if ua := hit.header.Get("User-Agent"); !strings.Contains(ua, "Kessai") {
		t.Errorf("User-Agent %q does not name Kessai", ua)
	}
}

func TestSendReturnsFailureStatus(t *testing.T) {
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "SECRET-BODY-OF-THE-RECEIVER", http.StatusInternalServerError)
	})
	status, err := webhookhttp.NewFenced(t, webhookhttp.Config{TestModeLocal: true}).Send(context.Background(), request(rc.URL, false))
	if err != nil || status != http.StatusInternalServerError {
		t.Fatalf("Send = %d, %v; want 500, nil", status, err)
	}
}

func TestSendTimesOut(t *testing.T) {
	release := make(chan struct{})
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	t.Cleanup(func() { close(release) }) // before the server closes
	s := webhookhttp.NewFenced(t, webhookhttp.Config{TestModeLocal: true, Timeout: 200 * time.Millisecond})
	start := time.Now()
	status, err := s.Send(context.Background(), request(rc.URL, false))
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("Send took %v with a 200 ms timeout", took)
	}
	if err == nil || status != 0 || !strings.Contains(err.Error(), "no answer within") || !errors.Is(err, payment.ErrWebhookTimeout) {
		t.Fatalf("Send = %d, %v; want 0 and payment.ErrWebhookTimeout", status, err)
	}
}

func TestSendFollowsNoRedirect(t *testing.T) {
	target := newReceiver(t, func(w http.ResponseWriter, r *http.Request) {})
	for _, code := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target.URL+"/elsewhere", code)
		})
		status, err := webhookhttp.NewFenced(t, webhookhttp.Config{TestModeLocal: true}).Send(context.Background(), request(rc.URL, false))
		if err != nil || status != code {
			t.Errorf("Send to a %d = %d, %v; want %d, nil", code, status, err, code)
		}
	}
	if n := target.count(); n != 0 {
		t.Errorf("the redirect's target got %d requests", n)
	}
}

func TestSendReadsLittleOfAHugeBody(t *testing.T) {
	var written atomic.Int64
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		chunk := bytes.Repeat([]byte("x"), 32<<10)
		for range 32 << 10 { // up to 1 GiB
			n, err := w.Write(chunk)
			written.Add(int64(n))
			if err != nil {
				return
			}
		}
	})
	s := webhookhttp.NewFenced(t, webhookhttp.Config{TestModeLocal: true, Timeout: 10 * time.Second})
	start := time.Now()
	status, err := s.Send(context.Background(), request(rc.URL, false))
	if err != nil || status != http.StatusOK {
		t.Fatalf("Send = %d, %v; want 200, nil", status, err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("Send took %v: it read the whole body", took)
	}
	// What was written before the connection closed is what the kernel's
	// buffers held beyond the 64 KiB read: megabytes at most, not the GiB.
	if n := written.Load(); n > 256<<20 {
		t.Errorf("the receiver wrote %d bytes: the body was read to its end", n)
	}
}

// TestSendErrorsDoNotEchoTheAnswer: an answer that is not HTTP is not
// quoted in the error (net/http's own error would quote its first line).
func TestSendErrorsDoNotEchoTheAnswer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 4096)
				_, _ = c.Read(buf)
				_, _ = c.Write([]byte("SECRET-ANSWER not http at all\r\n\r\n"))
			}()
		}
	}()
	status, err := webhookhttp.NewFenced(t, webhookhttp.Config{TestModeLocal: true}).Send(context.Background(), request("http://"+l.Addr().String()+"/", false))
	if err == nil || status != 0 {
		t.Fatalf("Send = %d, %v; want an error", status, err)
	}
	if strings.Contains(err.Error(), "SECRET") {
		t.Errorf("the error quotes the answer: %v", err)
	}
}

// refusedAtDial checks that a Send was refused for its address before
// any connection was made.
func refusedAtDial(t *testing.T, what string, status int, err error) {
	t.Helper()
	if !errors.Is(err, payment.ErrWebhookAddress) || status != 0 {
		t.Errorf("%s: Send = %d, %v; want payment.ErrWebhookAddress", what, status, err)
		return
	}
	if msg := err.Error(); !strings.Contains(msg, "refused at dial") || !strings.Contains(msg, "not an address webhooks may reach") {
		t.Errorf("%s: error %q does not say it was refused for its address", what, msg)
	}
}

// TestLiveRefusesLocalAddresses: a live-mode delivery to a loopback or
// private address is refused when the dialer is about to connect, whether
// the URL names an IP literal or a name that resolves to one, even where
// test mode may reach them; nothing reaches the receiver, and the error
// says why.
func TestLiveRefusesLocalAddresses(t *testing.T) {
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request) {})
	_, port, _ := net.SplitHostPort(rc.Listener.Addr().String())
	urls := []string{rc.URL, "http://localhost:" + port + "/", "http://[::1]:" + port + "/", "http://[::ffff:127.0.0.1]:" + port + "/",
		"http://0.0.0.0:" + port + "/", "http://10.0.0.1:" + port + "/", "http://192.168.1.1/", "http://100.64.0.1/",
		"http://[fd12:3456::1]/", "http://169.254.169.254/latest/meta-data/"}
	s := webhookhttp.NewFenced(t, webhookhttp.Config{TestModeLocal: true, Timeout: 2 * time.Second})
	for _, u := range urls {
		status, err := s.Send(context.Background(), request(u, true))
		refusedAtDial(t, "live "+u, status, err)
	}
	if n := rc.count(); n != 0 {
		t.Errorf("the receiver got %d requests", n)
	}
}

// TestNeverLinkLocalOrMetadata: no delivery of either mode, even on a
// gateway whose test mode may reach local receivers, connects to a
// link-local or cloud metadata address, "this network", an unspecified,
// multicast or broadcast one, however written: the dialer's Control
// refuses it before any packet is sent. The receiver listens on loopback,
// where 0.0.0.0 and :: would reach it.
func TestNeverLinkLocalOrMetadata(t *testing.T) {
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request) {})
	_, port, _ := net.SplitHostPort(rc.Listener.Addr().String())
	urls := []string{"http://169.254.169.254/latest/meta-data/", "http://169.254.0.1:" + port + "/", "http://[fe80::1]:" + port + "/",
		"http://[fe80::1%25lo]:" + port + "/", "http://[::ffff:169.254.169.254]/", "http://[::ffff:a9fe:a9fe]/",
		"http://[64:ff9b::a9fe:a9fe]/", "http://[fd00:ec2::254]/", "http://100.100.100.200/", "http://0.0.0.0:" + port + "/",
		"http://0.1.2.3:" + port + "/", "http://[::]:" + port + "/", "http://[::ffff:0.0.0.0]:" + port + "/", "http://224.0.0.1/",
		"http://239.255.255.250:1900/", "http://[ff02::1]/", "http://255.255.255.255/", "http://240.0.0.1/", "http://192.0.2.1/"}
	s := webhookhttp.NewFenced(t, webhookhttp.Config{TestModeLocal: true, Timeout: 2 * time.Second})
	for _, u := range urls {
		for _, live := range []bool{false, true} {
			status, err := s.Send(context.Background(), request(u, live))
			refusedAtDial(t, fmt.Sprintf("%s (live %v)", u, live), status, err)
		}
	}
	if n := rc.count(); n != 0 {
		t.Errorf("the receiver got %d requests", n)
	}
}

// TestTestModeLocalOff: on a gateway whose test mode may not reach local
// receivers, a test-mode delivery to loopback (a literal, or localhost,
// which only the dialer resolves) is refused at dial.
func TestTestModeLocalOff(t *testing.T) {
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request) {})
	_, port, _ := net.SplitHostPort(rc.Listener.Addr().String())
	s := webhookhttp.NewFenced(t, webhookhttp.Config{Timeout: 2 * time.Second})
	for _, u := range []string{rc.URL, "http://localhost:" + port + "/", "http://[::ffff:127.0.0.1]:" + port + "/"} {
		status, err := s.Send(context.Background(), request(u, false))
		refusedAtDial(t, "test "+u, status, err)
	}
	if n := rc.count(); n != 0 {
		t.Errorf("the receiver got %d requests", n)
	}
}

// TestLiveDoesNotReuseTestConnections: a connection the test-mode client
// opened to a local receiver is not lent to a live delivery.
func TestLiveDoesNotReuseTestConnections(t *testing.T) {
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request) {})
	s := webhookhttp.NewFenced(t, webhookhttp.Config{TestModeLocal: true})
	if status, err := s.Send(context.Background(), request(rc.URL, false)); err != nil || status != http.StatusOK {
		t.Fatalf("test-mode Send = %d, %v", status, err)
	}
	if _, err := s.Send(context.Background(), request(rc.URL, true)); !errors.Is(err, payment.ErrWebhookAddress) {
		t.Fatalf("live Send after a test-mode one = %v; want payment.ErrWebhookAddress", err)
	}
	if n := rc.count(); n != 1 {
		t.Errorf("the receiver got %d requests, want the test-mode one", n)
	}
}

// fakeLookup resolves the names it knows, and fails the test for any
// other.
func fakeLookup(t *testing.T, names map[string][]string) func(context.Context, string) ([]netip.Addr, error) {
	return func(_ context.Context, host string) ([]netip.Addr, error) {
		addrs, ok := names[host]
		if !ok {
			t.Errorf("CheckURL looked up %q", host)
			return nil, errors.New("no such host")
		}
		var out []netip.Addr
		for _, a := range addrs {
			out = append(out, netip.MustParseAddr(a))
		}
		if len(out) == 0 {
			return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
		}
		return out, nil
	}
}

// TestCheckURL: at registration, a URL whose host is, or resolves to, an
// address the mode may not reach is payment.ErrWebhookAddress; one whose
// name does not resolve now is left to the dial.
func TestCheckURL(t *testing.T) {
	names := map[string][]string{
		"shop.example": {"93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"},
		"meta.example": {"169.254.169.254"}, "mapped-meta.example": {"::ffff:169.254.169.254"},
		"v6-meta.example": {"fe80::a9fe:a9fe"}, "aws-v6-meta.example": {"fd00:ec2::254"},
		"half.example": {"93.184.215.14", "169.254.169.254"}, "lan.example": {"192.168.1.10"},
		"home.example": {"127.0.0.1"}, "cgnat.example": {"100.64.1.1"}, "zero.example": {"0.0.0.0"},
		"multicast.example": {"224.0.0.251"}, "gone.example": {},
	}
	type refused struct{ live, test, testLocal bool }
	for u, w := range map[string]refused{
		"https://shop.example/hooks":            {false, false, false},
		"https://93.184.215.14/hooks":           {false, false, false},
		"https://gone.example/":                 {false, false, false},
		"not a url":                             {false, false, false},
		"http://169.254.169.254/latest/":        {true, true, true},
		"http://[::ffff:169.254.169.254]/":      {true, true, true},
		"http://[fe80::1]/":                     {true, true, true},
		"http://[fe80::1%25eth0]/":              {true, true, true},
		"http://0.0.0.0:8080/":                  {true, true, true},
		"http://0.1.2.3/":                       {true, true, true},
		"http://[::]/":                          {true, true, true},
		"http://224.0.0.1/":                     {true, true, true},
		"http://[ff02::1]/":                     {true, true, true},
		"http://meta.example/":                  {true, true, true},
		"http://mapped-meta.example/":           {true, true, true},
		"http://v6-meta.example/":               {true, true, true},
		"http://aws-v6-meta.example/":           {true, true, true},
		"http://half.example/":                  {true, true, true},
		"http://zero.example/":                  {true, true, true},
		"http://multicast.example/":             {true, true, true},
		"http://127.0.0.1:8081/webhooks/kessai": {true, true, false},
		"http://[::1]/":                         {true, true, false},
		"http://home.example/":                  {true, true, false},
		"http://10.1.2.3/":                      {true, true, false},
		"http://lan.example/":                   {true, true, false},
		"http://[fd12::1]/":                     {true, true, false},
		"http://cgnat.example/":                 {true, true, false},
	} {
		for _, c := range []struct {
			name            string
			live, testLocal bool
			want            bool
		}{{"live", true, true, w.live}, {"test", false, false, w.test}, {"test with local receivers", false, true, w.testLocal}} {
			s := webhookhttp.NewFenced(t, webhookhttp.Config{TestModeLocal: c.testLocal, LookupHost: fakeLookup(t, names)})
			err := s.CheckURL(context.Background(), u, c.live)
			if got := errors.Is(err, payment.ErrWebhookAddress); got != c.want || err != nil && !got {
				t.Errorf("%s, %s: CheckURL = %v, want refused %v", u, c.name, err, c.want)
			}
		}
	}
}

// TestCheckURLLegacyIPv4: a host in one of the old forms of an IPv4
// address (one to three parts, octal, hex: what inet_aton and so the C
// resolver read, though Go's does not) is checked as the address it
// names, at registration, without a lookup: 2852039166 is 169.254.169.254
// to a gateway built with cgo's resolver.
func TestCheckURLLegacyIPv4(t *testing.T) {
	type refused struct{ live, test, testLocal bool }
	for u, w := range map[string]refused{
		"http://2852039166/":                  {true, true, true},
		"http://0251.0376.0251.0376/":         {true, true, true},
		"http://0xa9fea9fe/":                  {true, true, true},
		"http://0XA9.0XFE.0XA9.0XFE/":         {true, true, true},
		"http://169.254.43518/":               {true, true, true},
		"http://169.16689662/":                {true, true, true},
		"http://0/":                           {true, true, true},
		"http://2130706433:8080/":             {true, true, false},
		"http://0177.0.0.1/":                  {true, true, false},
		"http://127.1/":                       {true, true, false},
		"http://012.1.2.3/":                   {true, true, false},
		"http://1572394766/":                  {false, false, false},
		"http://0x5d.0xb8.0xd7.0x0e/webhooks": {false, false, false},
	} {
		for _, c := range []struct {
			name            string
			live, testLocal bool
			want            bool
		}{{"live", true, true, w.live}, {"test", false, false, w.test}, {"test with local receivers", false, true, w.testLocal}} {
			s := webhookhttp.NewFenced(t, webhookhttp.Config{TestModeLocal: c.testLocal, LookupHost: fakeLookup(t, nil)})
			err := s.CheckURL(context.Background(), u, c.live)
			if got := errors.Is(err, payment.ErrWebhookAddress); got != c.want || err != nil && !got {
				t.Errorf("%s, %s: CheckURL = %v, want refused %v", u, c.name, err, c.want)
			}
		}
	}
	// Names that only look numeric are names: they are looked up.
	names := map[string][]string{"1.2.3.4.5": {"93.184.215.14"}, "0x1g": {"93.184.215.14"}, "08.1.2.3": {"93.184.215.14"}, "1e100.net": {"93.184.215.14"}}
	for host := range names {
		s := webhookhttp.NewFenced(t, webhookhttp.Config{LookupHost: fakeLookup(t, names)})
		if err := s.CheckURL(context.Background(), "https://"+host+"/", true); err != nil {
			t.Errorf("%s: CheckURL = %v, want it looked up and allowed", host, err)
		}
	}
}

// TestDNSRebinding: a name that resolved to a public address when the
// webhook was registered and to a loopback one when a delivery is made
// is refused at dial. The registration's resolver says what an attacker's
// DNS said then; the dialer asks the system's, which says localhost is
// loopback.
func TestDNSRebinding(t *testing.T) {
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request) {})
	_, port, _ := net.SplitHostPort(rc.Listener.Addr().String())
	u := "http://localhost:" + port + "/hooks"
	s := webhookhttp.NewFenced(t, webhookhttp.Config{Timeout: 2 * time.Second, LookupHost: fakeLookup(t, map[string][]string{"localhost": {"93.184.215.14"}})})
	for _, live := range []bool{true, false} {
		if err := s.CheckURL(context.Background(), u, live); err != nil {
			t.Fatalf("CheckURL while the name is public: %v", err)
		}
		status, err := s.Send(context.Background(), request(u, live))
		refusedAtDial(t, fmt.Sprintf("re-bound name (live %v)", live), status, err)
	}
	if n := rc.count(); n != 0 {
		t.Errorf("the receiver got %d requests", n)
	}
}

func TestSendRefusesOtherSchemes(t *testing.T) {
	s := webhookhttp.NewFenced(t, webhookhttp.Config{TestModeLocal: true})
	for _, u := range []string{"ftp://example.com/", "file:///etc/passwd", "/relative", "http://"} {
		if _, err := s.Send(context.Background(), request(u, false)); err == nil {
			t.Errorf("Send to %q succeeded", u)
		}
	}
}

func TestSendStopsWithItsContext(t *testing.T) {
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	if _, err := webhookhttp.NewFenced(t, webhookhttp.Config{TestModeLocal: true}).Send(ctx, request(rc.URL, false)); !errors.Is(err, context.Canceled) {
		t.Fatalf("Send with its context canceled = %v; want context.Canceled", err)
	}
}

func TestPublic(t *testing.T) {
	for addr, want := range map[string]bool{
		"8.8.8.8": true, "1.1.1.1": true, "203.0.114.1": true, "2606:4700:4700::1111": true, "2001:4860:4860::8888": true,
		"64:ff9b::808:808": true, "::ffff:8.8.8.8": true,

		"127.0.0.1": false, "127.8.9.10": false, "::1": false, "0.0.0.0": false, "::": false, "0.1.2.3": false,
		"10.1.2.3": false, "172.16.0.1": false, "172.31.255.255": false, "192.168.1.1": false,
		"fc00::1": false, "fd12:3456::1": false, "100.64.0.1": false, "100.127.255.254": false,
		"169.254.169.254": false, "fe80::1": false, "fec0::1": false, "224.0.0.1": false, "239.255.255.250": false,
		"ff02::1": false, "255.255.255.255": false, "240.0.0.1": false, "192.0.2.1": false, "198.51.100.7": false,
		"203.0.113.9": false, "198.18.0.1": false, "192.0.0.8": false, "2001:db8::1": false, "2002:a00:1::1": false,
		"2001::1": false, "::ffff:127.0.0.1": false, "::ffff:10.0.0.1": false, "64:ff9b::a00:1": false,
		"64:ff9b::7f00:1": false, "::127.0.0.1": false, "3fff::1": false,
	} {
		if got := webhookhttp.Public(netip.MustParseAddr(addr)); got != want {
			t.Errorf("Public(%s) = %v, want %v", addr, got, want)
		}
	}
}

func TestLocal(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1": true, "127.8.9.10": true, "::1": true, "::ffff:127.0.0.1": true, "10.1.2.3": true, "172.16.0.1": true,
		"172.31.255.255": true, "192.168.1.1": true, "::ffff:192.168.1.1": true, "fc00::1": true, "fd12:3456::1": true,
		"100.64.0.1": true, "100.127.255.254": true, "::ffff:100.64.0.1": true,

		"8.8.8.8": false, "2001:4860:4860::8888": false, "169.254.169.254": false, "169.254.0.1": false, "fe80::1": false,
		"fe80::1%eth0": false, "::ffff:169.254.169.254": false, "fd00:ec2::254": false, "100.100.100.200": false,
		"::ffff:100.100.100.200": false,
		"0.0.0.0":                false, "0.1.2.3": false, "::": false, "224.0.0.1": false, "ff02::1": false, "255.255.255.255": false,
		"172.32.0.1": false, "100.128.0.1": false, "::127.0.0.1": false, "64:ff9b::7f00:1": false, "192.0.2.1": false,
	} {
		if got := webhookhttp.Local(netip.MustParseAddr(addr)); got != want {
			t.Errorf("Local(%s) = %v, want %v", addr, got, want)
		}
	}
}
