package gateway_test

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kessai/kessai/server/gateway"
	"github.com/kessai/kessai/server/gateway/gatewaytest"
	"github.com/kessai/kessai/server/kessaitest"
)

// mailboxGet is GET /console/mailbox over real HTTP from this machine
// with the given headers (Host among them), and what it answered.
func mailboxGet(t *testing.T, g *gatewaytest.Gateway, header http.Header) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, g.URL+"/console/mailbox", nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, values := range header {
		if strings.EqualFold(name, "Host") {
			req.Host = values[0]
			continue
		}
		req.Header[name] = values
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// requestReset asks the gateway for a reset link for the demo console
// user, and waits until the mail is in the log (it is sent away from the
// request).
func requestReset(t *testing.T, g *gatewaytest.Gateway) {
	t.Helper()
	resp, err := http.Post(g.URL+"/password_resets", "application/json",
		strings.NewReader(`{"email":"`+g.Creds.ConsoleEmail+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("POST /password_resets: %d", resp.StatusCode)
	}
	kessaitest.WaitFor(t, 10*time.Second, "the reset mail", func() bool {
		return strings.Contains(g.Logs.String(), "/console/reset/")
	})
}

// TestMailboxOffUnlessTurnedOn: without KESSAI_DEV_MAILBOX the local
// mailbox is not served, not even to this machine, and the reset pages do
// not point to it; the mail is still in the log.
func TestMailboxOffUnlessTurnedOn(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.Options{})
	requestReset(t, g)
	if st, body := mailboxGet(t, g, nil); st != http.StatusNotFound || strings.Contains(body, "/console/reset/") {
		t.Errorf("GET /console/mailbox from loopback: %d, want 404 without the link", st)
	}
	resp, err := http.Get(g.URL + "/console/reset")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if bytes.Contains(body, []byte("/console/mailbox")) {
		t.Error("the reset page points to a mailbox that is off")
	}
}

// TestMailboxRefusesProxiedRequests: with the mailbox turned on, it is
// served to a browser on this machine and to nothing a proxy passes on —
// any proxy header (each family, even empty), a Host that is not this
// machine's (a proxy that passes the public host on), or HTTP/1.0 (what
// nginx's plain proxy_pass speaks to its upstream) — over real HTTP.
func TestMailboxRefusesProxiedRequests(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.Options{Configure: func(c *gateway.Config) { c.DevMailbox = true }})
	requestReset(t, g)
	if st, body := mailboxGet(t, g, nil); st != http.StatusOK || !strings.Contains(body, "/console/reset/") {
		t.Fatalf("GET /console/mailbox from this machine: %d, want 200 with the reset link", st)
	}
	for _, host := range []string{"localhost", "127.0.0.1", "[::1]:8080", "LOCALHOST:8080", "app.localhost:1"} {
		if st, _ := mailboxGet(t, g, http.Header{"Host": {host}}); st != http.StatusOK {
			t.Errorf("Host %s: %d, want 200", host, st)
		}
	}
	refused := map[string]http.Header{
		"Forwarded":             {"Forwarded": {"for=203.0.113.7"}},
		"X-Forwarded-For":       {"X-Forwarded-For": {"203.0.113.7"}},
		"X-Forwarded-Host":      {"X-Forwarded-Host": {"pay.example.com"}},
		"an empty Forwarded":    {"Forwarded": {""}},
		"Via":                   {"Via": {"1.1 nginx"}},
		"an empty Via":          {"Via": {""}},
		"X-Real-Ip":             {"X-Real-Ip": {"203.0.113.7"}},
		"True-Client-IP":        {"True-Client-Ip": {"203.0.113.7"}},
		"CF-Connecting-IP":      {"Cf-Connecting-Ip": {"203.0.113.7"}},
		"X-Client-IP":           {"X-Client-Ip": {"203.0.113.7"}},
		"X-Cluster-Client-IP":   {"X-Cluster-Client-Ip": {"203.0.113.7"}},
		"Fastly-Client-IP":      {"Fastly-Client-Ip": {"203.0.113.7"}},
		"Cf-Ray":                {"Cf-Ray": {"8a1b2c3d4e5f-NRT"}},
		"Cdn-Loop":              {"Cdn-Loop": {"cloudflare"}},
		"X-Amzn-Trace-Id":       {"X-Amzn-Trace-Id": {"Root=1-67891233-abcdef012345678912345678"}},
		"X-Scheme":              {"X-Scheme": {"https"}},
		"Front-End-Https":       {"Front-End-Https": {"on"}},
		"X-NginX-Proxy":         {"X-Nginx-Proxy": {"true"}},
		"a public Host":         {"Host": {"pay.example.com"}},
		"a private Host":        {"Host": {"10.0.0.5:8080"}},
		"a Host under loopback": {"Host": {"localhost.evil.example"}},
		"an unspecified Host":   {"Host": {"0.0.0.0:8080"}},
	}
	for name, h := range refused {
		if st, body := mailboxGet(t, g, h); st != http.StatusNotFound || strings.Contains(body, "/console/reset/") {
			t.Errorf("%s: %d, want 404 without the link", name, st)
		}
	}

	// nginx's plain proxy_pass: HTTP/1.0, Host the upstream's own
	// address, no header of its own.
	conn, err := net.Dial("tcp", strings.TrimPrefix(g.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, "GET /console/mailbox HTTP/1.0\r\nHost: "+strings.TrimPrefix(g.URL, "http://")+"\r\nConnection: close\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound || bytes.Contains(body, []byte("/console/reset/")) {
		t.Errorf("HTTP/1.0: %d, want 404 without the link", resp.StatusCode)
	}
}

func TestConfigDevMailbox(t *testing.T) {
	gatewaytest.ClearEnv(t)
	c, err := gateway.LoadConfig(nil)
	if err != nil || c.DevMailbox {
		t.Fatalf("default: %v, %v; want off", c.DevMailbox, err)
	}
	for value, want := range map[string]bool{"true": true, "1": true, "false": false, "": false} {
		t.Setenv("KESSAI_DEV_MAILBOX", value)
		if c, err = gateway.LoadConfig(nil); err != nil || c.DevMailbox != want {
			t.Errorf("KESSAI_DEV_MAILBOX=%q: %v, %v; want %v", value, c.DevMailbox, err, want)
		}
	}
	t.Setenv("KESSAI_DEV_MAILBOX", "on please")
	if _, err = gateway.LoadConfig(nil); err == nil || !strings.Contains(err.Error(), "KESSAI_DEV_MAILBOX") {
		t.Errorf("a malformed value: %v, want an error naming the variable", err)
	}
	t.Setenv("KESSAI_DEV_MAILBOX", "")
	if c, err = gateway.LoadConfig([]string{"--dev-mailbox"}); err != nil || !c.DevMailbox {
		t.Errorf("--dev-mailbox: %v, %v", c.DevMailbox, err)
	}
}
