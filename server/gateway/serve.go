// Package gateway is the Kessai gateway as one process runs it: its
// configuration (KESSAI_* variables and the flags that mirror them), the
// keys in its data directory, the storage engine and limiters it picks,
// and the wiring of the domain, the API, the hosted pages and the demo
// storefront into HTTP servers that start and stop in a safe order. The
// binary's main package only dispatches to it (kessai serve) and to the
// commands; tests and benchmarks start the very same gateway in process.
package gateway

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/kessai/kessai/server/aesgcm"
	"github.com/kessai/kessai/server/api"
	"github.com/kessai/kessai/server/jwt"
	"github.com/kessai/kessai/server/limit"
	"github.com/kessai/kessai/server/mail"
	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/payment/services"
	"github.com/kessai/kessai/server/prometheus"
	"github.com/kessai/kessai/server/sandbox"
	"github.com/kessai/kessai/server/sqlite"
	"github.com/kessai/kessai/server/univapay"
	"github.com/kessai/kessai/server/webhookhttp"
	"github.com/kessai/kessai/web/checkout"
	"github.com/kessai/kessai/web/console"
	"github.com/kessai/kessai/web/demo"
	"github.com/kessai/kessai/web/sandboxpages"
	"github.com/kessai/kessai/web/site"
)

// gateway is everything a running Kessai holds.
type gateway struct {
	cfg     Config
	log     *slog.Logger
	db      store
	service *services.Set
	opts    options
	// master is the key every other key is derived from (deriveKey).
	master []byte
	// throttle holds back console password guessers once serve gives it
	// its limiter.
	throttle *limitThrottle
	// mailbox keeps the console's mail when no SMTP server is configured
	// (nil when one is).
	mailbox *mail.Mailbox
	// metrics are what the service and the API count, for /metrics.
	metrics *prometheus.Metrics
}

// options are what tests change about a gateway that configuration does
// not reach. main passes none.
type options struct {
	// clock, when set, is the time every rule of the gateway reads: the
	// service's, idempotency's and the rate limiters'.
	clock payment.Clock
	// passwordCost, when set, is the bcrypt cost of console passwords
	// (payment.Config.PasswordCost); the binary's is the default.
	passwordCost int
}

type Option func(*options)

func WithClock(c payment.Clock) Option { return func(o *options) { o.clock = c } }

func WithPasswordCost(cost int) Option { return func(o *options) { o.passwordCost = cost } }

// open prepares the data directory, the store and the service.
func open(ctx context.Context, cfg Config, log *slog.Logger, opts ...Option) (*gateway, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, err
	}
	master, err := masterKey(cfg)
	if err != nil {
		return nil, err
	}
	codec, err := jwt.NewCodec(deriveKey(master, "app-token-jwt"))
	if err != nil {
		return nil, err
	}
	cardKey, retired, err := cardKeys(cfg)
	if err != nil {
		return nil, err
	}
	vault, err := aesgcm.New(cardKey, retired...)
	if err != nil {
		return nil, err
	}
	db, feed, err := openStore(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if err := checkKeys(ctx, db, master, cardKey, retired); err != nil {
		db.Close()
		return nil, err
	}
	g := &gateway{cfg: cfg, log: log, db: db, opts: o, master: master, throttle: &limitThrottle{}}
	g.metrics = prometheus.New(prometheus.Config{
		// Read at each scrape, once the service exists.
		WorkQueue: func(ctx context.Context) ([]payment.WorkQueueStats, error) {
			return g.service.Work.Stats(ctx)
		},
		WorkKinds: func() []payment.WorkKind { return g.service.Work.Kinds() },
		Clock:     g.clock(),
		Logger:    log,
	})
	g.throttle.meter = g.metrics
	transport, err := g.mailTransport()
	if err != nil {
		db.Close()
		return nil, err
	}
	g.service = services.New(db, g.clock(), codec, payment.Config{
		SecretKey:    deriveKey(master, "app-token-secret"),
		PublicOrigin: cfg.publicOrigin(),
		Vault:        vault,
		Processor:    sandbox.Processor{Latency: cfg.SandboxLatency},
		Limits:       cfg.Resources,
		WalletExpiry: cfg.WalletExpiry,
		// Another process's changes come as news (ChangeFeed); the
		// re-read is the fallback.
		LongPollRecheck: cfg.PollRecheck,
		// An event's data is what a GET of its resource answers.
		EncodeEvent:   univapay.EncodeEvent,
		WebhookSender: webhookhttp.New(webhookhttp.Config{TestModeLocal: cfg.WebhookTestPrivate}),
		ChangeFeed:    feed,
		Throttle:      g.throttle,
		ResetMailer:   mail.Resets{Transport: transport, From: cfg.MailFrom},
		Logger:        log,
		Meter:         g.metrics,
		PasswordCost:  o.passwordCost,
	})
	return g, nil
}

// OpenService opens what a gateway serves from (its keys, its store and
// the payment service over them) without serving, for a command that works
// on the store while a gateway may run on it (kessai apptoken). closeStore
// closes the store.
func OpenService(ctx context.Context, cfg Config, log *slog.Logger) (svc *services.Set, closeStore func() error, err error) {
	g, err := open(ctx, cfg, log)
	if err != nil {
		return nil, nil, err
	}
	return g.service, g.db.Close, nil
}

func (g *gateway) clock() payment.Clock {
	if g.opts.clock != nil {
		return g.opts.clock
	}
	return payment.SystemClock{}
}

// limitClock is the rate limiters' clock. Without a test's clock it is nil,
// which gives them the process clock with its monotonic reading: a step of
// the wall clock must not refill or drain a bucket.
func (g *gateway) limitClock() limit.Clock {
	if g.opts.clock != nil {
		return g.opts.clock
	}
	return nil
}

// Logger writes the gateway's log to w at the configured level, as
// slog's text (key=value, for people) or, with KESSAI_LOG_FORMAT=json,
// one JSON object a line with the same keys (for log shippers).
func (c Config) Logger(w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: c.LogLevel}
	if c.LogFormat == logJSON {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

func Run(ctx context.Context, cfg Config) error {
	return serveTo(ctx, cfg, os.Stdout, os.Stderr)
}

// serveTo runs the gateway until ctx ends, printing the banner to out and
// logging to logOut.
func serveTo(ctx context.Context, cfg Config, out, logOut io.Writer) error {
	r, err := Start(ctx, cfg, cfg.Logger(logOut))
	if err != nil {
		return err
	}
	return r.Run(ctx, out)
}

// Running is a started gateway: its HTTP servers serve on bound listeners
// and its background work is under way.
type Running struct {
	*gateway
	creds      *Credentials
	servers    []*http.Server
	errc       chan error
	background *background
	limiters   limiters
	// lock is the data directory's while on the embedded store (LockDir).
	lock io.Closer
}

// Credentials are the demo account's, as written to CredentialsFile; nil
// when a process on a shared database did not seed it.
func (r *Running) Credentials() *Credentials { return r.creds }

// unlock releases the data directory's lock, once the store is closed.
func (r *Running) unlock() {
	if r.lock != nil {
		r.lock.Close()
	}
}

// Start opens the gateway and starts everything it runs: the background
// work, then the HTTP servers on ports bound before it returns. What it
// started is stopped again when it fails.
func Start(ctx context.Context, cfg Config, log *slog.Logger, opts ...Option) (_ *Running, err error) {
	// A gateway on the embedded store holds the data directory's lock,
	// so that kessai migrate cannot copy the store while it takes charges
	// (nor a second gateway run on it).
	var lock io.Closer
	if cfg.DatabaseURL == "" {
		l, err := sqlite.LockDir(cfg.DataDir)
		if errors.Is(err, sqlite.ErrLocked) {
			return nil, fmt.Errorf("another process (a gateway, or kessai migrate) is using the embedded store in %s", cfg.DataDir)
		}
		if err != nil {
			return nil, err
		}
		lock = l
	}
	g, err := open(ctx, cfg, log, opts...)
	if err != nil {
		if lock != nil {
			lock.Close()
		}
		return nil, err
	}
	r := &Running{gateway: g, background: newBackground(), lock: lock}
	defer func() {
		if err != nil {
			r.background.stop()
			r.limiters.close()
			g.db.Close()
			r.unlock()
		}
	}()

	if r.creds, err = g.demoCredentials(ctx); err != nil {
		return nil, fmt.Errorf("first start: %w", err)
	}

	// The worker finishes what requests started (and, after a restart, what
	// a crash interrupted).
	r.background.run(func(ctx context.Context) { g.service.Work.RunWorker(ctx, time.Second, log) })

	// News from the other processes on the same database (PostgreSQL).
	r.background.run(func(ctx context.Context) { g.service.DB.RunChangeFeed(ctx, log) })

	lims, err := r.openLimiters(ctx)
	if err != nil {
		return nil, err
	}
	r.limiters = lims
	g.throttle.set(lims.signIn)
	idempotency := payment.NewIdempotency(g.db, g.clock(), payment.IdempotencyConfig{
		FingerprintKey: deriveKey(g.master, "idempotency-fingerprint"),
		LockTimeout:    cmp.Or(cfg.IdempotencyLockTimeout, defaultIdempotencyLockTimeout),
		Meter:          g.metrics,
	})
	r.background.run(func(ctx context.Context) {
		sweepEvery(ctx, time.Hour, log, "idempotency keys", idempotency.Sweep)
	})
	// One middleware chain for the API and the pages (api.Server.Layers
	// names it).
	apiServer := api.New(api.Config{
		Service: g.service, Logger: log, PublicOrigin: cfg.publicOrigin(), PollWait: cfg.PollWait,
		Idempotency: idempotency,
		RateLimits:  api.RateLimits{Limiter: lims.api, Rules: cfg.Rates, TrustedProxies: cfg.TrustedProxies},
		PageLimits:  api.PageLimits{Limiter: lims.pages, PerMinute: cfg.PageRatePerMinute},
		Readiness:   lims.readiness,
		Meter:       g.metrics, PageRoutes: slices.Concat(checkout.Paths, sandboxpages.Paths, console.Paths),
		// nil but in a build for the crash test (crashpoint.go).
		BeforeIdempotentAnswerStored: crashpoint(log),
	})
	// The widget's WebAssembly is compressed while the gateway already
	// serves it (uncompressed until then).
	r.background.run(func(ctx context.Context) {
		if err := site.CompressLargeAssets(ctx); err != nil && ctx.Err() == nil {
			log.Error("compressing static files", "error", err)
		}
	})
	pageKey := deriveKey(g.master, "hosted-page-sessions")
	checkoutPages, err := checkout.New(checkout.Config{Service: g.service.Pages(), PublicURL: cfg.PublicURL, Logger: log, SessionKey: pageKey})
	if err != nil {
		return nil, err
	}
	sandboxPages, err := sandboxpages.New(sandboxpages.Config{Service: g.service.Pages(), PublicURL: cfg.PublicURL, Logger: log, SessionKey: pageKey})
	if err != nil {
		return nil, err
	}
	consolePages, err := console.New(console.Config{
		Service: g.service.Pages(), PublicURL: cfg.PublicURL, Logger: log, SessionKey: pageKey,
		ClientIP: func(r *http.Request) string { return api.ClientIP(r, cfg.TrustedProxies) },
		Mailbox:  g.consoleMailbox(),
	})
	if err != nil {
		return nil, err
	}
	gatewayMux := http.NewServeMux()
	gatewayMux.Handle("/", apiServer)
	for _, pages := range []struct {
		paths   []string
		handler http.Handler
	}{{checkout.Paths, checkoutPages}, {sandboxpages.Paths, sandboxPages}, {console.Paths, consolePages}} {
		pagesHandler := apiServer.Pages(pages.handler)
		for _, prefix := range pages.paths {
			gatewayMux.Handle(prefix, pagesHandler)
		}
	}
	metricsAccess := prometheus.Access{Local: metricsLocal(cfg.TrustedProxies), Token: cfg.MetricsToken}
	gatewayMux.Handle("/metrics", g.metrics.Handler(metricsAccess))
	r.servers = []*http.Server{newHTTPServer(cfg.Addr, gatewayMux, log)}
	// The event streams (kessai listen) never go idle: a shutdown ends them
	// rather than wait its whole timeout on them.
	r.servers[0].RegisterOnShutdown(apiServer.EndStreams)
	if cfg.DemoAddr != "" && r.creds == nil {
		log.Warn("the demo storefront is off: this process has no demo credentials")
	}
	if cfg.DemoAddr != "" && r.creds != nil {
		demo, err := demo.New(demo.Config{
			GatewayURL: cfg.PublicURL, JWT: r.creds.JWT, Secret: r.creds.Secret, StoreID: r.creds.StoreID,
			DataDir: cfg.DataDir, Logger: log,
			// Its webhook, registered once the gateway listens, pays an
			// order the shopper never comes back to the shop for.
			WebhookURL: cfg.DemoOrigin() + demo.WebhookPath, Background: r.background.run,
		})
		if err != nil {
			return nil, err
		}
		r.servers = append(r.servers, newHTTPServer(cfg.DemoAddr, apiServer.Pages(demo), log))
		if demoHost, _, _ := net.SplitHostPort(cfg.DemoAddr); !cfg.WebhookTestPrivate && !publicIP(demoHost) {
			log.Warn("the demo storefront's webhook is on this machine, which test-mode webhooks may not reach here " +
				"(the public URL is not loopback, or KESSAI_WEBHOOK_TEST_PRIVATE=false): its registration will be refused")
		}
	}
	if cfg.MetricsAddr != "" {
		// Its own listener is for a network only the operator's Prometheus
		// reaches: open to it, unless a token is configured.
		if cfg.MetricsToken == "" {
			metricsAccess.Local = func(*http.Request) bool { return true }
		}
		metricsMux := http.NewServeMux()
		metricsMux.Handle("/metrics", g.metrics.Handler(metricsAccess))
		r.servers = append(r.servers, newHTTPServer(cfg.MetricsAddr, metricsMux, log))
	}
	if cfg.PprofAddr != "" {
		// Off by default, loopback only (LoadConfig), and a listener of its
		// own: the public one never serves a profile.
		r.servers = append(r.servers, newHTTPServer(cfg.PprofAddr, pprofHandler(), log))
		log.Warn("serving profiles (net/http/pprof)", "pprof_addr", cfg.PprofAddr)
	}

	// Bind every port before saying anything, so that what is printed is
	// already reachable.
	listeners := make([]net.Listener, 0, len(r.servers))
	for _, srv := range r.servers {
		l, err := net.Listen("tcp", srv.Addr)
		if err != nil {
			for _, l := range listeners {
				l.Close()
			}
			return nil, err
		}
		listeners = append(listeners, l)
	}
	r.errc = make(chan error, len(r.servers))
	for i, srv := range r.servers {
		go func() {
			if err := srv.Serve(listeners[i]); !errors.Is(err, http.ErrServerClosed) {
				r.errc <- err
			}
		}()
	}
	return r, nil
}

// Run prints the banner and serves until ctx ends or a server fails, then
// shuts the gateway down.
func (r *Running) Run(ctx context.Context, out io.Writer) error {
	printBanner(out, r.cfg, r.creds)
	r.log.Info("kessai started", "addr", r.cfg.Addr, "demo_addr", r.cfg.DemoAddr, "data_dir", r.cfg.DataDir)

	var err error
	select {
	case <-ctx.Done():
	case err = <-r.errc:
	}
	// SIGTERM: stop accepting, let requests in flight finish, exit 0.
	r.log.Info("shutting down")
	err = errors.Join(err, r.shutdown())
	r.log.Info("stopped")
	return err
}

// shutdown stops the gateway in the one safe order:
//
//  1. the HTTP servers stop accepting and let the requests in flight
//     finish (for up to ShutdownTimeout; then their connections are cut),
//     so that nothing they accepted is left half-done;
//  2. the background work stops, and shutdown waits for all of it: the
//     worker hands back what it holds and the sweepers return, because
//     every one of them uses the store;
//  3. the reset mails under way are sent;
//  4. the store closes, with nothing left to use it.
func (r *Running) shutdown() error {
	ctx, cancel := context.WithTimeout(context.Background(), r.cfg.ShutdownTimeout)
	defer cancel()
	var err error
	for _, srv := range r.servers {
		if serr := srv.Shutdown(ctx); serr != nil {
			err = errors.Join(err, serr, srv.Close())
		}
	}
	r.background.stop()
	// Reset links asked for just before SIGTERM still go out (each send
	// gives up after a minute).
	r.service.Console.WaitForMail()
	err = errors.Join(err, r.limiters.close(), r.db.Close())
	r.unlock()
	return err
}

// background runs the goroutines of a gateway that serve no request (the
// worker and the sweepers) and stops them together, so that shutdown can
// wait for every one before closing the store they use.
type background struct {
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func newBackground() *background {
	ctx, cancel := context.WithCancel(context.Background())
	return &background{ctx: ctx, cancel: cancel}
}

// run starts f, which must return soon after its ctx ends.
func (b *background) run(f func(ctx context.Context)) {
	b.wg.Go(func() { f(b.ctx) })
}

// stop ends what run started and returns once all of it has returned.
func (b *background) stop() {
	b.cancel()
	b.wg.Wait()
}

// sweepEvery runs a clean-up at every interval until ctx ends.
func sweepEvery(ctx context.Context, interval time.Duration, log *slog.Logger, what string, sweep func(context.Context) (int, error)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if n, err := sweep(ctx); err != nil {
				log.Error("sweep", "what", what, "error", err)
			} else if n > 0 {
				log.Debug("sweep", "what", what, "removed", n)
			}
		}
	}
}

// pprofHandler serves net/http/pprof's pages under /debug/pprof/ on a mux
// of its own (the package also registers them on http.DefaultServeMux,
// which Kessai never serves).
func pprofHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}

func newHTTPServer(addr string, h http.Handler, log *slog.Logger) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		// Long polls hold a request for a few seconds; the write timeout
		// leaves them room.
		WriteTimeout: 60 * time.Second,
		IdleTimeout:  120 * time.Second,
		ErrorLog:     slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}

// Credentials is demo-credentials.json.
type Credentials struct {
	APIURL          string `json:"api_url"`
	MerchantID      string `json:"merchant_id"`
	StoreID         string `json:"store_id"`
	JWT             string `json:"jwt"`
	Secret          string `json:"secret"`
	ConsoleEmail    string `json:"console_email"`
	ConsolePassword string `json:"console_password"`
	DemoURL         string `json:"demo_url,omitempty"`
}

const CredentialsFile = "demo-credentials.json"

// demoDomains are the origins the demo token is good for: the storefront,
// however the local browser names it.
func (g *gateway) demoDomains() []string {
	origin := g.cfg.DemoOrigin()
	if origin == "" {
		return nil
	}
	_, port, _ := net.SplitHostPort(origin[len("http://"):])
	host := origin[len("http://"):]
	domains := []string{host}
	if h, _, _ := net.SplitHostPort(host); h == "127.0.0.1" || h == "localhost" {
		domains = []string{net.JoinHostPort("127.0.0.1", port), net.JoinHostPort("localhost", port)}
	}
	return domains
}

// demoCredentials seeds the demo account on first start, or reuses the one
// saved by an earlier start. Secrets are only ever in that file, so when
// it is lost or its token was revoked, fresh ones are issued.
func (g *gateway) demoCredentials(ctx context.Context) (*Credentials, error) {
	path := filepath.Join(g.cfg.DataDir, CredentialsFile)
	demo, err := g.service.Console.SeedDemo(ctx, g.demoDomains())
	if err != nil {
		return nil, err
	}
	if demo == nil {
		saved, err := ReadCredentials(path)
		if err == nil && g.savedTokenUsable(ctx, saved) {
			saved.APIURL, saved.DemoURL = g.cfg.PublicURL, g.cfg.DemoOrigin()
			return saved, writeCredentials(path, saved)
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			g.log.Warn("demo credentials unreadable", "path", path, "error", err)
		}
		if g.cfg.DatabaseURL != "" {
			// A database that processes share was seeded by one of them.
			// Renewing here would reset the demo console password under
			// the others and spend one of the store's app tokens at every
			// start of a process with a fresh data directory, until the
			// 21st could not start at all.
			g.log.Warn("the database was seeded by another process: its demo credentials are in that process's data directory; "+
				"copy its "+CredentialsFile+" here, or issue a token with kessai apptoken create", "path", path)
			return nil, nil
		}
		g.log.Warn("issuing new demo credentials", "path", path)
		if demo, err = g.service.Console.RenewDemo(ctx, g.demoDomains()); err != nil {
			return nil, err
		}
	}
	c := &Credentials{
		APIURL:          g.cfg.PublicURL,
		MerchantID:      demo.MerchantID.String(),
		StoreID:         demo.StoreID.String(),
		JWT:             demo.Token.JWT,
		Secret:          demo.Token.Secret,
		ConsoleEmail:    demo.ConsoleEmail,
		ConsolePassword: demo.ConsolePassword,
		DemoURL:         g.cfg.DemoOrigin(),
	}
	return c, writeCredentials(path, c)
}

func (g *gateway) savedTokenUsable(ctx context.Context, c *Credentials) bool {
	caller, err := g.service.Access.Authenticate(ctx, "Bearer "+c.Secret+"."+c.JWT, "")
	return err == nil && caller.Token().StoreID.String() == c.StoreID
}

func ReadCredentials(path string) (*Credentials, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var c Credentials
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, err
	}
	return &c, nil
}

// writeCredentials replaces the file atomically and readable only by its
// owner: it holds a secret.
func writeCredentials(path string, c *Credentials) error {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	// WriteFile keeps the mode of a file that is already there (a
	// leftover): remove it first, so the file is created 0600.
	if err := os.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func printBanner(w io.Writer, cfg Config, c *Credentials) {
	if c == nil {
		fmt.Fprintf(w, `
Kessai is running.

  API and hosted pages  %s
  Widget loader         %s/static/checkout.js

This process shares a database seeded by another one, whose data directory
holds the demo credentials (%s).

`, cfg.PublicURL, cfg.PublicURL, CredentialsFile)
		return
	}
	start := "Open the demo storefront: " + c.DemoURL
	if c.DemoURL == "" {
		start = "The demo storefront is off (KESSAI_DEMO_ADDR is empty)."
	}
	// The secret and the console password are never printed or logged:
	// terminals are shared and logs are shipped. They are in the file,
	// which only its owner can read.
	file := filepath.Join(cfg.DataDir, CredentialsFile)
	fmt.Fprintf(w, `
Kessai is running.

  %s

  API and hosted pages  %s
  API description       %s/openapi.json
  Widget loader         %s/static/checkout.js
  Merchant console      %s/console/
  Metrics               %s
  Data                  %s

Demo credentials (the secret and the password are only in %s):
  merchant_id       %s
  store_id          %s
  console login     %s
  app token (jwt)   %s

Try the API:
  AUTH="Authorization: Bearer $(jq -r '.secret + "." + .jwt' %s)"
  curl -H "$AUTH" %s/me

`, start, cfg.PublicURL, cfg.PublicURL, cfg.PublicURL, cfg.PublicURL, metricsWhere(cfg), cfg.DataDir, file,
		c.MerchantID, c.StoreID, c.ConsoleEmail, shorten(c.JWT, 20), file, cfg.PublicURL)
}

// metricsWhere says where /metrics is served and to whom, for the banner.
func metricsWhere(cfg Config) string {
	where := "http://" + cfg.Addr + "/metrics (from this machine"
	if len(cfg.TrustedProxies) > 0 {
		where += ", the trusted proxies"
	}
	if cfg.MetricsToken != "" {
		where += ", or with KESSAI_METRICS_TOKEN"
	}
	where += ")"
	if cfg.MetricsAddr != "" {
		where += " and http://" + cfg.MetricsAddr + "/metrics"
	}
	return where
}

// shorten keeps the first n characters of s and marks the cut.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// mailTransport is where the console's mail goes: the SMTP server of
// KESSAI_SMTP_URL, or else the local mailbox (and the log).
func (g *gateway) mailTransport() (mail.Transport, error) {
	if g.cfg.SMTPURL != "" {
		if g.cfg.DevMailbox {
			g.log.Warn("KESSAI_DEV_MAILBOX is ignored: mail goes out through KESSAI_SMTP_URL")
		}
		return mail.NewSMTP(g.cfg.SMTPURL, g.cfg.MailFrom)
	}
	if g.cfg.DevMailbox {
		g.log.Info("the local mailbox is on (KESSAI_DEV_MAILBOX): /console/mailbox shows reset links to a browser on this machine; for local development only")
	}
	g.mailbox = mail.NewMailbox(g.log, g.clock().Now)
	return g.mailbox, nil
}

// consoleMailbox is the mailbox the console shows: nil with SMTP, and
// unless the operator turned it on for local development (it hands out
// reset links to whoever the console takes for this machine's user). A
// nil *mail.Mailbox must not become a non-nil interface.
func (g *gateway) consoleMailbox() console.Mailbox {
	if g.mailbox == nil || !g.cfg.DevMailbox {
		return nil
	}
	return g.mailbox
}

// publicIP reports whether host is an IP address any webhook may reach.
func publicIP(host string) bool {
	a, err := netip.ParseAddr(host)
	return err == nil && webhookhttp.Public(a)
}

// metricsLocal reports whether a request comes from where /metrics is
// served without the token: this machine or a trusted proxy, as the
// address the rate limits see (api.ClientIP). A request a trusted proxy
// forwards for someone else is that someone's, so a proxy never opens the
// metrics to the internet; nor does one forwarded for a client it names in
// no readable way (api.UnknownClient, which is no address).
func metricsLocal(trusted []netip.Prefix) func(*http.Request) bool {
	return func(r *http.Request) bool {
		ip, err := netip.ParseAddr(api.ClientIP(r, trusted))
		if err != nil {
			return false
		}
		return ip.Unmap().IsLoopback() || api.TrustedProxy(ip, trusted)
	}
}
