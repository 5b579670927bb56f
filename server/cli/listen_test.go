package cli

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kessai/kessai/server/gateway/gatewaytest"
	"github.com/kessai/kessai/server/kessaitest"
	"github.com/kessai/kessai/server/kessaitest/signaturetest"
	"github.com/kessai/kessai/server/payment"
)

// delivered is one request the local receiver got from kessai listen.
type delivered struct {
	header http.Header
	body   []byte
}

func (d delivered) event() (id, name, dataID string) {
	id, name, dataID, _ = d.about()
	return id, name, dataID
}

// about is event and, for a bank transfer's status, the charge it is
// about (its data's own id is the status's).
func (d delivered) about() (id, name, dataID, chargeID string) {
	var b struct {
		ID    string `json:"id"`
		Event string `json:"event"`
		Data  struct {
			ID       string `json:"id"`
			ChargeID string `json:"charge_id"`
		} `json:"data"`
	}
	_ = json.Unmarshal(d.body, &b)
	return b.ID, b.Event, b.Data.ID, b.Data.ChargeID
}

// receiver is the developer's local webhook endpoint.
type receiver struct {
	*httptest.Server
	mu  sync.Mutex
	got []delivered
	// seen is signalled when a delivery arrives.
	seen chan struct{}
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{seen: make(chan struct{}, 1)}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		d := delivered{header: req.Header.Clone(), body: body}
		r.mu.Lock()
		r.got = append(r.got, d)
		r.mu.Unlock()
		select {
		case r.seen <- struct{}{}:
		default:
		}
		w.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(r.Close)
	return r
}

// waitEvent waits for the delivery of the event name about the resource
// dataID (or, for a bank transfer's status, about the charge dataID).
func (r *receiver) waitEvent(t *testing.T, name, dataID string) delivered {
	t.Helper()
	timeout := time.After(15 * time.Second)
	for {
		r.mu.Lock()
		for _, d := range r.got {
			if _, n, id, charge := d.about(); n == name && (id == dataID || name == "bank_transfer_status_updated" && charge == dataID) {
				r.mu.Unlock()
				return d
			}
		}
		r.mu.Unlock()
		select {
		case <-r.seen:
		case <-timeout:
			t.Fatalf("no %s of %s forwarded within 15 s", name, dataID)
		}
	}
}

// count is how many deliveries of an event the receiver got.
func (r *receiver) count(eventID string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, d := range r.got {
		if id, _, _ := d.event(); id == eventID {
			n++
		}
	}
	return n
}

// runListen runs `kessai listen` until the test stops it.
type runListen struct {
	out  *kessaitest.Buffer
	stop func() error
}

func startListen(t *testing.T, args ...string) *runListen {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out := &kessaitest.Buffer{}
	errc := make(chan error, 1)
	go func() { errc <- Listen(ctx, args, out) }()
	var once sync.Once
	var err error
	stop := func() error {
		once.Do(func() {
			cancel()
			select {
			case err = <-errc:
			case <-time.After(10 * time.Second):
				t.Error("listen did not stop within 10 s")
			}
		})
		return err
	}
	t.Cleanup(func() { _ = stop() })
	kessaitest.WaitFor(t, 10*time.Second, "listen to connect", func() bool {
		select {
		case err := <-errc:
			t.Fatalf("listen ended: %v\n%s", err, out)
		default:
		}
		return strings.Contains(out.String(), "Ready!")
	})
	return &runListen{out: out, stop: stop}
}

var printedSecret = regexp.MustCompile(`whsec_[A-Za-z0-9+/=]+`)

var printedID = regexp.MustCompile(`(?m)^(token|charge|refund|cancel)\s+([0-9a-f-]{36})`)

// triggered runs `kessai trigger` and returns the ids it printed.
func triggered(t *testing.T, args ...string) map[string]string {
	t.Helper()
	var out strings.Builder
	if err := Trigger(context.Background(), args, &out); err != nil {
		t.Fatalf("trigger %v: %v\n%s", args, err, out.String())
	}
	ids := map[string]string{}
	for _, m := range printedID.FindAllStringSubmatch(out.String(), -1) {
		ids[m[1]] = m[2]
	}
	return ids
}

// TestListenForwardsTriggeredEvents: kessai listen, connected to the
// gateway by one outgoing response, forwards what kessai trigger makes to
// a local receiver as a delivery would, signed with the secret it printed.
func TestListenForwardsTriggeredEvents(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.Options{})
	recv := newReceiver(t)
	token := strings.TrimPrefix(g.Auth, "Bearer ")
	l := startListen(t, "--forward-to", recv.URL+"/hooks", "--gateway", g.URL, "--token", token, "--auth-token", "Bearer local")
	secret := printedSecret.FindString(l.out.String())
	if secret == "" {
		t.Fatalf("listen printed no signing secret:\n%s", l.out)
	}
	if !strings.Contains(l.out.String(), "test-mode events") {
		t.Errorf("listen does not say the stream's mode:\n%s", l.out)
	}

	ids := triggered(t, "charge_finished", "--gateway", g.URL, "--token", token)
	if ids["token"] == "" || ids["charge"] == "" {
		t.Fatalf("trigger printed %v", ids)
	}
	d := recv.waitEvent(t, "charge_finished", ids["charge"])
	h := d.header
	if err := signaturetest.Verify(secret, h.Get("webhook-id"), h.Get("webhook-timestamp"), h.Get("webhook-signature"),
		d.body, time.Now(), 5*time.Minute); err != nil {
		t.Errorf("forwarded delivery does not verify: %v\n%v", err, h)
	}
	id, _, _ := d.event()
	if h.Get("webhook-id") != id || h.Get("Idempotency-Key") != id || h.Get("Content-Type") != "application/json" ||
		h.Get("Authorization") != "Bearer local" {
		t.Errorf("forwarded headers %v (event %s)", h, id)
	}
	var body map[string]any
	if err := json.Unmarshal(d.body, &body); err != nil {
		t.Fatal(err)
	}
	data, _ := body["data"].(map[string]any)
	if data["status"] != "successful" || data["store_id"] != g.StoreID || body["created_on"] == nil {
		t.Errorf("forwarded body: %s", d.body)
	}
	recv.waitEvent(t, "token_created", ids["token"])
	kessaitest.WaitFor(t, 5*time.Second, "the line of the event", func() bool {
		return regexp.MustCompile(`charge_finished\s+` + id + `\s+--> \[202\]`).MatchString(l.out.String())
	})

	// The other events trigger knows arrive too.
	for _, c := range []struct{ event, kind string }{
		{"charge_updated", "charge"}, {"refund_finished", "refund"}, {"cancel_finished", "cancel"},
		{"token_updated", "token"}, {"recurring_token_deleted", "token"},
	} {
		ids := triggered(t, c.event, "--gateway", g.URL, "--token", token)
		recv.waitEvent(t, c.event, ids[c.kind])
	}
	// A bank transfer's deposit: its status says it paid the charge,
	// which finished.
	ids = triggered(t, "bank_transfer_status_updated", "--gateway", g.URL, "--token", token)
	var status struct {
		Data struct {
			PaymentStatus string `json:"payment_status"`
			Amount        int    `json:"amount"`
			Deposited     int    `json:"deposited"`
			StoreID       string `json:"store_id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(recv.waitEvent(t, "bank_transfer_status_updated", ids["charge"]).body, &status); err != nil ||
		status.Data.PaymentStatus != "exact" || status.Data.Amount != 1000 || status.Data.Deposited != 1000 || status.Data.StoreID != g.StoreID {
		t.Errorf("bank_transfer_status_updated data %+v (%v)", status.Data, err)
	}
	if d := recv.waitEvent(t, "charge_finished", ids["charge"]); !strings.Contains(string(d.body), `"status":"successful"`) {
		t.Errorf("the bank transfer's charge_finished: %s", d.body)
	}
	if err := l.stop(); err != nil {
		t.Errorf("listen: %v", err)
	}
}

// TestListenResumes: after a dropped connection, listen reconnects with
// Last-Event-ID and gets what happened meanwhile, once.
func TestListenResumes(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.Options{})
	recv := newReceiver(t)
	token := strings.TrimPrefix(g.Auth, "Bearer ")
	target, _ := url.Parse(g.URL)
	var open atomic.Bool
	open.Store(true)
	var mu sync.Mutex
	var lastEventIDs []string
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.FlushInterval = -1
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/events/stream" {
			if !open.Load() {
				http.Error(w, "down", http.StatusBadGateway)
				return
			}
			mu.Lock()
			lastEventIDs = append(lastEventIDs, r.Header.Get("Last-Event-ID"))
			mu.Unlock()
		}
		rp.ServeHTTP(w, r)
	}))
	// Closed after listen stops (cleanups run last first): Close waits for
	// the stream it relays.
	t.Cleanup(proxy.Close)
	l := startListen(t, "--forward-to", recv.URL, "--gateway", proxy.URL, "--token", token, "--secret", "whsec_"+strings.Repeat("A", 32))

	first := triggered(t, "token_created", "--gateway", g.URL, "--token", token)["token"]
	d := recv.waitEvent(t, "token_created", first)
	firstEvent, _, _ := d.event()

	// The connection drops, and stays down while an event happens.
	open.Store(false)
	proxy.CloseClientConnections()
	kessaitest.WaitFor(t, 10*time.Second, "listen to notice", func() bool {
		return strings.Contains(l.out.String(), "connection lost")
	})
	second := triggered(t, "token_created", "--gateway", g.URL, "--token", token)["token"]
	open.Store(true)
	d2 := recv.waitEvent(t, "token_created", second)
	secondEvent, _, _ := d2.event()
	if err := signaturetest.Verify("whsec_"+strings.Repeat("A", 32), secondEvent, d2.header.Get("webhook-timestamp"),
		d2.header.Get("webhook-signature"), d2.body, time.Now(), time.Minute); err != nil {
		t.Errorf("with --secret: %v", err)
	}
	mu.Lock()
	got := append([]string(nil), lastEventIDs...)
	mu.Unlock()
	if len(got) < 2 || got[0] != "" || got[len(got)-1] != firstEvent {
		t.Errorf("Last-Event-ID of the connections: %q, want \"\" then %s", got, firstEvent)
	}
	time.Sleep(1500 * time.Millisecond)
	if n := recv.count(firstEvent); n != 1 {
		t.Errorf("the first event was forwarded %d times", n)
	}
	if n := recv.count(secondEvent); n != 1 {
		t.Errorf("the second event was forwarded %d times", n)
	}
	if err := l.stop(); err != nil {
		t.Errorf("listen: %v", err)
	}
}

// TestListenRefused: the stream needs a secret-bearing token; listen says
// so instead of retrying forever. A shutdown of the gateway ends streams
// at once.
func TestListenRefused(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.Options{})
	jwtOnly := g.Creds.JWT

	// The gateway refuses a browser token (no secret, from an origin).
	req, _ := http.NewRequest("GET", g.URL+"/events/stream", nil)
	req.Header.Set("Authorization", "Bearer "+jwtOnly)
	req.Header.Set("Origin", g.Config.DemoOrigin())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var env struct{ Code string }
	_ = json.NewDecoder(resp.Body).Decode(&env)
	resp.Body.Close()
	if resp.StatusCode == http.StatusOK || (env.Code != string(payment.CodeInvalidPermissions) && env.Code != string(payment.CodeInvalidDomain)) {
		t.Errorf("browser token: %d %s", resp.StatusCode, env.Code)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, tok := range []string{jwtOnly, "wrong-secret." + jwtOnly} {
		var out strings.Builder
		err := Listen(ctx, []string{"--forward-to", "http://127.0.0.1:1/hooks", "--gateway", g.URL, "--token", tok}, &out)
		if err == nil || ctx.Err() != nil {
			t.Errorf("listen with %.12s…: %v (%s)", tok, err, out.String())
		}
	}
	if err := Listen(ctx, []string{"--gateway", g.URL, "--token", g.Creds.Secret + "." + jwtOnly}, io.Discard); err == nil {
		t.Error("listen without --forward-to started")
	}
	if err := Trigger(ctx, []string{"charge_exploded", "--gateway", g.URL}, io.Discard); err == nil || !strings.Contains(err.Error(), "charge_finished") {
		t.Errorf("trigger of an unknown event: %v", err)
	}

	// A connected listener does not hold the gateway's shutdown.
	recv := newReceiver(t)
	l := startListen(t, "--forward-to", recv.URL, "--gateway", g.URL, "--token", g.Creds.Secret+"."+jwtOnly)
	start := time.Now()
	g.Stop()
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the gateway took %s to stop with a stream open", d)
	}
	kessaitest.WaitFor(t, 10*time.Second, "listen to notice", func() bool {
		return strings.Contains(l.out.String(), "connection lost")
	})
	if err := l.stop(); err != nil {
		t.Errorf("listen: %v", err)
	}
}
