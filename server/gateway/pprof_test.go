package gateway_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/kessai/kessai/server/gateway"
	"github.com/kessai/kessai/server/gateway/gatewaytest"
)

// getBody is a GET's status and body.
func getBody(t *testing.T, url string) (int, string) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, string(b)
}

// isPprof reports whether a body is one of net/http/pprof's pages.
func isPprof(body string) bool {
	return strings.Contains(body, "goroutine") && strings.Contains(body, "heap")
}

// TestPprofOffByDefault: without KESSAI_PPROF_ADDR the gateway serves no
// profiles, on no listener of its own and not on the public one.
func TestPprofOffByDefault(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.Options{})
	if g.Config.PprofAddr != "" {
		t.Fatalf("PprofAddr = %q by default, want none", g.Config.PprofAddr)
	}
	if len(g.Servers()) != 1 {
		t.Errorf("%d HTTP servers without the demo storefront, want only the gateway's", len(g.Servers()))
	}
	for _, path := range []string{"/debug/pprof/", "/debug/pprof/heap", "/debug/pprof/cmdline"} {
		if code, body := getBody(t, g.URL+path); code != http.StatusNotFound || isPprof(body) {
			t.Errorf("public GET %s: %d %.200s, want 404 without a profile", path, code, body)
		}
	}
}

// TestPprofOwnListener: with KESSAI_PPROF_ADDR the profiles are served
// there, and still not on the public listener.
func TestPprofOwnListener(t *testing.T) {
	addr := fmt.Sprintf("127.0.0.1:%d", gatewaytest.FreeTCPPort(t))
	g := gatewaytest.Start(t, gatewaytest.Options{Configure: func(c *gateway.Config) { c.PprofAddr = addr }})
	if code, body := getBody(t, "http://"+addr+"/debug/pprof/"); code != http.StatusOK || !isPprof(body) {
		t.Errorf("GET pprof listener: %d %.200s, want its index", code, body)
	}
	if code, body := getBody(t, g.URL+"/debug/pprof/"); code != http.StatusNotFound || isPprof(body) {
		t.Errorf("public GET /debug/pprof/: %d %.200s, want 404", code, body)
	}
}

// TestPprofLoopbackOnly: the profiling listener must be a loopback
// address; anything the network could reach stops the gateway.
func TestPprofLoopbackOnly(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:6060", "127.0.0.2:6060", "[::1]:6060", "localhost:6060", "[::ffff:127.0.0.1]:6060"} {
		gatewaytest.ClearEnv(t)
		t.Setenv("KESSAI_PPROF_ADDR", addr)
		if c, err := gateway.LoadConfig(nil); err != nil || c.PprofAddr != addr {
			t.Errorf("KESSAI_PPROF_ADDR=%s: %q, %v; want it accepted", addr, c.PprofAddr, err)
		}
	}
	for _, addr := range []string{":6060", "0.0.0.0:6060", "[::]:6060", "192.168.1.10:6060", "10.0.0.1:6060",
		"example.com:6060", "[fe80::1%lo]:6060", "127.0.0.1", "localhost.example.com:6060"} {
		gatewaytest.ClearEnv(t)
		t.Setenv("KESSAI_PPROF_ADDR", addr)
		if _, err := gateway.LoadConfig(nil); err == nil || !strings.Contains(err.Error(), "KESSAI_PPROF_ADDR") {
			t.Errorf("KESSAI_PPROF_ADDR=%s: %v, want refused naming the variable", addr, err)
		}
	}
	gatewaytest.ClearEnv(t)
	if _, err := gateway.LoadConfig([]string{"--pprof-addr", "0.0.0.0:6060"}); err == nil {
		t.Error("--pprof-addr 0.0.0.0:6060 accepted")
	}
}
