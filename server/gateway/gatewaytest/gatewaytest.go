// Package gatewaytest starts the gateway the binary runs, in the test's
// process, and speaks its API: for the tests of the gateway, of the
// commands that work beside it (kessai listen, trigger, migrate) and of
// the binary. A gateway started here is the one `kessai serve` starts
// (gateway.Start), on free loopback ports and a fresh data directory.
package gatewaytest

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/kessai/kessai/server/gateway"
	"github.com/kessai/kessai/server/kessaitest"
	"github.com/kessai/kessai/server/sqlite"
	"github.com/kessai/kessai/server/sqlite/sqlitetest"
)

// Gateway is the gateway main runs, built and started by the same
// function (gateway.Start) on free loopback ports, for tests and
// benchmarks.
type Gateway struct {
	*gateway.Running
	// Config is what it was started with.
	Config  gateway.Config
	URL     string // the API and the hosted pages
	DemoURL string // the demo storefront, "" when it is off
	Out     *kessaitest.Buffer
	Logs    *kessaitest.Buffer
	Creds   *gateway.Credentials
	Auth    string // the demo store's "Bearer {secret}.{jwt}"
	StoreID string // the demo store's id
	Stop    func()
}

// Options change a test gateway; the zero value is the binary's defaults
// on a fresh data directory, without the demo storefront.
type Options struct {
	DataDir string // default: a fresh temporary directory
	Demo    bool   // serve the demo storefront on a port of its own
	// Latency is how long each sandbox acquirer call takes.
	Latency time.Duration
	Clock   *kessaitest.Clock
	// Quiet discards the log instead of keeping it (benchmarks: a line per
	// request would be measured too).
	Quiet bool
	// Configure has the last word on the configuration.
	Configure func(*gateway.Config)
	// DefaultPasswordCost hashes console passwords at the binary's bcrypt
	// cost; otherwise at bcrypt.MinCost, since the default costs a second
	// of CPU under the race detector and every start seeds the demo user.
	DefaultPasswordCost bool
}

// Start starts a gateway that serves until the returned gateway's Stop is
// called, or the test ends. It checks that the gateway leaves no goroutine
// behind, so a test using it must not run in parallel.
func Start(tb testing.TB, o Options) *Gateway {
	tb.Helper()
	kessaitest.CheckGoroutines(tb)
	cfg, opts := Config(tb, o)
	g := &Gateway{Config: cfg, Out: &kessaitest.Buffer{}, Logs: &kessaitest.Buffer{}}
	var logOut io.Writer = g.Logs
	if o.Quiet {
		logOut = io.Discard
	}
	ctx, cancel := context.WithCancel(context.Background())
	var err error
	g.Running, err = gateway.Start(ctx, cfg, cfg.Logger(logOut), opts...)
	if err != nil {
		cancel()
		tb.Fatalf("start: %v\n%s", err, g.Logs)
	}
	done := make(chan error, 1)
	go func() { done <- g.Run(ctx, g.Out) }()
	stopped := false
	g.Stop = func() {
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
	tb.Cleanup(g.Stop)

	// Start has bound the ports already; Run says so last.
	kessaitest.WaitFor(tb, 10*time.Second, "the banner", func() bool {
		return strings.Contains(g.Out.String(), "Kessai is running")
	})
	g.URL = "http://" + cfg.Addr
	if cfg.DemoAddr != "" {
		g.DemoURL = "http://" + cfg.DemoAddr
	}
	g.Creds = g.Credentials()
	g.Auth = "Bearer " + g.Creds.Secret + "." + g.Creds.JWT
	g.StoreID = g.Creds.StoreID
	return g
}

// Config is the configuration and options of a test gateway: the
// binary's defaults, read from an environment holding only what o sets, on
// free loopback ports.
func Config(tb testing.TB, o Options) (gateway.Config, []gateway.Option) {
	tb.Helper()
	if o.DataDir == "" {
		// A new data directory: its embedded store starts as a copy of
		// an empty one, not migrated again (sqlitetest).
		o.DataDir = filepath.Join(tb.TempDir(), "data")
		if err := os.Mkdir(o.DataDir, 0o700); err != nil {
			tb.Fatal(err)
		}
		sqlitetest.Place(tb, filepath.Join(o.DataDir, sqlite.FileName))
	}
	ClearEnv(tb)
	tb.Setenv("KESSAI_DATA_DIR", o.DataDir)
	tb.Setenv("KESSAI_ADDR", fmt.Sprintf("127.0.0.1:%d", FreeTCPPort(tb)))
	demoAddr := ""
	if o.Demo {
		demoAddr = fmt.Sprintf("127.0.0.1:%d", FreeTCPPort(tb))
	}
	tb.Setenv("KESSAI_DEMO_ADDR", demoAddr)
	tb.Setenv("KESSAI_LOG_LEVEL", "debug")
	cfg, err := gateway.LoadConfig(nil)
	if err != nil {
		tb.Fatal(err)
	}
	cfg.SandboxLatency = o.Latency
	if o.Configure != nil {
		o.Configure(&cfg)
	}
	var opts []gateway.Option
	if o.Clock != nil {
		opts = append(opts, gateway.WithClock(o.Clock))
	}
	if !o.DefaultPasswordCost {
		opts = append(opts, gateway.WithPasswordCost(bcrypt.MinCost))
	}
	return cfg, opts
}

// NumericVars are every numeric and duration variable of the
// configuration, with whether it is a duration.
var NumericVars = []struct {
	Name     string
	Duration bool
}{
	{"KESSAI_POLL_WAIT", true},
	{"KESSAI_POLL_RECHECK", true},
	{"KESSAI_SANDBOX_LATENCY", true},
	{"KESSAI_DUPLICATE_WINDOW", true},
	{"KESSAI_IDEMPOTENCY_LOCK_TIMEOUT", true},
	{"KESSAI_RATE_CHARGE_BURST", false},
	{"KESSAI_RATE_CHARGE_REFILL_PER_MINUTE", false},
	{"KESSAI_RATE_CHARGE_PER_MINUTE", false},
	{"KESSAI_RATE_ROUTE_BURST", false},
	{"KESSAI_RATE_ROUTE_REFILL_PER_MINUTE", false},
	{"KESSAI_RATE_ROUTE_PER_MINUTE", false},
	{"KESSAI_RATE_EXACT_BURST", false},
	{"KESSAI_RATE_EXACT_REFILL_PER_MINUTE", false},
	{"KESSAI_RATE_EXACT_PER_MINUTE", false},
	{"KESSAI_RATE_MAX_KEYS", false},
	{"KESSAI_LIMIT_APP_TOKENS", false},
	{"KESSAI_LIMIT_TEST_CHARGES_PER_DAY", false},
	{"KESSAI_PAGE_RATE_PER_MINUTE", false},
}

// ClearEnv unsets every KESSAI_ variable for the test, so that the
// machine's environment does not leak in.
func ClearEnv(t testing.TB) {
	t.Helper()
	for _, v := range NumericVars {
		t.Setenv(v.Name, "")
	}
	for _, name := range []string{"KESSAI_DATABASE_URL", "KESSAI_REDIS_URL", "KESSAI_TRUSTED_PROXIES",
		"KESSAI_SIGNING_KEY", "KESSAI_CARD_KEY", "KESSAI_RETIRED_CARD_KEYS", "KESSAI_PUBLIC_URL",
		"KESSAI_WEBHOOK_ALLOW_PRIVATE", "KESSAI_WEBHOOK_TEST_PRIVATE", "KESSAI_PPROF_ADDR", "KESSAI_REDIS_PREFIX", "KESSAI_SMTP_URL", "KESSAI_MAIL_FROM", "KESSAI_LOG_FORMAT",
		"KESSAI_METRICS_ADDR", "KESSAI_METRICS_TOKEN", "KESSAI_DEV_MAILBOX"} {
		t.Setenv(name, "")
	}
	t.Setenv("KESSAI_ADDR", "127.0.0.1:8080")
	t.Setenv("KESSAI_DEMO_ADDR", "127.0.0.1:8081")
	t.Setenv("KESSAI_LOG_LEVEL", "info")
}

// FreeTCPPort is a loopback port nothing listens on (now).
func FreeTCPPort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
