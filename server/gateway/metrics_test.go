package gateway_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/kessai/kessai/server/gateway"
	"github.com/kessai/kessai/server/gateway/gatewaytest"
	"github.com/kessai/kessai/server/kessaitest"
	"github.com/kessai/kessai/server/limit"
)

// scrape reads /metrics from base as Prometheus would, failing the test
// unless it answers 200 in the text format.
func scrape(t *testing.T, base string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET /metrics: %d %s", resp.StatusCode, body)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("GET /metrics: Content-Type %q, want Prometheus's text format", ct)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}
	return families
}

// sample is the value of the series of family whose labels include want
// (a counter's value, a histogram's count), and whether there is one.
func sample(families map[string]*dto.MetricFamily, family string, want map[string]string) (float64, bool) {
	f := families[family]
	if f == nil {
		return 0, false
	}
	for _, m := range f.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		match := true
		for k, v := range want {
			if labels[k] != v {
				match = false
			}
		}
		if !match {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue(), true
		case m.Gauge != nil:
			return m.GetGauge().GetValue(), true
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount()), true
		}
	}
	return 0, false
}

// TestMetricsCountPayments takes a charge, a refund, a decline and a 429
// through the running gateway, then scrapes /metrics from loopback and
// finds each counted under its route template and outcome, with the
// queue, storage, runtime and process metrics beside them.
func TestMetricsCountPayments(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.Options{Configure: func(c *gateway.Config) {
		// Four charge-class requests (two tokens, two charges), then 429.
		c.Rates.Charge = limit.Rule{Burst: 4, BurstRefillPerMinute: 1, PerMinute: 4}
	}})
	sink := gatewaytest.NewHookSink(t)
	c := &gatewaytest.Client{T: t, Base: g.URL, Auth: g.Auth, Store: g.StoreID}
	gatewaytest.CreateWebhook(c, sink.URL+"/kessai", "Bearer sink-secret", "charge_finished")

	paid, status := c.Charge(c.Token("4000020000000000"), true, 1500)
	if status != http.StatusCreated {
		t.Fatalf("POST /charges: %d", status)
	}
	declined, status := c.Charge(c.Token("4111111111111111"), true, 1500)
	if status != http.StatusCreated {
		t.Fatalf("POST /charges (declined card): %d", status)
	}
	if got := c.WaitCharge(paid, 10*time.Second, "successful"); got != "successful" {
		t.Fatalf("charge %s", got)
	}
	if got := c.WaitCharge(declined, 10*time.Second, "failed"); got != "failed" {
		t.Fatalf("declined charge %s", got)
	}
	refund, status := c.Refund(paid, 500)
	if status != http.StatusCreated {
		t.Fatalf("POST refunds: %d", status)
	}
	if got := c.WaitRefund(paid, refund, 10*time.Second); got != "successful" {
		t.Fatalf("refund %s", got)
	}
	if _, err := c.TryToken("4000020000000000"); err != nil {
		t.Fatal(err)
	}
	// A request with an idempotency key: its statements are timed too.
	req, err := http.NewRequest(http.MethodPatch, g.URL+"/stores/"+g.StoreID+"/charges/"+paid, strings.NewReader(`{"metadata":{"shipped":true}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", g.Auth)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", "metrics-test-patch-1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("PATCH with an idempotency key: %d", resp.StatusCode)
	}
	kessaitest.WaitFor(t, 10*time.Second, "the webhook deliveries", func() bool { return len(sink.Requests()) >= 2 })

	var families map[string]*dto.MetricFamily
	// The worker's last attempts and the deliveries are counted as they
	// commit, a moment after what the client saw.
	kessaitest.WaitFor(t, 10*time.Second, "the deliveries to be counted", func() bool {
		families = scrape(t, g.URL)
		n, _ := sample(families, "kessai_webhook_delivery_attempts_total", map[string]string{"result": "successful"})
		return n >= 2
	})

	for _, c := range []struct {
		family string
		labels map[string]string
	}{
		{"kessai_http_requests_total", map[string]string{"route": "/charges", "method": "POST", "status": "201", "class": "charge"}},
		{"kessai_http_requests_total", map[string]string{"route": "/tokens", "method": "POST", "status": "201", "class": "charge"}},
		{"kessai_http_requests_total", map[string]string{"route": "/tokens", "method": "POST", "status": "429", "class": "charge"}},
		{"kessai_http_requests_total", map[string]string{"route": "/stores/{storeId}/charges/{chargeId}/refunds", "method": "POST", "status": "201", "class": "standard"}},
		{"kessai_http_requests_total", map[string]string{"route": "/stores/{storeId}/charges/{id}", "method": "GET", "status": "200", "class": "standard"}},
		{"kessai_http_request_duration_seconds", map[string]string{"route": "/charges", "method": "POST", "class": "charge"}},
		{"kessai_rate_limit_decisions_total", map[string]string{"class": "charge", "decision": "refused"}},
		{"kessai_rate_limit_decisions_total", map[string]string{"class": "charge", "decision": "admitted"}},
		{"kessai_rate_limit_decisions_total", map[string]string{"class": "standard", "decision": "admitted"}},
		{"kessai_charges_total", map[string]string{"status": "successful", "error": ""}},
		{"kessai_charges_total", map[string]string{"status": "failed", "error": "CARD_REJECTED"}},
		{"kessai_refunds_total", map[string]string{"status": "successful", "error": ""}},
		{"kessai_work_attempts_total", map[string]string{"kind": "authorize", "result": "done"}},
		{"kessai_work_attempts_total", map[string]string{"kind": "refund", "result": "done"}},
		{"kessai_webhook_delivery_attempts_total", map[string]string{"result": "successful"}},
		{"kessai_webhook_delivery_lag_seconds", nil},
		{"kessai_storage_transaction_duration_seconds", map[string]string{"kind": "update"}},
		{"kessai_storage_transaction_duration_seconds", map[string]string{"kind": "view"}},
		{"kessai_storage_transaction_duration_seconds", map[string]string{"kind": "one_read"}},
		{"kessai_storage_transaction_duration_seconds", map[string]string{"kind": "idempotency"}},
	} {
		if n, ok := sample(families, c.family, c.labels); !ok || n < 1 {
			t.Errorf("%s%v = %v (found %v), want at least 1", c.family, c.labels, n, ok)
		}
	}
	if n, ok := sample(families, "kessai_charges_total", map[string]string{"status": "successful"}); n != 1 {
		t.Errorf("successful charges = %v (%v), want 1: the declined one is not among them", n, ok)
	}
	// The queue is read at the scrape: the work is done, so every kind
	// reads zero, and each kind is there.
	for _, kind := range []string{"authorize", "refund", "webhook_delivery"} {
		if n, ok := sample(families, "kessai_work_queue_items", map[string]string{"kind": kind, "state": "due"}); !ok || n != 0 {
			t.Errorf("kessai_work_queue_items{kind=%s,state=due} = %v (found %v), want 0", kind, n, ok)
		}
		if _, ok := sample(families, "kessai_work_queue_oldest_due_age_seconds", map[string]string{"kind": kind}); !ok {
			t.Errorf("no kessai_work_queue_oldest_due_age_seconds{kind=%s}", kind)
		}
	}
	for _, family := range []string{"go_goroutines", "go_memstats_heap_alloc_bytes", "process_resident_memory_bytes", "process_open_fds"} {
		if families[family] == nil {
			t.Errorf("no %s", family)
		}
	}
	// Nothing a client sent is a label: no id, no card number, no secret.
	text := fmt.Sprint(families)
	for _, secret := range []string{paid, declined, refund, g.StoreID, "4000020000000000", "4111111111111111", g.Creds.Secret} {
		if strings.Contains(text, secret) {
			t.Errorf("/metrics holds %q", secret)
		}
	}
}

// TestMetricsAccess serves /metrics on the API's listener to loopback and
// the trusted proxies, to a bearer of KESSAI_METRICS_TOKEN from anywhere,
// and 403 to everyone else, a trusted proxy's forwarded clients included.
func TestMetricsAccess(t *testing.T) {
	const token = "metrics-token-0123456789abcdef"
	g := gatewaytest.Start(t, gatewaytest.Options{Configure: func(c *gateway.Config) {
		c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
		c.MetricsToken = token
	}})
	h := g.Servers()[0].Handler
	for _, c := range []struct {
		name, remote, forwarded, auth string
		want                          int
	}{
		{"loopback", "127.0.0.1:5000", "", "", 200},
		{"IPv6 loopback", "[::1]:5000", "", "", 200},
		{"a trusted proxy itself", "10.1.2.3:5000", "", "", 200},
		{"another address", "203.0.113.7:5000", "", "", 403},
		{"another address claiming loopback", "203.0.113.7:5000", "127.0.0.1", "", 403},
		{"a client a trusted proxy forwards", "10.1.2.3:5000", "203.0.113.7", "", 403},
		{"another address with the token", "203.0.113.7:5000", "", "Bearer " + token, 200},
		{"another address with a wrong token", "203.0.113.7:5000", "", "Bearer " + token[:len(token)-1] + "x", 403},
		{"another address with the token's prefix", "203.0.113.7:5000", "", "Bearer " + token[:8], 403},
		{"another address with the token not as bearer", "203.0.113.7:5000", "", token, 403},
		{"another address with an API credential", "203.0.113.7:5000", "", g.Auth, 403},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
			req.RemoteAddr = c.remote
			if c.forwarded != "" {
				req.Header.Set("X-Forwarded-For", c.forwarded)
			}
			if c.auth != "" {
				req.Header.Set("Authorization", c.auth)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != c.want {
				t.Fatalf("status %d, want %d", rec.Code, c.want)
			}
			body := rec.Body.String()
			if served := strings.Contains(body, "kessai_work_queue_items"); served != (c.want == 200) {
				t.Errorf("metrics served: %v, want %v:\n%.300s", served, c.want == 200, body)
			}
		})
	}
}

// TestMetricsUnreadableForwardedFor: behind a trusted proxy (here the
// test's own client on loopback, as a proxy on the gateway's machine
// would be), a forwarded chain that names no readable client is an
// unknown client, never the proxy: /metrics answers 403 over real HTTP.
// The proxy's own request, with no chain, is still served.
func TestMetricsUnreadableForwardedFor(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.Options{Configure: func(c *gateway.Config) {
		c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	}})
	get := func(header http.Header) int {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, g.URL+"/metrics", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header = header
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode
	}
	if st := get(http.Header{}); st != http.StatusOK {
		t.Fatalf("the proxy's own request: %d, want 200", st)
	}
	for _, c := range []struct {
		name string
		h    http.Header
	}{
		{"garbage", http.Header{"X-Forwarded-For": {"garbage"}}},
		{"unknown", http.Header{"X-Forwarded-For": {"unknown"}}},
		{"empty", http.Header{"X-Forwarded-For": {""}}},
		{"garbage after a trusted hop", http.Header{"X-Forwarded-For": {"garbage, 127.0.0.1"}}},
		{"garbage in a second line", http.Header{"X-Forwarded-For": {"127.0.0.1", "garbage"}}},
		{"an address with a zone that is no interface", http.Header{"X-Forwarded-For": {"203.0.113.7%"}}},
		{"Forwarded without X-Forwarded-For", http.Header{"Forwarded": {"for=203.0.113.7"}}},
		{"X-Real-Ip without X-Forwarded-For", http.Header{"X-Real-Ip": {"203.0.113.7"}}},
	} {
		if st := get(c.h); st != http.StatusForbidden {
			t.Errorf("%s (%v): %d, want 403", c.name, c.h, st)
		}
	}
}

// TestMetricsListener serves /metrics on KESSAI_METRICS_ADDR: to anyone
// without a token, only to its bearer with one; nothing else is there.
func TestMetricsListener(t *testing.T) {
	const token = "metrics-token-0123456789abcdef"
	for _, withToken := range []bool{false, true} {
		t.Run(fmt.Sprintf("token=%v", withToken), func(t *testing.T) {
			addr := fmt.Sprintf("127.0.0.1:%d", gatewaytest.FreeTCPPort(t))
			g := gatewaytest.Start(t, gatewaytest.Options{Configure: func(c *gateway.Config) {
				c.MetricsAddr = addr
				if withToken {
					c.MetricsToken = token
				}
			}})
			var h http.Handler
			for _, srv := range g.Servers() {
				if srv.Addr == addr {
					h = srv.Handler
				}
			}
			if h == nil {
				t.Fatalf("no server on %s", addr)
			}
			get := func(path, remote, auth string) int {
				req := httptest.NewRequest(http.MethodGet, path, nil)
				req.RemoteAddr = remote
				if auth != "" {
					req.Header.Set("Authorization", auth)
				}
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				return rec.Code
			}
			want := 200
			if withToken {
				want = 403
			}
			if got := get("/metrics", "192.0.2.10:4000", ""); got != want {
				t.Errorf("GET /metrics from another address: %d, want %d", got, want)
			}
			if got := get("/metrics", "192.0.2.10:4000", "Bearer "+token); got != 200 {
				t.Errorf("GET /metrics with the token: %d, want 200", got)
			}
			if got := get("/charges", "127.0.0.1:4000", g.Auth); got != 404 {
				t.Errorf("GET /charges on the metrics listener: %d, want 404", got)
			}
			// And over the wire, as Prometheus reaches it.
			if !withToken {
				families := scrape(t, "http://"+addr)
				if families["kessai_work_queue_items"] == nil || families["go_goroutines"] == nil {
					t.Error("the metrics listener serves no kessai_work_queue_items or go_goroutines")
				}
			}
		})
	}
}

// TestConfigMetrics reads KESSAI_METRICS_ADDR and KESSAI_METRICS_TOKEN and
// refuses a token short enough to guess.
func TestConfigMetrics(t *testing.T) {
	gatewaytest.ClearEnv(t)
	t.Setenv("KESSAI_METRICS_ADDR", "127.0.0.1:9464")
	t.Setenv("KESSAI_METRICS_TOKEN", "0123456789abcdef")
	cfg, err := gateway.LoadConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.MetricsAddr != "127.0.0.1:9464" || cfg.MetricsToken != "0123456789abcdef" {
		t.Errorf("MetricsAddr %q, MetricsToken %q", cfg.MetricsAddr, cfg.MetricsToken)
	}
	for _, c := range []struct{ name, value, want string }{
		{"KESSAI_METRICS_TOKEN", "short", "KESSAI_METRICS_TOKEN"},
		{"KESSAI_METRICS_ADDR", "no-port", "KESSAI_METRICS_ADDR"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(c.name, c.value)
			if _, err := gateway.LoadConfig(nil); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s=%q: %v, want an error naming %s", c.name, c.value, err, c.want)
			}
		})
	}
}

// TestMetricsWhere: the banner says where /metrics is and to whom.
func TestMetricsWhere(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  gateway.Config
		want string
	}{
		{"default", gateway.Config{Addr: "127.0.0.1:8080"}, "http://127.0.0.1:8080/metrics (from this machine)"},
		{"behind proxies, with a token and a listener", gateway.Config{Addr: "0.0.0.0:8080", MetricsAddr: "10.0.0.5:9464", MetricsToken: "x",
			TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}},
			"http://0.0.0.0:8080/metrics (from this machine, the trusted proxies, or with KESSAI_METRICS_TOKEN) and http://10.0.0.5:9464/metrics"},
	} {
		if got := gateway.MetricsWhere(c.cfg); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
