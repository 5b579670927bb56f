package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/gateway"
	"github.com/kessai/kessai/server/gateway/gatewaytest"
	"github.com/kessai/kessai/server/kessaitest"
	"github.com/kessai/kessai/server/limit"
	"github.com/kessai/kessai/server/payment"
)

// hookHTTP is the webhook calls' client.
var hookHTTP = &http.Client{Timeout: 10 * time.Second}

// hookAnswer is what the gateway answered a webhook request.
type hookAnswer struct {
	status int
	body   []byte
}

// webhookCall sends a webhook request to the gateway over HTTP as auth.
func webhookCall(t *testing.T, g *gatewaytest.Gateway, method, path, auth string, body any) hookAnswer {
	t.Helper()
	var rb io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rb = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, g.URL+path, rb)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", auth)
	req.Header.Set("Content-Type", "application/json")
	res, err := hookHTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return hookAnswer{res.StatusCode, b}
}

// refusedURL checks that an answer is 400 VALIDATION_ERROR naming url
// with reason ADDRESS_NOT_ALLOWED.
func refusedURL(t *testing.T, what string, a hookAnswer) {
	t.Helper()
	var e struct {
		Code   string `json:"code"`
		Errors []struct {
			Field  string `json:"field"`
			Reason string `json:"reason"`
		} `json:"errors"`
	}
	_ = json.Unmarshal(a.body, &e)
	if a.status != http.StatusBadRequest || e.Code != "VALIDATION_ERROR" || len(e.Errors) != 1 ||
		e.Errors[0].Field != "url" || e.Errors[0].Reason != payment.ReasonAddressNotAllowed {
		t.Errorf("%s: %d %s, want 400 VALIDATION_ERROR naming url (%s)", what, a.status, a.body, payment.ReasonAddressNotAllowed)
	}
}

// liveAuth is a live-mode app token of the demo store.
func liveAuth(t *testing.T, g *gatewaytest.Gateway) string {
	t.Helper()
	tok, err := g.Service().Access.IssueStoreAppToken(context.Background(), uuid.MustParse(g.StoreID), payment.NewAppToken{Mode: payment.ModeLive})
	if err != nil {
		t.Fatal(err)
	}
	return "Bearer " + tok.Secret + "." + tok.JWT
}

// neverAnyMode are webhook URLs no webhook may name, in either mode, on
// any gateway: link-local and metadata addresses, "this network",
// unspecified and multicast ones, however written.
var neverAnyMode = []string{
	"http://169.254.169.254/latest/meta-data/", "http://169.254.1.1:8080/", "http://[fe80::1]/",
	"http://[::ffff:169.254.169.254]/", "http://[64:ff9b::a9fe:a9fe]/", "http://[fd00:ec2::254]/", "http://100.100.100.200/",
	"http://0.0.0.0:8080/", "http://0.1.2.3/", "http://[::]/", "http://224.0.0.1/", "http://[ff02::1]/", "http://255.255.255.255/",
}

// roomyLimits lets a test make more webhook requests than the standard
// class's bursts allow, which are not what it tests.
func roomyLimits(c *gateway.Config) {
	for _, r := range []*limit.Rule{&c.Rates.Route, &c.Rates.Exact} {
		r.Burst, r.BurstRefillPerMinute, r.PerMinute = 10_000, 10_000, 10_000
	}
}

// TestWebhookRegistrationRefusesAddresses: over the API, a webhook URL
// naming an address its mode may never reach is refused when registered
// or changed (400 VALIDATION_ERROR naming url), a name by what it resolves
// to. On this gateway (its public URL loopback, as make run's) test mode
// may reach loopback and private receivers; live mode never may.
func TestWebhookRegistrationRefusesAddresses(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.Options{Configure: roomyLimits})
	sink := gatewaytest.NewHookSink(t)
	hooks := "/stores/" + g.StoreID + "/webhooks"
	hook := func(url string) map[string]any {
		return map[string]any{"triggers": []string{"charge_finished"}, "url": url}
	}
	live := liveAuth(t, g)
	for _, u := range neverAnyMode {
		refusedURL(t, "test mode, "+u, webhookCall(t, g, http.MethodPost, hooks, g.Auth, hook(u)))
		refusedURL(t, "live mode, "+u, webhookCall(t, g, http.MethodPost, hooks, live, hook(u)))
	}
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(sink.URL, "http://"))
	for _, u := range []string{sink.URL + "/kessai", "http://localhost:" + port + "/kessai", "http://10.1.2.3/kessai", "http://[fd12::1]/kessai"} {
		refusedURL(t, "live mode, "+u, webhookCall(t, g, http.MethodPost, hooks, live, hook(u)))
	}
	created := webhookCall(t, g, http.MethodPost, hooks, g.Auth, hook(sink.URL+"/kessai"))
	if created.status != http.StatusCreated {
		t.Fatalf("a test-mode webhook on loopback: %d %s", created.status, created.body)
	}
	var w struct {
		ID  string `json:"id"`
		URL string `json:"url"`
	}
	gatewaytest.MustUnmarshal(t, created.body, &w)
	for _, u := range []string{"http://169.254.169.254/latest/meta-data/", "http://[::ffff:a9fe:a9fe]/"} {
		refusedURL(t, "a change to "+u, webhookCall(t, g, http.MethodPatch, hooks+"/"+w.ID, g.Auth, map[string]any{"url": u}))
	}
	got := webhookCall(t, g, http.MethodGet, hooks+"/"+w.ID, g.Auth, nil)
	gatewaytest.MustUnmarshal(t, got.body, &w)
	if w.URL != sink.URL+"/kessai" {
		t.Errorf("after the refused changes the URL is %q", w.URL)
	}
}

// TestWebhookTestPrivateOff: on a gateway that keeps test-mode webhooks
// out of local networks (a public URL that is not loopback, or
// KESSAI_WEBHOOK_TEST_PRIVATE=false), a loopback or private URL is
// refused at registration, a name that resolves to loopback too.
func TestWebhookTestPrivateOff(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.Options{Configure: func(c *gateway.Config) {
		roomyLimits(c)
		c.WebhookTestPrivate = false
	}})
	sink := gatewaytest.NewHookSink(t)
	hooks := "/stores/" + g.StoreID + "/webhooks"
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(sink.URL, "http://"))
	for _, u := range []string{sink.URL + "/kessai", "http://localhost:" + port + "/", "http://[::1]:" + port + "/", "http://192.168.1.10/",
		"http://100.64.0.1/", "http://[fd12::1]/"} {
		refusedURL(t, u, webhookCall(t, g, http.MethodPost, hooks, g.Auth, map[string]any{"triggers": []string{"charge_finished"}, "url": u}))
	}
}

// logLine is one line of a webhook's delivery log, as the API shows it.
type logLine struct {
	ErrorMessage *string `json:"error_message"`
	Attempts     int     `json:"attempts"`
}

// firstAttempt waits until the webhook's delivery log shows an attempt
// and returns its error message.
func firstAttempt(t *testing.T, g *gatewaytest.Gateway, hookID string) string {
	t.Helper()
	var line logLine
	kessaitest.WaitFor(t, 10*time.Second, "an attempt in the delivery log of "+hookID, func() bool {
		var page struct {
			Items []logLine `json:"items"`
		}
		a := webhookCall(t, g, http.MethodGet, "/stores/"+g.StoreID+"/webhooks/"+hookID+"/events", g.Auth, nil)
		if a.status != http.StatusOK {
			t.Fatalf("the delivery log: %d %s", a.status, a.body)
		}
		gatewaytest.MustUnmarshal(t, a.body, &page)
		if len(page.Items) == 0 || page.Items[0].Attempts == 0 {
			return false
		}
		line = page.Items[0]
		return true
	})
	if line.ErrorMessage == nil {
		return ""
	}
	return *line.ErrorMessage
}

// TestWebhookDeliveryLogIsCoarse: the delivery log, which the merchant
// reads, says only "failed", "timed out", "status N" or "failed: address
// not allowed" of an attempt, so that a test-mode webhook cannot tell a
// closed port from one that resets or answers something else; and a
// webhook whose stored URL names an address no webhook may reach (written
// before the registration check, or by hand) is refused at dial, with
// nothing sent. Every receiver is on loopback, and the refused address is
// 0.0.0.0 (this network, never reachable by a webhook): were the dial's
// check broken, the connection would reach the loopback sink behind it,
// never another machine.
func TestWebhookDeliveryLogIsCoarse(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.Options{Configure: roomyLimits})
	c := &gatewaytest.Client{T: t, Base: g.URL, Auth: g.Auth, Store: g.StoreID}

	closed := fmt.Sprintf("http://127.0.0.1:%d/closed", gatewaytest.FreeTCPPort(t))
	rst, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rst.Close() })
	go func() {
		for {
			conn, err := rst.Accept()
			if err != nil {
				return
			}
			if tc, ok := conn.(*net.TCPConn); ok {
				_ = tc.SetLinger(0) // a reset, not a close
			}
			conn.Close()
		}
	}()
	garbage, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { garbage.Close() })
	go func() {
		for {
			conn, err := garbage.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				_, _ = conn.Read(make([]byte, 4096))
				_, _ = io.WriteString(conn, "SSH-2.0-OpenSSH_9.6\r\n")
			}()
		}
	}()
	busyServer := http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	})}
	busyListener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = busyServer.Serve(busyListener) }()
	t.Cleanup(func() { busyServer.Close() })
	unspecified := gatewaytest.NewHookSink(t)
	_, unspecifiedPort, _ := net.SplitHostPort(strings.TrimPrefix(unspecified.URL, "http://"))

	ids := map[string]string{}
	for name, u := range map[string]string{
		"closed": closed, "reset": "http://" + rst.Addr().String() + "/reset", "garbage": "http://" + garbage.Addr().String() + "/ssh",
		"busy": "http://" + busyListener.Addr().String() + "/busy", "unspecified": unspecified.URL + "/unspecified",
	} {
		ids[name], _ = gatewaytest.CreateWebhook(c, u, "", "charge_finished")
	}
	// The webhook's URL as a row from before the registration check holds
	// it: only the dial's check stands between it and the address.
	ctx := context.Background()
	err = g.DB().Update(ctx, func(tx payment.Tx) error {
		w, err := tx.Webhook(ctx, uuid.MustParse(ids["unspecified"]))
		if err != nil {
			return err
		}
		w.URL = "http://0.0.0.0:" + unspecifiedPort + "/unspecified"
		return tx.UpdateWebhook(ctx, w)
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, status := c.Charge(c.Token("4000020000000000"), true, 1500); status != http.StatusCreated {
		t.Fatalf("POST /charges: %d", status)
	}
	for name, want := range map[string]string{
		"closed": "failed", "reset": "failed", "garbage": "failed", "busy": "status 503", "unspecified": "failed: address not allowed",
	} {
		if got := firstAttempt(t, g, ids[name]); got != want {
			t.Errorf("%s: the delivery log says %q, want %q", name, got, want)
		}
	}
	if n := len(unspecified.Requests()); n != 0 {
		t.Errorf("the sink behind 0.0.0.0 got %d requests", n)
	}
	// The detail is the operator's, in the server log.
	if logs := g.Logs.String(); !strings.Contains(logs, "webhook attempt failed") || !strings.Contains(logs, "refused at dial") {
		t.Errorf("the server log does not hold the attempts' detail:\n%s", logs)
	}
}
