package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kessai/kessai/server/gateway/gatewaytest"
	"github.com/kessai/kessai/server/kessaitest"
	"github.com/kessai/kessai/server/kessaitest/signaturetest"
)

// hookHTTP reads what the API answers, to compare a delivery with.
var hookHTTP = &http.Client{Timeout: 10 * time.Second}

// checkSunk checks one delivery the sink got: the event, the webhook's
// auth_token, the signature, and data equal to what GET getPath answers.
func checkSunk(c *gatewaytest.Client, s gatewaytest.Sunk, event, authToken, secret, getPath string) {
	c.T.Helper()
	var e struct {
		ID        string          `json:"id"`
		Event     string          `json:"event"`
		Data      json.RawMessage `json:"data"`
		CreatedOn string          `json:"created_on"`
	}
	gatewaytest.MustUnmarshal(c.T, s.Body, &e)
	if e.Event != event || e.ID == "" || e.CreatedOn == "" {
		c.T.Errorf("delivery %s, want a %s event", s.Body, event)
	}
	if got := s.Header.Get("Authorization"); got != authToken {
		c.T.Errorf("Authorization %q, want %q", got, authToken)
	}
	if err := signaturetest.Verify(secret, s.Header.Get("webhook-id"), s.Header.Get("webhook-timestamp"),
		s.Header.Get("webhook-signature"), s.Body, time.Now(), 5*time.Minute); err != nil {
		c.T.Errorf("signature: %v", err)
	}
	req, _ := http.NewRequest(http.MethodGet, c.Base+getPath, nil)
	req.Header.Set("Authorization", c.Auth)
	res, err := hookHTTP.Do(req)
	if err != nil {
		c.T.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	var want, got bytes.Buffer
	if err := json.Compact(&want, body); err != nil {
		c.T.Fatalf("GET %s: %v: %s", getPath, err, body)
	}
	if err := json.Compact(&got, e.Data); err != nil {
		c.T.Fatal(err)
	}
	if !bytes.Equal(want.Bytes(), got.Bytes()) {
		c.T.Errorf("the event's data\n%s\nis not what GET %s answers\n%s", got.Bytes(), getPath, want.Bytes())
	}
}

// TestGatewayDeliversWebhooks: the gateway as main starts it renders
// events with the API's encoder and posts them over HTTP: a charge made
// through the API reaches a webhook made through the API, signed, with
// the charge as GET answers it.
func TestGatewayDeliversWebhooks(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.Options{})
	sink := gatewaytest.NewHookSink(t)
	c := &gatewaytest.Client{T: t, Base: g.URL, Auth: g.Auth, Store: g.StoreID}
	_, secret := gatewaytest.CreateWebhook(c, sink.URL+"/kessai", "Bearer sink-secret", "charge_finished")

	id, status := c.Charge(c.Token("4000020000000000"), true, 1500)
	if status != http.StatusCreated {
		t.Fatalf("POST /charges: %d", status)
	}
	kessaitest.WaitFor(t, 10*time.Second, "the charge_finished delivery", func() bool { return len(sink.Requests()) > 0 })
	got := sink.Requests()
	if len(got) != 1 {
		t.Fatalf("the sink got %d deliveries, want 1", len(got))
	}
	checkSunk(c, got[0], "charge_finished", "Bearer sink-secret", secret, "/stores/"+c.Store+"/charges/"+id)
	if ua := got[0].Header.Get("User-Agent"); !strings.Contains(ua, "Kessai") {
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
	port := gatewaytest.FreeTCPPort(t)
	gw := startCrashGateway(t, bin, dataDir, port, "first")
	creds := gw.credentials(t)
	c := &gatewaytest.Client{T: t, Base: "http://" + gw.addr, Auth: "Bearer " + creds.Secret + "." + creds.JWT, Store: creds.StoreID}

	sink := gatewaytest.NewHookSink(t)
	sink.SetHold(true)
	_, secret := gatewaytest.CreateWebhook(c, sink.URL+"/kessai", "Bearer crash-sink", "charge_finished")
	id, status := c.Charge(c.Token("4000020000000000"), true, 1700)
	if status != http.StatusCreated {
		t.Fatalf("POST /charges: %d", status)
	}
	if st := c.WaitCharge(id, 10*time.Second, "successful"); st != "successful" {
		t.Fatalf("charge %s: %s", id, st)
	}
	select {
	case <-sink.Arrived:
	case <-time.After(10 * time.Second):
		t.Fatal("the delivery did not start before the kill")
	}
	gw.kill(t)
	sink.SetHold(false)
	if got := sink.Requests(); len(got) != 1 || got[0].Answered {
		t.Fatalf("before the restart the sink got %d requests (answered: %v), want the one held", len(got), len(got) > 0 && got[0].Answered)
	}
	firstID := sink.Requests()[0].Header.Get("webhook-id")

	start := time.Now()
	gw = startCrashGateway(t, bin, dataDir, port, "second")
	kessaitest.WaitFor(t, 40*time.Second, "the delivery after the restart", func() bool { return len(sink.Requests()) >= 2 })
	t.Logf("delivered %v after the restart", time.Since(start).Round(time.Millisecond))
	got := sink.Requests()
	if len(got) != 2 || !got[1].Answered {
		t.Fatalf("the sink got %d requests, want the held one and one more", len(got))
	}
	if again := got[1].Header.Get("webhook-id"); again != firstID {
		t.Errorf("the redelivery's webhook-id %q is not the first attempt's %q", again, firstID)
	}
	checkSunk(c, got[1], "charge_finished", "Bearer crash-sink", secret, "/stores/"+c.Store+"/charges/"+id)
	gw.terminate(t)
}
