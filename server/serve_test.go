package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer collects what the gateway prints or logs from its goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startGateway runs serveTo on free ports over dataDir until the returned
// stop is called, once the banner says it is running.
func startGateway(t *testing.T, dataDir string) (out, logs *lockedBuffer, stop func()) {
	t.Helper()
	clearConfigEnv(t)
	t.Setenv("KESSAI_DATA_DIR", dataDir)
	t.Setenv("KESSAI_ADDR", fmt.Sprintf("127.0.0.1:%d", freeTCPPort(t)))
	t.Setenv("KESSAI_DEMO_ADDR", fmt.Sprintf("127.0.0.1:%d", freeTCPPort(t)))
	t.Setenv("KESSAI_LOG_LEVEL", "debug")
	cfg, err := loadConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	out, logs = &lockedBuffer{}, &lockedBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serveTo(ctx, cfg, out, logs) }()
	stopped := false
	stop = func() {
		t.Helper()
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("the gateway did not stop")
		}
	}
	t.Cleanup(stop)
	deadline := time.After(30 * time.Second)
	for !strings.Contains(out.String(), "Kessai is running") {
		select {
		case err := <-done:
			stopped = true
			t.Fatalf("serve returned before the banner: %v\n%s", err, logs)
		case <-deadline:
			t.Fatalf("no banner after 30 s:\n%s\n%s", out, logs)
		case <-time.After(20 * time.Millisecond):
		}
	}
	return out, logs, stop
}

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
	out, logs, stop := startGateway(t, dataDir)
	// While the gateway runs, SQLite's -wal and -shm files exist.
	checkPrivate(t, dataDir, privateFiles...)
	stop()
	if st, err := os.Stat(dataDir); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("data directory: %v, mode %v, want 0700", err, st.Mode().Perm())
	}
	creds, err := readCredentials(filepath.Join(dataDir, credentialsFile))
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
	if !strings.Contains(out.String(), filepath.Join(dataDir, credentialsFile)) {
		t.Errorf("the banner does not say where the credentials are:\n%s", out)
	}

	// A later start (reusing the credentials) is as quiet, and tightens
	// files that an older version or a hand left readable by others.
	for _, name := range []string{"kessai.db", "server.key", "card.key", "demo-credentials.json"} {
		if err := os.Chmod(filepath.Join(dataDir, name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, logs, stop = startGateway(t, dataDir)
	checkPrivate(t, dataDir, privateFiles...)
	stop()
	checkQuiet(t, "second banner", out.String())
	checkQuiet(t, "second log", logs.String())
	again, err := readCredentials(filepath.Join(dataDir, credentialsFile))
	if err != nil || again.Secret != creds.Secret {
		t.Errorf("the second start did not reuse the credentials: %v", err)
	}
}
