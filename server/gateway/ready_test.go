package gateway_test

import (
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/kessai/kessai/server/gateway"
	"github.com/kessai/kessai/server/gateway/gatewaytest"
	"github.com/kessai/kessai/server/kessaitest"
)

// tcpRelay passes connections on to target until it is cut, when it
// closes them all and refuses new ones: a Redis that goes away.
type tcpRelay struct {
	l     net.Listener
	mu    sync.Mutex
	conns []net.Conn
	cut   bool
}

func newTCPRelay(t *testing.T, target string) *tcpRelay {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &tcpRelay{l: l}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", target)
			r.mu.Lock()
			if err != nil || r.cut {
				r.mu.Unlock()
				c.Close()
				if up != nil {
					up.Close()
				}
				continue
			}
			r.conns = append(r.conns, c, up)
			r.mu.Unlock()
			go func() { io.Copy(up, c); up.Close() }()
			go func() { io.Copy(c, up); c.Close() }()
		}
	}()
	t.Cleanup(r.close)
	return r
}

func (r *tcpRelay) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cut = true
	r.l.Close()
	for _, c := range r.conns {
		c.Close()
	}
}

// TestReadyChecksRedis: a gateway whose limits are in Redis is ready while
// Redis answers and stops being ready when it goes away. (Every API
// request then answers 503, /heartbeat too: the limiter in front of them
// never admits a request uncounted.)
func TestReadyChecksRedis(t *testing.T) {
	gatewaytest.Redis(t) // the test Redis must answer first
	u, err := url.Parse(gatewaytest.RedisURL())
	if err != nil {
		t.Fatal(err)
	}
	relay := newTCPRelay(t, u.Host)
	u.Host = relay.l.Addr().String()
	g := gatewaytest.Start(t, gatewaytest.Options{Quiet: true, Configure: func(c *gateway.Config) {
		c.RedisURL = u.String()
		c.RedisPrefix = "kessai-ready-test:" + t.Name() + ":"
	}})
	status := func(path string) int {
		resp, err := http.Get(g.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if s := status("/ready"); s != http.StatusOK {
		t.Fatalf("with Redis: %d", s)
	}
	relay.close()
	kessaitest.WaitFor(t, 10*time.Second, "/ready to answer 503 without Redis", func() bool {
		return status("/ready") == http.StatusServiceUnavailable
	})
}
