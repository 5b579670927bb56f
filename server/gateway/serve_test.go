package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kessai/kessai/server/gateway"
	"github.com/kessai/kessai/server/gateway/gatewaytest"
	"github.com/kessai/kessai/server/kessaitest"
	"github.com/kessai/kessai/server/sqlite"
)

// checkPrivate fails unless every file is there with mode 0600.
func checkPrivate(t *testing.T, dataDir string, names ...string) {
	t.Helper()
	for _, name := range names {
		st, err := os.Stat(filepath.Join(dataDir, name))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if mode := st.Mode().Perm(); mode != 0o600 {
			t.Errorf("%s has mode %#o, want 0600", name, mode)
		}
	}
}

// privateFiles are the files of the data directory that hold secrets or
// card data: the database (sealed cards, secret hashes) and its WAL and
// shared-memory files, the two keys and the demo credentials.
var privateFiles = []string{"kessai.db", "kessai.db-wal", "kessai.db-shm", "server.key", "card.key", "demo-credentials.json"}

// TestStartKeepsSecretsPrivate: the banner and the log never show the app
// token's secret (nor the console password), only where they are; every
// file holding secrets is readable by its owner only, and the data
// directory Kessai creates is the owner's only.
func TestStartKeepsSecretsPrivate(t *testing.T) {
	dataDir := filepath.Join(t.TempDir(), "data")
	g := gatewaytest.Start(t, gatewaytest.Options{DataDir: dataDir, Demo: true})
	// While the gateway runs, SQLite's -wal and -shm files exist.
	checkPrivate(t, dataDir, privateFiles...)
	g.Stop()
	out, logs := g.Out, g.Logs
	if st, err := os.Stat(dataDir); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("data directory: %v, mode %v, want 0700", err, st.Mode().Perm())
	}
	creds, err := gateway.ReadCredentials(filepath.Join(dataDir, gateway.CredentialsFile))
	if err != nil {
		t.Fatal(err)
	}
	if creds.Secret == "" || creds.ConsolePassword == "" {
		t.Fatalf("demo credentials without a secret or password: %+v", creds)
	}
	checkQuiet := func(t *testing.T, what, text string) {
		t.Helper()
		for _, s := range []struct{ name, value string }{{"app token secret", creds.Secret}, {"console password", creds.ConsolePassword}} {
			if strings.Contains(text, s.value) {
				t.Errorf("the %s shows the %s:\n%s", what, s.name, text)
			}
		}
	}
	checkQuiet(t, "banner", out.String())
	checkQuiet(t, "log", logs.String())
	if !strings.Contains(out.String(), filepath.Join(dataDir, gateway.CredentialsFile)) {
		t.Errorf("the banner does not say where the credentials are:\n%s", out)
	}

	// A later start (reusing the credentials) is as quiet, and tightens
	// files that an older version or a hand left readable by others.
	for _, name := range []string{"kessai.db", "server.key", "card.key", "demo-credentials.json"} {
		if err := os.Chmod(filepath.Join(dataDir, name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	g = gatewaytest.Start(t, gatewaytest.Options{DataDir: dataDir, Demo: true})
	checkPrivate(t, dataDir, privateFiles...)
	g.Stop()
	out, logs = g.Out, g.Logs
	checkQuiet(t, "second banner", out.String())
	checkQuiet(t, "second log", logs.String())
	again, err := gateway.ReadCredentials(filepath.Join(dataDir, gateway.CredentialsFile))
	if err != nil || again.Secret != creds.Secret {
		t.Errorf("the second start did not reuse the credentials: %v", err)
	}
}

// TestGatewayReadsTestClock: a clock passed to the fixture is the one the
// gateway's rules read, so tests of time-dependent rules can move it.
func TestGatewayReadsTestClock(t *testing.T) {
	at := time.Date(2030, 5, 6, 7, 8, 9, 0, time.UTC)
	g := gatewaytest.Start(t, gatewaytest.Options{Clock: kessaitest.NewClock(at)})
	post := func(path, body string) map[string]any {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, g.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", g.Auth)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(res.Body).Decode(&out); err != nil || res.StatusCode != http.StatusCreated {
			t.Fatalf("POST %s: %d %v %v", path, res.StatusCode, out, err)
		}
		return out
	}
	tok := post("/tokens", `{"payment_type":"card","type":"one_time","email":"clock@example.com",`+
		`"data":{"cardholder":"TARO YAMADA","card_number":"4000020000000000","exp_month":12,"exp_year":2035,"cvv":"123"}}`)
	ch := post("/charges", `{"transaction_token_id":"`+tok["id"].(string)+`","amount":1000,"currency":"JPY"}`)
	if got, _ := ch["created_on"].(string); !strings.HasPrefix(got, "2030-05-06T07:08:09") {
		t.Errorf("charge created_on %q, want the test clock's %v", got, at)
	}
	http.DefaultClient.CloseIdleConnections()
}

// TestServeHoldsDataDirLock: a gateway on the embedded store holds the
// data directory's lock, so a second one on the same directory refuses to
// start, and releases it when it stops.
func TestServeHoldsDataDirLock(t *testing.T) {
	dataDir := filepath.Join(t.TempDir(), "data")
	g := gatewaytest.Start(t, gatewaytest.Options{DataDir: dataDir})
	cfg, _ := gatewaytest.Config(t, gatewaytest.Options{DataDir: dataDir})
	if r, err := gateway.Start(context.Background(), cfg, cfg.Logger(&bytes.Buffer{})); err == nil {
		r.Shutdown()
		t.Fatal("a second gateway started on the embedded store a gateway is running on")
	} else if !strings.Contains(err.Error(), "another process") {
		t.Errorf("second gateway: %v", err)
	}
	g.Stop()
	l, err := sqlite.LockDir(dataDir)
	if err != nil {
		t.Fatalf("the stopped gateway still holds the lock: %v", err)
	}
	l.Close()
}
