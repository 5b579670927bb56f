package main

import (
	"encoding/base64"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/kessai/kessai/server/limit"
	"github.com/kessai/kessai/server/payment"
)

// config is the gateway's configuration: environment variables first,
// flags (which mirror them) on top.
type config struct {
	Addr        string
	DemoAddr    string
	DataDir     string
	PublicURL   string
	DatabaseURL string
	RedisURL    string
	LogLevel    slog.Level
	// SigningKey, when set, replaces the key generated into the data
	// directory (several instances must share one).
	SigningKey []byte
	// CardKey seals card data (AES-256, 32 bytes); RetiredCardKeys still
	// open data sealed before a rotation.
	CardKey         []byte
	RetiredCardKeys [][]byte
	ShutdownTimeout time.Duration
	// PollWait is how long ?polling=true may hold a request.
	PollWait time.Duration
	// SandboxLatency is how long each sandbox acquirer call takes.
	SandboxLatency time.Duration

	// Limits: the numbers of spec/limits.md, each configurable.
	Rates          limit.Rules
	RateMaxKeys    int
	TrustedProxies []netip.Prefix
	Resources      payment.ResourceLimits
	// PageRatePerMinute limits each client IP on the hosted pages, static
	// files and the demo storefront.
	PageRatePerMinute int
}

func env(name, fallback string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return fallback
}

func loadConfig(args []string) (config, error) {
	var c config
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.StringVar(&c.Addr, "addr", env("KESSAI_ADDR", "127.0.0.1:8080"), "API and hosted pages address (KESSAI_ADDR)")
	fs.StringVar(&c.DemoAddr, "demo-addr", env("KESSAI_DEMO_ADDR", "127.0.0.1:8081"), "demo storefront address, empty to turn it off (KESSAI_DEMO_ADDR)")
	fs.StringVar(&c.DataDir, "data-dir", env("KESSAI_DATA_DIR", "./data"), "data directory (KESSAI_DATA_DIR)")
	fs.StringVar(&c.PublicURL, "public-url", env("KESSAI_PUBLIC_URL", ""), "external base URL of the gateway (KESSAI_PUBLIC_URL)")
	fs.StringVar(&c.DatabaseURL, "database-url", env("KESSAI_DATABASE_URL", ""), "postgres:// URL to use PostgreSQL instead of SQLite (KESSAI_DATABASE_URL)")
	fs.StringVar(&c.RedisURL, "redis-url", env("KESSAI_REDIS_URL", ""), "redis:// URL for shared limits (KESSAI_REDIS_URL)")
	level := fs.String("log-level", env("KESSAI_LOG_LEVEL", "info"), "debug, info, warn or error (KESSAI_LOG_LEVEL)")
	key := fs.String("signing-key", env("KESSAI_SIGNING_KEY", ""), "hex or base64 key of at least 32 bytes (KESSAI_SIGNING_KEY)")
	cardKey := fs.String("card-key", env("KESSAI_CARD_KEY", ""), "hex or base64 AES-256 key sealing card data (KESSAI_CARD_KEY)")
	retired := fs.String("retired-card-keys", env("KESSAI_RETIRED_CARD_KEYS", ""), "comma-separated keys of earlier card-key rotations (KESSAI_RETIRED_CARD_KEYS)")
	fs.DurationVar(&c.PollWait, "poll-wait", envDuration("KESSAI_POLL_WAIT", 3*time.Second), "longest hold of a ?polling=true request (KESSAI_POLL_WAIT)")
	fs.DurationVar(&c.SandboxLatency, "sandbox-latency", envDuration("KESSAI_SANDBOX_LATENCY", 0), "simulated latency of each sandbox acquirer call (KESSAI_SANDBOX_LATENCY)")
	fs.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", 20*time.Second, "how long SIGTERM waits for requests in flight")
	c.Rates = limit.DefaultRules()
	c.Resources = payment.DefaultResourceLimits()
	for _, r := range []struct {
		name string
		rule *limit.Rule
	}{{"charge", &c.Rates.Charge}, {"route", &c.Rates.Route}, {"exact", &c.Rates.Exact}} {
		upper := strings.ToUpper(r.name)
		fs.IntVar(&r.rule.Burst, "rate-"+r.name+"-burst", envInt("KESSAI_RATE_"+upper+"_BURST", r.rule.Burst),
			r.name+" bucket burst (KESSAI_RATE_"+upper+"_BURST)")
		fs.IntVar(&r.rule.BurstRefillPerMinute, "rate-"+r.name+"-refill-per-minute",
			envInt("KESSAI_RATE_"+upper+"_REFILL_PER_MINUTE", r.rule.BurstRefillPerMinute),
			r.name+" burst refill per minute (KESSAI_RATE_"+upper+"_REFILL_PER_MINUTE)")
		fs.IntVar(&r.rule.PerMinute, "rate-"+r.name+"-per-minute", envInt("KESSAI_RATE_"+upper+"_PER_MINUTE", r.rule.PerMinute),
			r.name+" per-minute limit (KESSAI_RATE_"+upper+"_PER_MINUTE)")
	}
	fs.IntVar(&c.RateMaxKeys, "rate-max-keys", envInt("KESSAI_RATE_MAX_KEYS", limit.DefaultMaxKeys), "most rate-limit buckets held in memory (KESSAI_RATE_MAX_KEYS)")
	proxies := fs.String("trusted-proxies", env("KESSAI_TRUSTED_PROXIES", ""), "comma-separated CIDRs whose X-Forwarded-For is believed (KESSAI_TRUSTED_PROXIES)")
	fs.IntVar(&c.Resources.AppTokens, "limit-app-tokens", envInt("KESSAI_LIMIT_APP_TOKENS", c.Resources.AppTokens), "active app tokens per store and per merchant (KESSAI_LIMIT_APP_TOKENS)")
	fs.IntVar(&c.Resources.TestChargesPerDay, "limit-test-charges-per-day", envInt("KESSAI_LIMIT_TEST_CHARGES_PER_DAY", c.Resources.TestChargesPerDay), "test-mode charges per store per UTC day (KESSAI_LIMIT_TEST_CHARGES_PER_DAY)")
	fs.DurationVar(&c.Resources.DuplicateWindow, "duplicate-window", envDuration("KESSAI_DUPLICATE_WINDOW", c.Resources.DuplicateWindow), "duplicate-charge window (KESSAI_DUPLICATE_WINDOW)")
	fs.IntVar(&c.PageRatePerMinute, "page-rate-per-minute", envInt("KESSAI_PAGE_RATE_PER_MINUTE", 600), "hosted-page requests per client IP per minute (KESSAI_PAGE_RATE_PER_MINUTE)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if err := c.Rates.Validate(); err != nil {
		return c, err
	}
	if c.Resources.AppTokens < 1 || c.Resources.TestChargesPerDay < 1 || c.PageRatePerMinute < 1 || c.RateMaxKeys < 1 {
		return c, errors.New("resource limits, page rate and rate-limit key cap must be at least 1")
	}
	for _, p := range strings.Split(*proxies, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		prefix, err := netip.ParsePrefix(p)
		if err != nil {
			addr, aerr := netip.ParseAddr(p)
			if aerr != nil {
				return c, fmt.Errorf("KESSAI_TRUSTED_PROXIES: %w", err)
			}
			prefix = netip.PrefixFrom(addr, addr.BitLen())
		}
		c.TrustedProxies = append(c.TrustedProxies, prefix.Masked())
	}
	if err := c.LogLevel.UnmarshalText([]byte(*level)); err != nil {
		return c, fmt.Errorf("KESSAI_LOG_LEVEL: %w", err)
	}
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		return c, fmt.Errorf("KESSAI_ADDR: %w", err)
	}
	if c.DemoAddr != "" {
		if _, _, err := net.SplitHostPort(c.DemoAddr); err != nil {
			return c, fmt.Errorf("KESSAI_DEMO_ADDR: %w", err)
		}
	}
	if c.PublicURL == "" {
		c.PublicURL = "http://" + c.Addr
	}
	c.PublicURL = strings.TrimRight(c.PublicURL, "/")
	if u, err := url.Parse(c.PublicURL); err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return c, errors.New("KESSAI_PUBLIC_URL must be an http(s) URL")
	}
	if *key != "" {
		k, err := decodeKey(*key)
		if err != nil {
			return c, fmt.Errorf("KESSAI_SIGNING_KEY: %w", err)
		}
		c.SigningKey = k
	}
	if *cardKey != "" {
		k, err := decodeKey(*cardKey)
		if err != nil || len(k) != 32 {
			return c, errors.New("KESSAI_CARD_KEY must be a 32-byte key in hex or base64")
		}
		c.CardKey = k
	}
	for _, r := range strings.Split(*retired, ",") {
		if r = strings.TrimSpace(r); r == "" {
			continue
		}
		k, err := decodeKey(r)
		if err != nil || len(k) != 32 {
			return c, errors.New("KESSAI_RETIRED_CARD_KEYS must hold 32-byte keys in hex or base64")
		}
		c.RetiredCardKeys = append(c.RetiredCardKeys, k)
	}
	if c.DatabaseURL != "" {
		return c, errors.New("KESSAI_DATABASE_URL: the PostgreSQL engine is not built yet; unset it to use the embedded SQLite store")
	}
	if c.RedisURL != "" {
		return c, errors.New("KESSAI_REDIS_URL: the Redis limiter is not built yet; unset it to use the in-memory limiter")
	}
	return c, nil
}

// envDuration reads a duration variable, falling back on a bad value
// rather than refusing to start over a tuning knob.
func envDuration(name string, fallback time.Duration) time.Duration {
	if d, err := time.ParseDuration(os.Getenv(name)); err == nil && d >= 0 {
		return d
	}
	return fallback
}

// envInt reads an integer variable, falling back on an unset or bad value.
func envInt(name string, fallback int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return n
	}
	return fallback
}

// decodeKey accepts a key as hex or base64 (standard or URL-safe).
func decodeKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	for _, dec := range []func(string) ([]byte, error){
		hex.DecodeString, base64.StdEncoding.DecodeString, base64.RawStdEncoding.DecodeString,
		base64.URLEncoding.DecodeString, base64.RawURLEncoding.DecodeString,
	} {
		if k, err := dec(s); err == nil {
			if len(k) < 32 {
				return nil, errors.New("key must be at least 32 bytes")
			}
			return k, nil
		}
	}
	return nil, errors.New("key must be hex or base64")
}

// publicOrigin is scheme://host[:port] of the public URL.
func (c config) publicOrigin() string {
	u, _ := url.Parse(c.PublicURL)
	return u.Scheme + "://" + u.Host
}

// demoOrigin is where the demo storefront is reached from a browser on
// this machine.
func (c config) demoOrigin() string {
	if c.DemoAddr == "" {
		return ""
	}
	host, port, _ := net.SplitHostPort(c.DemoAddr)
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}
