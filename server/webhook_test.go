package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kessai/kessai/server/kessaitest"
	"github.com/kessai/kessai/server/payment"
)

// TestConfigWebhookTestPrivate: test-mode webhooks may reach loopback and
// private receivers by default only on a gateway whose public URL is
// loopback; KESSAI_WEBHOOK_TEST_PRIVATE changes either default. The old
// KESSAI_WEBHOOK_ALLOW_PRIVATE (live mode to private networks) stops the
// gateway when true: live mode never may now.
func TestConfigWebhookTestPrivate(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		args []string
		want bool
	}{
		{nil, nil, true}, // KESSAI_ADDR 127.0.0.1:8080
		{map[string]string{"KESSAI_PUBLIC_URL": "http://localhost:8080"}, nil, true},
		{map[string]string{"KESSAI_PUBLIC_URL": "http://[::1]:8080/"}, nil, true},
		{map[string]string{"KESSAI_PUBLIC_URL": "http://kessai.localhost"}, nil, true},
		{map[string]string{"KESSAI_PUBLIC_URL": "https://pay.example.com"}, nil, false},
		{map[string]string{"KESSAI_PUBLIC_URL": "http://10.0.0.5:8080"}, nil, false},
		{map[string]string{"KESSAI_PUBLIC_URL": "http://localhost.example.com"}, nil, false},
		{map[string]string{"KESSAI_ADDR": "0.0.0.0:8080"}, nil, false},
		{map[string]string{"KESSAI_WEBHOOK_TEST_PRIVATE": "false"}, nil, false},
		{map[string]string{"KESSAI_WEBHOOK_TEST_PRIVATE": " 0 "}, nil, false},
		{map[string]string{"KESSAI_PUBLIC_URL": "https://pay.example.com", "KESSAI_WEBHOOK_TEST_PRIVATE": "true"}, nil, true},
		{map[string]string{"KESSAI_PUBLIC_URL": "https://pay.example.com"}, []string{"--webhook-test-private=true"}, true},
		{nil, []string{"--webhook-test-private=false"}, false},
		{map[string]string{"KESSAI_WEBHOOK_ALLOW_PRIVATE": "false"}, nil, true},
	} {
		clearConfigEnv(t)
		for k, v := range c.env {
			t.Setenv(k, v)
		}
		cfg, err := loadConfig(c.args)
		if err != nil || cfg.WebhookTestPrivate != c.want {
			t.Errorf("%v %v: %v, %v; want %v", c.env, c.args, cfg.WebhookTestPrivate, err, c.want)
		}
	}
	for name, value := range map[string]string{"KESSAI_WEBHOOK_TEST_PRIVATE": "sometimes", "KESSAI_WEBHOOK_ALLOW_PRIVATE": "true"} {
		clearConfigEnv(t)
		t.Setenv(name, value)
		if _, err := loadConfig(nil); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s=%s: %v, want an error naming it", name, value, err)
		}
	}
}

// hookSink is a merchant's webhook receiver in the test process. hold,
// while set, keeps each request it gets unanswered until released (or the
// gateway is gone).
type hookSink struct {
	*httptest.Server
	mu      sync.Mutex
	got     []sunk
	hold    bool
	arrived chan struct{}
	release chan struct{}
}

type sunk struct {
	header http.Header
	body   []byte
	// answered is false for a request the sink held.
	answered bool
}

func newHookSink(t *testing.T) *hookSink {
	s := &hookSink{arrived: make(chan struct{}, 100), release: make(chan struct{})}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		hold := s.hold
		s.got = append(s.got, sunk{header: r.Header.Clone(), body: body, answered: !hold})
		s.mu.Unlock()
		s.arrived <- struct{}{}
		if hold {
			select {
			case <-s.release:
			case <-r.Context().Done():
			}
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(func() {
		close(s.release)
		s.Close()
	})
	return s
}

func (s *hookSink) requests() []sunk {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]sunk(nil), s.got...)
}

func (s *hookSink) setHold(hold bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hold = hold
}

// createWebhook makes a store webhook through the API and returns its id
// and signing secret.
func createWebhook(c *crashClient, url, authToken string, triggers ...string) (id, secret string) {
	c.t.Helper()
	var w struct {
		ID     string `json:"id"`
		Secret string `json:"secret"`
	}
	c.must(http.MethodPost, "/stores/"+c.store+"/webhooks", map[string]any{
		"triggers": triggers, "url": url, "auth_token": authToken,
	}, &w, http.StatusCreated)
	if w.ID == "" || !strings.HasPrefix(w.Secret, "whsec_") {
		c.t.Fatalf("created webhook %+v", w)
	}
	return w.ID, w.Secret
}

// checkSunk checks one delivery the sink got: the event, the webhook's
// auth_token, the signature, and data equal to what GET getPath answers.
func checkSunk(c *crashClient, s sunk, event, authToken, secret, getPath string) {
	c.t.Helper()
	var e struct {
		ID        string          `json:"id"`
		Event     string          `json:"event"`
		Data      json.RawMessage `json:"data"`
		CreatedOn string          `json:"created_on"`
	}
	mustUnmarshal(c.t, s.body, &e)
	if e.Event != event || e.ID == "" || e.CreatedOn == "" {
		c.t.Errorf("delivery %s, want a %s event", s.body, event)
	}
	if got := s.header.Get("Authorization"); got != authToken {
		c.t.Errorf("Authorization %q, want %q", got, authToken)
	}
	if err := payment.VerifyWebhook(secret, s.header.Get("webhook-id"), s.header.Get("webhook-timestamp"),
		s.header.Get("webhook-signature"), s.body, time.Now(), 5*time.Minute); err != nil {
		c.t.Errorf("signature: %v", err)
	}
	req, _ := http.NewRequest(http.MethodGet, c.base+getPath, nil)
	req.Header.Set("Authorization", c.auth)
	res, err := crashHTTP.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	var want, got bytes.Buffer
	if err := json.Compact(&want, body); err != nil {
		c.t.Fatalf("GET %s: %v: %s", getPath, err, body)
	}
	if err := json.Compact(&got, e.Data); err != nil {
		c.t.Fatal(err)
	}
	if !bytes.Equal(want.Bytes(), got.Bytes()) {
		c.t.Errorf("the event's data\n%s\nis not what GET %s answers\n%s", got.Bytes(), getPath, want.Bytes())
	}
}

// TestGatewayDeliversWebhooks: the gateway as main starts it renders
// events with the API's encoder and posts them over HTTP: a charge made
// through the API reaches a webhook made through the API, signed, with
// the charge as GET answers it.
func TestGatewayDeliversWebhooks(t *testing.T) {
	g := startGateway(t, gatewayOptions{})
	sink := newHookSink(t)
	c := &crashClient{t: t, base: g.url, auth: g.auth, store: g.storeID}
	_, secret := createWebhook(c, sink.URL+"/kessai", "Bearer sink-secret", "charge_finished")

	id, status := c.charge(c.token("4000020000000000"), true, 1500)
	if status != http.StatusCreated {
		t.Fatalf("POST /charges: %d", status)
	}
	kessaitest.WaitFor(t, 10*time.Second, "the charge_finished delivery", func() bool { return len(sink.requests()) > 0 })
	got := sink.requests()
	if len(got) != 1 {
		t.Fatalf("the sink got %d deliveries, want 1", len(got))
	}
	checkSunk(c, got[0], "charge_finished", "Bearer sink-secret", secret, "/stores/"+c.store+"/charges/"+id)
	if ua := got[0].header.Get("User-Agent"); !strings.Contains(ua, "Kessai") {
		t.Errorf("User-Agent %q", ua)
	}
}

// TestWebhookSurvivesCrash kills the gateway (SIGKILL) while the delivery
// of a committed charge's event is under way, unanswered; the restarted
// gateway delivers it, with the same webhook-id (at least once), once the
// dead instance's claim on it has run out.
//
// It builds the real binary, so it is skipped under -short.
func TestWebhookSurvivesCrash(t *testing.T) {
	// It waits on processes of its own, on ports and in directories of
	// its own, beside the other tests that do.
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the gateway binary")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool on PATH to build the gateway")
	}
	tmp := t.TempDir()
	bin := gatewayBinary(t, goTool)
	dataDir := filepath.Join(tmp, "data")
	port := freeTCPPort(t)
	gw := startCrashGateway(t, bin, dataDir, port, "first")
	creds := gw.credentials(t)
	c := &crashClient{t: t, base: "http://" + gw.addr, auth: "Bearer " + creds.Secret + "." + creds.JWT, store: creds.StoreID}

	sink := newHookSink(t)
	sink.setHold(true)
	_, secret := createWebhook(c, sink.URL+"/kessai", "Bearer crash-sink", "charge_finished")
	id, status := c.charge(c.token("4000020000000000"), true, 1700)
	if status != http.StatusCreated {
		t.Fatalf("POST /charges: %d", status)
	}
	if st := c.waitCharge(id, 10*time.Second, "successful"); st != "successful" {
		t.Fatalf("charge %s: %s", id, st)
	}
	select {
	case <-sink.arrived:
	case <-time.After(10 * time.Second):
		t.Fatal("the delivery did not start before the kill")
	}
	gw.kill(t)
	sink.setHold(false)
	if got := sink.requests(); len(got) != 1 || got[0].answered {
		t.Fatalf("before the restart the sink got %d requests (answered: %v), want the one held", len(got), len(got) > 0 && got[0].answered)
	}
	firstID := sink.requests()[0].header.Get("webhook-id")

	start := time.Now()
	gw = startCrashGateway(t, bin, dataDir, port, "second")
	kessaitest.WaitFor(t, 40*time.Second, "the delivery after the restart", func() bool { return len(sink.requests()) >= 2 })
	t.Logf("delivered %v after the restart", time.Since(start).Round(time.Millisecond))
	got := sink.requests()
	if len(got) != 2 || !got[1].answered {
		t.Fatalf("the sink got %d requests, want the held one and one more", len(got))
	}
	if again := got[1].header.Get("webhook-id"); again != firstID {
		t.Errorf("the redelivery's webhook-id %q is not the first attempt's %q", again, firstID)
	}
	checkSunk(c, got[1], "charge_finished", "Bearer crash-sink", secret, "/stores/"+c.store+"/charges/"+id)
	gw.terminate(t)
}
