package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/kessai/kessai/server/kessaitest"
	"github.com/kessai/kessai/server/sqlite"
	"github.com/kessai/kessai/server/sqlite/sqlitetest"
)

// testGateway is the gateway main runs, built and started by the same
// function (start) on free loopback ports, for the tests and benchmarks of
// this package.
type testGateway struct {
	*running
	url     string // the API and the hosted pages
	demoURL string // the demo storefront, "" when it is off
	out     *kessaitest.Buffer
	logs    *kessaitest.Buffer
	auth    string // the demo store's "Bearer {secret}.{jwt}"
	storeID string // the demo store's id
	stop    func()
}

// gatewayOptions change a test gateway; the zero value is the binary's
// defaults on a fresh data directory, without the demo storefront.
type gatewayOptions struct {
	dataDir string // default: a fresh temporary directory
	demo    bool   // serve the demo storefront on a port of its own
	// latency is how long each sandbox acquirer call takes.
	latency time.Duration
	clock   *kessaitest.Clock
	// quiet discards the log instead of keeping it (benchmarks: a line per
	// request would be measured too).
	quiet bool
	// configure has the last word on the configuration.
	configure func(*config)
	// defaultPasswordCost hashes console passwords at the binary's bcrypt
	// cost; otherwise at bcrypt.MinCost, since the default costs a second
	// of CPU under the race detector and every start seeds the demo user.
	defaultPasswordCost bool
}

// startGateway starts a gateway that serves until the returned gateway's
// stop is called, or the test ends. It checks that the gateway leaves no
// goroutine behind, so a test using it must not run in parallel.
func startGateway(tb testing.TB, o gatewayOptions) *testGateway {
	tb.Helper()
	kessaitest.CheckGoroutines(tb)
	cfg, opts := testConfig(tb, o)
	g := &testGateway{out: &kessaitest.Buffer{}, logs: &kessaitest.Buffer{}}
	var logOut io.Writer = g.logs
	if o.quiet {
		logOut = io.Discard
	}
	ctx, cancel := context.WithCancel(context.Background())
	var err error
	g.running, err = start(ctx, cfg, cfg.logger(logOut), opts...)
	if err != nil {
		cancel()
		tb.Fatalf("start: %v\n%s", err, g.logs)
	}
	done := make(chan error, 1)
	go func() { done <- g.run(ctx, g.out) }()
	stopped := false
	g.stop = func() {
		tb.Helper()
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				tb.Errorf("serve: %v", err)
			}
		case <-time.After(30 * time.Second):
			tb.Fatal("the gateway did not stop within 30 s")
		}
	}
	tb.Cleanup(g.stop)

	// start has bound the ports already; run says so last.
	kessaitest.WaitFor(tb, 10*time.Second, "the banner", func() bool {
		return strings.Contains(g.out.String(), "Kessai is running")
	})
	g.url = "http://" + cfg.Addr
	if cfg.DemoAddr != "" {
		g.demoURL = "http://" + cfg.DemoAddr
	}
	g.auth = "Bearer " + g.creds.Secret + "." + g.creds.JWT
	g.storeID = g.creds.StoreID
	return g
}

// testConfig is the configuration and options of a test gateway: the
// binary's defaults, read from an environment holding only what o sets, on
// free loopback ports.
func testConfig(tb testing.TB, o gatewayOptions) (config, []option) {
	tb.Helper()
	if o.dataDir == "" {
		// A new data directory: its embedded store starts as a copy of
		// an empty one, not migrated again (sqlitetest).
		o.dataDir = filepath.Join(tb.TempDir(), "data")
		if err := os.Mkdir(o.dataDir, 0o700); err != nil {
			tb.Fatal(err)
		}
		sqlitetest.Place(tb, filepath.Join(o.dataDir, sqlite.FileName))
	}
	clearConfigEnv(tb)
	tb.Setenv("KESSAI_DATA_DIR", o.dataDir)
	tb.Setenv("KESSAI_ADDR", fmt.Sprintf("127.0.0.1:%d", freeTCPPort(tb)))
	demoAddr := ""
	if o.demo {
		demoAddr = fmt.Sprintf("127.0.0.1:%d", freeTCPPort(tb))
	}
	tb.Setenv("KESSAI_DEMO_ADDR", demoAddr)
	tb.Setenv("KESSAI_LOG_LEVEL", "debug")
	cfg, err := loadConfig(nil)
	if err != nil {
		tb.Fatal(err)
	}
	cfg.SandboxLatency = o.latency
	if o.configure != nil {
		o.configure(&cfg)
	}
	var opts []option
	if o.clock != nil {
		opts = append(opts, withClock(o.clock))
	}
	if !o.defaultPasswordCost {
		opts = append(opts, withPasswordCost(bcrypt.MinCost))
	}
	return cfg, opts
}
