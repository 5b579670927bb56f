package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/kessai/kessai/server/aesgcm"
	"github.com/kessai/kessai/server/api"
	"github.com/kessai/kessai/server/jwt"
	"github.com/kessai/kessai/server/limit"
	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/sandbox"
	"github.com/kessai/kessai/server/sqlite"
	"github.com/kessai/kessai/web"
)

// gateway is everything a running Kessai holds.
type gateway struct {
	cfg     config
	log     *slog.Logger
	db      *sqlite.DB
	service *payment.Service
	// master is the key every other key is derived from (deriveKey).
	master []byte
}

// open prepares the data directory, the store and the service.
func open(ctx context.Context, cfg config, log *slog.Logger) (*gateway, error) {
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
	db, err := sqlite.Open(ctx, filepath.Join(cfg.DataDir, sqlite.FileName))
	if err != nil {
		return nil, err
	}
	svc := payment.NewService(db, payment.SystemClock{}, codec, payment.Config{
		SecretKey:    deriveKey(master, "app-token-secret"),
		PublicOrigin: cfg.publicOrigin(),
		Vault:        vault,
		Processor:    sandbox.Processor{Latency: cfg.SandboxLatency},
		Limits:       cfg.Resources,
	})
	return &gateway{cfg: cfg, log: log, db: db, service: svc, master: master}, nil
}

func newLogger(level slog.Level) *slog.Logger {
	return newLoggerTo(os.Stderr, level)
}

func newLoggerTo(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}

func serve(ctx context.Context, cfg config) error {
	return serveTo(ctx, cfg, os.Stdout, os.Stderr)
}

// serveTo runs the gateway until ctx ends, printing the banner to out and
// logging to logOut.
func serveTo(ctx context.Context, cfg config, out, logOut io.Writer) error {
	log := newLoggerTo(logOut, cfg.LogLevel)
	g, err := open(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer g.db.Close()

	creds, err := g.demoCredentials(ctx)
	if err != nil {
		return fmt.Errorf("first start: %w", err)
	}

	// The worker finishes what requests started (and, after a restart, what
	// a crash interrupted). It stops only after the HTTP servers have
	// drained, so that nothing they accepted is left half-done.
	workerCtx, stopWorker := context.WithCancel(context.Background())
	workerDone := make(chan struct{})
	go func() {
		defer close(workerDone)
		g.service.RunWorker(workerCtx, time.Second, log)
	}()
	defer func() {
		stopWorker()
		<-workerDone
	}()

	limiter := limit.NewMemory(limit.MemoryConfig{MaxKeys: cfg.RateMaxKeys})
	go limiter.SweepEvery(workerCtx, time.Minute)
	idempotency := payment.NewIdempotency(g.db, payment.SystemClock{}, payment.IdempotencyConfig{
		FingerprintKey: deriveKey(g.master, "idempotency-fingerprint"),
		// Longer than any request may run (the write timeout), so that a
		// reservation is only taken over once its request is surely gone.
		LockTimeout: 90 * time.Second,
	})
	go sweepEvery(workerCtx, time.Hour, log, "idempotency keys", idempotency.Sweep)
	apiServer := api.New(api.Config{
		Service: g.service, Logger: log, PublicOrigin: cfg.publicOrigin(), PollWait: cfg.PollWait,
		Idempotency: idempotency,
		RateLimits:  api.RateLimits{Limiter: limiter, Rules: cfg.Rates, TrustedProxies: cfg.TrustedProxies},
	})
	// Hosted pages and static files are not API requests: they carry no
	// rate-limit headers, and a simple per-IP guard keeps them from being
	// used to hammer the gateway.
	pages := newPageGuard(cfg.PageRatePerMinute, cfg.TrustedProxies)
	go pages.sweep(workerCtx)
	gatewayPages, err := web.NewGateway(web.GatewayConfig{
		Service: g.service, PublicURL: cfg.PublicURL, Logger: log, SessionKey: deriveKey(g.master, "hosted-page-sessions"),
	})
	if err != nil {
		return err
	}
	gatewayMux := http.NewServeMux()
	gatewayMux.Handle("/", apiServer)
	for _, prefix := range web.GatewayPaths {
		gatewayMux.Handle(prefix, apiServer.Observe(pages.wrap(gatewayPages)))
	}
	servers := []*http.Server{newHTTPServer(cfg.Addr, gatewayMux, log)}
	if cfg.DemoAddr != "" {
		demo, err := web.NewDemo(web.DemoConfig{
			GatewayURL: cfg.PublicURL, JWT: creds.JWT, Secret: creds.Secret, StoreID: creds.StoreID,
			DataDir: cfg.DataDir, Logger: log,
		})
		if err != nil {
			return err
		}
		servers = append(servers, newHTTPServer(cfg.DemoAddr, apiServer.Observe(pages.wrap(demo)), log))
	}

	// Bind every port before saying anything, so that what is printed is
	// already reachable.
	listeners := make([]net.Listener, 0, len(servers))
	for _, srv := range servers {
		l, err := net.Listen("tcp", srv.Addr)
		if err != nil {
			for _, l := range listeners {
				l.Close()
			}
			return err
		}
		listeners = append(listeners, l)
	}
	errc := make(chan error, len(servers))
	for i, srv := range servers {
		go func() {
			if err := srv.Serve(listeners[i]); !errors.Is(err, http.ErrServerClosed) {
				errc <- err
			}
		}()
	}
	printBanner(out, cfg, creds)
	log.Info("kessai started", "addr", cfg.Addr, "demo_addr", cfg.DemoAddr, "data_dir", cfg.DataDir)

	select {
	case <-ctx.Done():
	case err := <-errc:
		return err
	}
	// SIGTERM: stop accepting, let requests in flight finish, exit 0.
	log.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	var shutdownErr error
	for _, srv := range servers {
		shutdownErr = errors.Join(shutdownErr, srv.Shutdown(shutdownCtx))
	}
	log.Info("stopped")
	return shutdownErr
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

// credentials is demo-credentials.json.
type credentials struct {
	APIURL          string `json:"api_url"`
	MerchantID      string `json:"merchant_id"`
	StoreID         string `json:"store_id"`
	JWT             string `json:"jwt"`
	Secret          string `json:"secret"`
	ConsoleEmail    string `json:"console_email"`
	ConsolePassword string `json:"console_password"`
	DemoURL         string `json:"demo_url,omitempty"`
}

const credentialsFile = "demo-credentials.json"

// demoDomains are the origins the demo token is good for: the storefront,
// however the local browser names it.
func (g *gateway) demoDomains() []string {
	origin := g.cfg.demoOrigin()
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
func (g *gateway) demoCredentials(ctx context.Context) (*credentials, error) {
	path := filepath.Join(g.cfg.DataDir, credentialsFile)
	demo, err := g.service.SeedDemo(ctx, g.demoDomains())
	if err != nil {
		return nil, err
	}
	if demo == nil {
		saved, err := readCredentials(path)
		if err == nil && g.savedTokenUsable(ctx, saved) {
			saved.APIURL, saved.DemoURL = g.cfg.PublicURL, g.cfg.demoOrigin()
			return saved, writeCredentials(path, saved)
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			g.log.Warn("demo credentials unreadable; issuing new ones", "path", path, "error", err)
		}
		if demo, err = g.service.RenewDemo(ctx, g.demoDomains()); err != nil {
			return nil, err
		}
	}
	c := &credentials{
		APIURL:          g.cfg.PublicURL,
		MerchantID:      demo.MerchantID.String(),
		StoreID:         demo.StoreID.String(),
		JWT:             demo.Token.JWT,
		Secret:          demo.Token.Secret,
		ConsoleEmail:    demo.ConsoleEmail,
		ConsolePassword: demo.ConsolePassword,
		DemoURL:         g.cfg.demoOrigin(),
	}
	return c, writeCredentials(path, c)
}

func (g *gateway) savedTokenUsable(ctx context.Context, c *credentials) bool {
	caller, err := g.service.Authenticate(ctx, "Bearer "+c.Secret+"."+c.JWT, "")
	return err == nil && caller.Token().StoreID.String() == c.StoreID
}

func readCredentials(path string) (*credentials, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var c credentials
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, err
	}
	return &c, nil
}

// writeCredentials replaces the file atomically and readable only by its
// owner: it holds a secret.
func writeCredentials(path string, c *credentials) error {
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

func printBanner(w io.Writer, cfg config, c *credentials) {
	start := "Open the demo storefront: " + c.DemoURL
	if c.DemoURL == "" {
		start = "The demo storefront is off (KESSAI_DEMO_ADDR is empty)."
	}
	// The secret and the console password are never printed or logged:
	// terminals are shared and logs are shipped. They are in the file,
	// which only its owner can read.
	file := filepath.Join(cfg.DataDir, credentialsFile)
	fmt.Fprintf(w, `
Kessai is running.

  %s

  API and hosted pages  %s
  Widget loader         %s/static/checkout.js
  Data                  %s

Demo credentials (the secret and the password are only in %s):
  merchant_id       %s
  store_id          %s
  console login     %s
  app token (jwt)   %s

Try the API:
  AUTH="Authorization: Bearer $(jq -r '.secret + "." + .jwt' %s)"
  curl -H "$AUTH" %s/me

`, start, cfg.PublicURL, cfg.PublicURL, cfg.DataDir, file,
		c.MerchantID, c.StoreID, c.ConsoleEmail, shorten(c.JWT, 20), file, cfg.PublicURL)
}

// shorten keeps the first n characters of s and marks the cut.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
