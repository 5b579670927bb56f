package webhookhttp_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"testing"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/webhookhttp"
)

// proxyChildEnv marks the process TestSendIgnoresEnvironmentProxy starts
// with a proxy in its environment.
const proxyChildEnv = "KESSAI_WEBHOOKHTTP_PROXY_CHILD"

// TestSendIgnoresEnvironmentProxy: a delivery never goes through the
// proxy HTTP_PROXY names, which the dialer's check would see in place of
// the receiver: to a refused address, nothing reaches the proxy. net/http
// reads the environment's proxy once a process, so the check runs in a
// fresh one (this test binary again) started with HTTP_PROXY set to a
// loopback proxy that counts what it is sent.
func TestSendIgnoresEnvironmentProxy(t *testing.T) {
	if os.Getenv(proxyChildEnv) != "" {
		// The child: HTTP_PROXY is set; nothing in this process has read it.
		s := webhookhttp.NewFenced(t, webhookhttp.Config{TestModeLocal: true})
		for _, u := range []string{"http://169.254.169.254/latest/meta-data/", "http://[fe80::1]/"} {
			for _, live := range []bool{false, true} {
				if _, err := s.Send(context.Background(), request(u, live)); !errors.Is(err, payment.ErrWebhookAddress) {
					t.Errorf("%s (live %v): Send = %v, want payment.ErrWebhookAddress", u, live, err)
				}
			}
		}
		return
	}
	proxy := newReceiver(t, func(w http.ResponseWriter, r *http.Request) {})
	cmd := exec.Command(os.Args[0], "-test.run=^TestSendIgnoresEnvironmentProxy$", "-test.count=1")
	cmd.Env = append(os.Environ(), proxyChildEnv+"=1", "HTTP_PROXY="+proxy.URL, "http_proxy="+proxy.URL, "NO_PROXY=", "no_proxy=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("the process with HTTP_PROXY set: %v\n%s", err, out)
	}
	if n := proxy.count(); n != 0 {
		t.Errorf("the environment's proxy got %d deliveries", n)
	}
}
