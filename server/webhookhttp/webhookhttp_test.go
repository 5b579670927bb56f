package webhookhttp_test

import (
	"bytes"
	"context"
	"errors"
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
	s := webhookhttp.New(webhookhttp.Config{})
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
	status, err := webhookhttp.New(webhookhttp.Config{}).Send(context.Background(), request(rc.URL, false))
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
	s := webhookhttp.New(webhookhttp.Config{Timeout: 200 * time.Millisecond})
	start := time.Now()
	status, err := s.Send(context.Background(), request(rc.URL, false))
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("Send took %v with a 200 ms timeout", took)
	}
	if err == nil || status != 0 || !strings.Contains(err.Error(), "no answer within") {
		t.Fatalf("Send = %d, %v; want 0 and a timeout", status, err)
	}
}

func TestSendFollowsNoRedirect(t *testing.T) {
	target := newReceiver(t, func(w http.ResponseWriter, r *http.Request) {})
	for _, code := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target.URL+"/elsewhere", code)
		})
		status, err := webhookhttp.New(webhookhttp.Config{}).Send(context.Background(), request(rc.URL, false))
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
	s := webhookhttp.New(webhookhttp.Config{Timeout: 10 * time.Second})
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
	status, err := webhookhttp.New(webhookhttp.Config{}).Send(context.Background(), request("http://"+l.Addr().String()+"/", false))
	if err == nil || status != 0 {
		t.Fatalf("Send = %d, %v; want an error", status, err)
	}
	if strings.Contains(err.Error(), "SECRET") {
		t.Errorf("the error quotes the answer: %v", err)
	}
}

// TestLiveRefusesLocalAddresses: a live-mode delivery to a loopback
// address is refused when the dialer is about to connect, whether the URL
// names an IP literal or a name that resolves to one; nothing reaches the
// receiver, and the error says why.
func TestLiveRefusesLocalAddresses(t *testing.T) {
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request) {})
	_, port, _ := net.SplitHostPort(rc.Listener.Addr().String())
	urls := []string{rc.URL, "http://localhost:" + port + "/", "http://[::1]:" + port + "/", "http://0.0.0.0:" + port + "/",
		"http://10.0.0.1:" + port + "/", "http://169.254.169.254/latest/meta-data/"}
	s := webhookhttp.New(webhookhttp.Config{Timeout: 2 * time.Second})
	for _, u := range urls {
		status, err := s.Send(context.Background(), request(u, true))
		if !errors.Is(err, webhookhttp.ErrNotPublic) || status != 0 {
			t.Errorf("live Send to %s = %d, %v; want ErrNotPublic", u, status, err)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, "refused at dial") || !strings.Contains(msg, "not a public address") {
			t.Errorf("live Send to %s: error %q does not say it was refused for its address", u, msg)
		}
	}
	if n := rc.count(); n != 0 {
		t.Errorf("the receiver got %d requests", n)
	}
}

// TestLiveDoesNotReuseTestConnections: a connection the test-mode client
// opened to a local receiver is not lent to a live delivery.
func TestLiveDoesNotReuseTestConnections(t *testing.T) {
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request) {})
	s := webhookhttp.New(webhookhttp.Config{})
	if status, err := s.Send(context.Background(), request(rc.URL, false)); err != nil || status != http.StatusOK {
		t.Fatalf("test-mode Send = %d, %v", status, err)
	}
	if _, err := s.Send(context.Background(), request(rc.URL, true)); !errors.Is(err, webhookhttp.ErrNotPublic) {
		t.Fatalf("live Send after a test-mode one = %v; want ErrNotPublic", err)
	}
	if n := rc.count(); n != 1 {
		t.Errorf("the receiver got %d requests, want the test-mode one", n)
	}
}

func TestLiveAllowPrivate(t *testing.T) {
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request) {})
	s := webhookhttp.New(webhookhttp.Config{AllowPrivate: true})
	if status, err := s.Send(context.Background(), request(rc.URL, true)); err != nil || status != http.StatusOK {
		t.Fatalf("live Send with AllowPrivate = %d, %v; want 200", status, err)
	}
}

func TestSendRefusesOtherSchemes(t *testing.T) {
	s := webhookhttp.New(webhookhttp.Config{})
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
	if _, err := webhookhttp.New(webhookhttp.Config{}).Send(ctx, request(rc.URL, false)); !errors.Is(err, context.Canceled) {
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
