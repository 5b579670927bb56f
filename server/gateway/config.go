package gateway

import (
	"cmp"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math"
	"net"
	netmail "net/mail"
	"net/netip"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kessai/kessai/server/limit"
	"github.com/kessai/kessai/server/mail"
	"github.com/kessai/kessai/server/payment"
)

// config is the gateway's configuration: environment variables first,
// flags (which mirror them) on top.
type Config struct {
	Addr        string
	DemoAddr    string
	DataDir     string
	PublicURL   string
	DatabaseURL string
	RedisURL    string
	// RedisPrefix starts every key the gateway writes to Redis, so that
	// deployments (or tests) can share one Redis without sharing limits.
	RedisPrefix string
	LogLevel    slog.Level
	// LogFormat is logText (slog's key=value lines) or logJSON.
	LogFormat string
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
	// PollRecheck is how often a held poll re-reads storage for what
	// another process changed, in case its news got lost (0: 1 s).
	PollRecheck time.Duration
	// SandboxLatency is how long each sandbox acquirer call takes.
	SandboxLatency time.Duration
	// WalletExpiry is how long a wallet payment waits for its shopper.
	WalletExpiry time.Duration
	// IdempotencyLockTimeout is how long an idempotency key stays in
	// flight before a retry takes it over as abandoned (0: the default).
	IdempotencyLockTimeout time.Duration
	// WebhookTestPrivate lets test-mode webhooks reach loopback and
	// private receivers (RFC 1918, fc00::/7, CGNAT) as well as public ones.
	// KESSAI_WEBHOOK_TEST_PRIVATE sets it; unset, it is on when the public
	// URL's host is a loopback address or localhost (make run, the tests:
	// the demo storefront's receiver is on loopback) and off otherwise.
	// Live-mode webhooks never reach them, and no webhook reaches
	// link-local or metadata addresses.
	WebhookTestPrivate bool

	// Limits: the numbers of the README's rate and resource limits, each
	// configurable.
	Rates          limit.Rules
	RateMaxKeys    int
	TrustedProxies []netip.Prefix
	Resources      payment.ResourceLimits
	// PageRatePerMinute limits each client IP on the hosted pages, static
	// files and the demo storefront.
	PageRatePerMinute int
	// PprofAddr, when set, serves net/http/pprof on a listener of its own,
	// which must be a loopback address; empty (the default) serves none.
	// The profiles are never on the public listener.
	PprofAddr string
	// SMTPURL, when set, is the mail server of the console's mail
	// (smtp:// or smtps://, see mail.ParseSMTPURL; it may hold a
	// password, so it is never printed). Empty keeps mail in the local
	// mailbox and the log, which is for test mode only.
	SMTPURL string
	// MailFrom is the sender of every mail: an address net/mail parses,
	// by default Kessai <no-reply@HOST> with the public URL's host.
	MailFrom string
	// DevMailbox serves the local mailbox (/console/mailbox) to a browser
	// on this machine, when mail has no SMTP server: for local development
	// only (make run turns it on), since it shows reset links.
	DevMailbox bool
	// MetricsAddr, when set, serves /metrics on a listener of its own as
	// well, to anyone who reaches it unless MetricsToken is set.
	// MetricsToken, when set, lets a request bearing it read /metrics from
	// any address; without it, the API listener serves them only to
	// loopback and TrustedProxies. A secret: never printed.
	MetricsAddr, MetricsToken string
}

// defaultIdempotencyLockTimeout is KESSAI_IDEMPOTENCY_LOCK_TIMEOUT's
// default: longer than any request may run (the write timeout, 60 s), so
// that a reservation is only taken over once its request is surely gone. A
// shorter one is no danger to money (a request taken over while it still
// runs cannot commit what it makes: payment.Idempotency), but such a
// request then answers 409 IDEMPOTENCY_KEY_CONFLICT.
const defaultIdempotencyLockTimeout = 90 * time.Second

// minMetricsToken is the shortest KESSAI_METRICS_TOKEN accepted: a token
// someone could guess would open the metrics to the world.
const minMetricsToken = 16

// The log formats (KESSAI_LOG_FORMAT).
const (
	logText = "text"
	logJSON = "json"
)

func env(name, fallback string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return fallback
}

func LoadConfig(args []string) (Config, error) {
	var c Config
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.StringVar(&c.Addr, "addr", env("KESSAI_ADDR", "127.0.0.1:8080"), "API and hosted pages address (KESSAI_ADDR)")
	fs.StringVar(&c.DemoAddr, "demo-addr", env("KESSAI_DEMO_ADDR", "127.0.0.1:8081"), "demo storefront address, empty to turn it off (KESSAI_DEMO_ADDR)")
	fs.StringVar(&c.DataDir, "data-dir", env("KESSAI_DATA_DIR", "./data"), "data directory (KESSAI_DATA_DIR)")
	fs.StringVar(&c.PublicURL, "public-url", env("KESSAI_PUBLIC_URL", ""), "external base URL of the gateway (KESSAI_PUBLIC_URL)")
	fs.StringVar(&c.DatabaseURL, "database-url", env("KESSAI_DATABASE_URL", ""), "postgres:// URL to use PostgreSQL instead of SQLite (KESSAI_DATABASE_URL)")
	fs.StringVar(&c.RedisURL, "redis-url", env("KESSAI_REDIS_URL", ""), "redis:// URL for rate limits shared by every process (KESSAI_REDIS_URL)")
	fs.StringVar(&c.RedisPrefix, "redis-prefix", env("KESSAI_REDIS_PREFIX", "kessai:"), "prefix of every Redis key, to share one Redis between deployments (KESSAI_REDIS_PREFIX)")
	level := fs.String("log-level", env("KESSAI_LOG_LEVEL", "info"), "debug, info, warn or error (KESSAI_LOG_LEVEL)")
	fs.StringVar(&c.LogFormat, "log-format", env("KESSAI_LOG_FORMAT", logText), "text (key=value lines) or json (one object a line, for log shippers) (KESSAI_LOG_FORMAT)")
	key := fs.String("signing-key", env("KESSAI_SIGNING_KEY", ""), "hex or base64 key of at least 32 bytes (KESSAI_SIGNING_KEY)")
	cardKey := fs.String("card-key", env("KESSAI_CARD_KEY", ""), "hex or base64 AES-256 key sealing card data (KESSAI_CARD_KEY)")
	retired := fs.String("retired-card-keys", env("KESSAI_RETIRED_CARD_KEYS", ""), "comma-separated keys of earlier card-key rotations (KESSAI_RETIRED_CARD_KEYS)")
	num := &numbers{fs: fs}
	num.durationVar(&c.PollWait, "poll-wait", "KESSAI_POLL_WAIT", 3*time.Second, "longest hold of a ?polling=true request")
	num.durationVar(&c.PollRecheck, "poll-recheck", "KESSAI_POLL_RECHECK", time.Second, "how often a held poll re-reads storage for changes news did not bring, 0 for 1s")
	num.durationVar(&c.SandboxLatency, "sandbox-latency", "KESSAI_SANDBOX_LATENCY", 0, "simulated latency of each sandbox acquirer call")
	num.durationVar(&c.WalletExpiry, "wallet-expiry", "KESSAI_WALLET_EXPIRY", 5*time.Minute, "how long a wallet payment waits for the shopper before it fails with 327")
	num.durationVar(&c.IdempotencyLockTimeout, "idempotency-lock-timeout", "KESSAI_IDEMPOTENCY_LOCK_TIMEOUT", defaultIdempotencyLockTimeout,
		"how long an Idempotency-Key stays in flight before a retry takes it over as abandoned, 0 for the default")
	testPrivate := fs.String("webhook-test-private", env("KESSAI_WEBHOOK_TEST_PRIVATE", ""),
		"true lets test-mode webhooks reach loopback and private addresses, false refuses them; empty: true when the public URL is loopback (KESSAI_WEBHOOK_TEST_PRIVATE)")
	// Live-mode webhooks reached private networks with it; they no longer
	// may, and a deployment relying on it must hear so rather than see its
	// deliveries fail.
	allowPrivate, allowPrivateErr := envBool("KESSAI_WEBHOOK_ALLOW_PRIVATE")
	if allowPrivate {
		allowPrivateErr = errors.New("KESSAI_WEBHOOK_ALLOW_PRIVATE is no more: live-mode webhooks only ever reach public addresses " +
			"(KESSAI_WEBHOOK_TEST_PRIVATE says whether test-mode ones may reach loopback and private ones)")
	}
	fs.StringVar(&c.PprofAddr, "pprof-addr", env("KESSAI_PPROF_ADDR", ""), "loopback address serving net/http/pprof, empty for none (KESSAI_PPROF_ADDR)")
	fs.StringVar(&c.SMTPURL, "smtp-url", env("KESSAI_SMTP_URL", ""), "smtp:// or smtps:// URL of the mail server; empty keeps mail in the local mailbox (KESSAI_SMTP_URL)")
	fs.StringVar(&c.MailFrom, "mail-from", env("KESSAI_MAIL_FROM", ""), "sender of the gateway's mail, default Kessai <no-reply@HOST> with the public URL's host (KESSAI_MAIL_FROM)")
	devMailbox, devMailboxErr := envBool("KESSAI_DEV_MAILBOX")
	fs.BoolVar(&c.DevMailbox, "dev-mailbox", devMailbox,
		"serve the local mailbox (reset links) to a browser on this machine, for local development (KESSAI_DEV_MAILBOX)")
	fs.StringVar(&c.MetricsAddr, "metrics-addr", env("KESSAI_METRICS_ADDR", ""), "address of a listener serving only /metrics, empty for none (KESSAI_METRICS_ADDR)")
	c.MetricsToken = env("KESSAI_METRICS_TOKEN", "")
	fs.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", 20*time.Second, "how long SIGTERM waits for requests in flight")
	c.Rates = limit.DefaultRules()
	c.Resources = payment.DefaultResourceLimits()
	for _, r := range []struct {
		name string
		rule *limit.Rule
	}{{"charge", &c.Rates.Charge}, {"route", &c.Rates.Route}, {"exact", &c.Rates.Exact}} {
		upper := strings.ToUpper(r.name)
		num.intVar(&r.rule.Burst, "rate-"+r.name+"-burst", "KESSAI_RATE_"+upper+"_BURST", r.rule.Burst, limit.MaxRuleValue,
			r.name+" bucket burst")
		num.intVar(&r.rule.BurstRefillPerMinute, "rate-"+r.name+"-refill-per-minute", "KESSAI_RATE_"+upper+"_REFILL_PER_MINUTE",
			r.rule.BurstRefillPerMinute, limit.MaxRuleValue, r.name+" burst refill per minute")
		num.intVar(&r.rule.PerMinute, "rate-"+r.name+"-per-minute", "KESSAI_RATE_"+upper+"_PER_MINUTE", r.rule.PerMinute,
			limit.MaxRuleValue, r.name+" per-minute limit")
	}
	num.intVar(&c.RateMaxKeys, "rate-max-keys", "KESSAI_RATE_MAX_KEYS", limit.DefaultMaxKeys, math.MaxInt, "most rate-limit buckets held in memory")
	proxies := fs.String("trusted-proxies", env("KESSAI_TRUSTED_PROXIES", ""), "comma-separated CIDRs whose X-Forwarded-For is believed (KESSAI_TRUSTED_PROXIES)")
	num.intVar(&c.Resources.AppTokens, "limit-app-tokens", "KESSAI_LIMIT_APP_TOKENS", c.Resources.AppTokens, math.MaxInt, "active app tokens per store and per merchant")
	num.intVar(&c.Resources.TestChargesPerDay, "limit-test-charges-per-day", "KESSAI_LIMIT_TEST_CHARGES_PER_DAY", c.Resources.TestChargesPerDay, math.MaxInt, "test-mode charges per store per UTC day")
	num.durationVar(&c.Resources.DuplicateWindow, "duplicate-window", "KESSAI_DUPLICATE_WINDOW", c.Resources.DuplicateWindow, "duplicate-charge window, 0 turns the rule off")
	num.intVar(&c.PageRatePerMinute, "page-rate-per-minute", "KESSAI_PAGE_RATE_PER_MINUTE", 600, math.MaxInt, "hosted-page requests per client IP per minute")
	// A malformed variable is refused even when a flag overrides it: it is
	// a mistake in the deployment either way.
	if err := num.envErr(); err != nil {
		return c, err
	}
	if allowPrivateErr != nil {
		return c, allowPrivateErr
	}
	if devMailboxErr != nil {
		return c, devMailboxErr
	}
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if err := num.check(); err != nil {
		return c, err
	}
	if err := c.Rates.Validate(); err != nil {
		return c, err
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
	if c.LogFormat = cmp.Or(strings.ToLower(strings.TrimSpace(c.LogFormat)), logText); c.LogFormat != logText && c.LogFormat != logJSON {
		return c, fmt.Errorf("KESSAI_LOG_FORMAT=%q: want text or json", c.LogFormat)
	}
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		return c, fmt.Errorf("KESSAI_ADDR: %w", err)
	}
	if c.DemoAddr != "" {
		if _, _, err := net.SplitHostPort(c.DemoAddr); err != nil {
			return c, fmt.Errorf("KESSAI_DEMO_ADDR: %w", err)
		}
	}
	if err := checkPprofAddr(c.PprofAddr); err != nil {
		return c, err
	}
	if c.MetricsAddr != "" {
		if _, _, err := net.SplitHostPort(c.MetricsAddr); err != nil {
			return c, fmt.Errorf("KESSAI_METRICS_ADDR: %w", err)
		}
	}
	if c.MetricsToken != "" && len(c.MetricsToken) < minMetricsToken {
		return c, fmt.Errorf("KESSAI_METRICS_TOKEN: at least %d characters (a long random one: openssl rand -hex 32)", minMetricsToken)
	}
	if c.PublicURL == "" {
		c.PublicURL = "http://" + c.Addr
	}
	c.PublicURL = strings.TrimRight(c.PublicURL, "/")
	u, err := url.Parse(c.PublicURL)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return c, errors.New("KESSAI_PUBLIC_URL must be an http(s) URL")
	}
	switch v := strings.TrimSpace(*testPrivate); v {
	case "":
		c.WebhookTestPrivate = loopbackHost(u.Hostname())
	default:
		b, err := strconv.ParseBool(v)
		if err != nil {
			return c, fmt.Errorf("KESSAI_WEBHOOK_TEST_PRIVATE=%q: not a boolean (write true or false, or nothing for the default)", v)
		}
		c.WebhookTestPrivate = b
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
	if err := checkURL("KESSAI_DATABASE_URL", c.DatabaseURL, "postgres", "postgresql"); err != nil {
		return c, err
	}
	if err := checkURL("KESSAI_REDIS_URL", c.RedisURL, "redis", "rediss", "unix"); err != nil {
		return c, err
	}
	if err := c.checkMail(); err != nil {
		return c, err
	}
	return c, nil
}

// checkMail refuses a mail server URL the mail package would refuse
// (whose errors never repeat the password) and a sender that is no
// address, and fills in the default sender.
func (c *Config) checkMail() error {
	c.SMTPURL = strings.TrimSpace(c.SMTPURL)
	if c.SMTPURL != "" {
		if _, err := mail.ParseSMTPURL(c.SMTPURL); err != nil {
			return fmt.Errorf("KESSAI_SMTP_URL: %s", strings.TrimPrefix(err.Error(), "mail: "))
		}
	}
	c.MailFrom = strings.TrimSpace(c.MailFrom)
	if c.MailFrom == "" {
		c.MailFrom = defaultMailFrom(c.PublicURL)
	}
	if _, err := netmail.ParseAddress(c.MailFrom); err != nil {
		return fmt.Errorf("KESSAI_MAIL_FROM=%q: not one e-mail address (write it like Kessai <no-reply@example.com>): %v", c.MailFrom, err)
	}
	return nil
}

// defaultMailFrom is Kessai <no-reply@HOST>, HOST being the public URL's
// host name, or an IP address in brackets.
func defaultMailFrom(publicURL string) string {
	u, _ := url.Parse(publicURL)
	host := u.Hostname()
	if ip, err := netip.ParseAddr(host); err == nil {
		host = "[" + ip.WithZone("").String() + "]"
	}
	return "Kessai <no-reply@" + host + ">"
}

// checkURL refuses a URL of another scheme than those given (an unset one
// is fine): a typo must not silently fall back to the embedded store. The
// URL itself is never repeated: it may hold a password.
func checkURL(name, raw string, schemes ...string) error {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || !slices.Contains(schemes, u.Scheme) {
		return fmt.Errorf("%s must be a %s:// URL", name, strings.Join(schemes, ":// or "))
	}
	return nil
}

// numbers reads the numeric and duration settings. A variable that is set
// must parse (an empty one means the default), and every final value,
// from a variable or a flag, must be in range: a malformed tuning knob
// stops the gateway with one line naming it, rather than letting it run
// on a default nobody chose.
type numbers struct {
	fs     *flag.FlagSet
	errs   []error
	checks []func(source func(flagName, envName string) string) error
}

// lookup is the variable's value with surrounding blanks trimmed; "" when
// unset or empty.
func (n *numbers) lookup(envName string) string {
	return strings.TrimSpace(os.Getenv(envName))
}

// intVar is a whole-number setting from 1 to max.
func (n *numbers) intVar(p *int, flagName, envName string, fallback, max int, usage string) {
	v := fallback
	if s := n.lookup(envName); s != "" {
		i, err := strconv.Atoi(s)
		switch {
		case errors.Is(err, strconv.ErrRange):
			n.errs = append(n.errs, fmt.Errorf("%s=%q: too large (at most %d)", envName, s, max))
		case err != nil:
			n.errs = append(n.errs, fmt.Errorf("%s=%q: not a whole number", envName, s))
		default:
			v = i
		}
	}
	n.fs.IntVar(p, flagName, v, usage+" ("+envName+")")
	n.checks = append(n.checks, func(source func(string, string) string) error {
		switch {
		case *p < 1:
			return fmt.Errorf("%s=%d: must be at least 1", source(flagName, envName), *p)
		case *p > max:
			return fmt.Errorf("%s=%d: too large (at most %d)", source(flagName, envName), *p, max)
		}
		return nil
	})
}

// durationVar is a duration setting (Go syntax with a unit: 3s, 500ms,
// 1m) that may be zero but not negative.
func (n *numbers) durationVar(p *time.Duration, flagName, envName string, fallback time.Duration, usage string) {
	v := fallback
	if s := n.lookup(envName); s != "" {
		d, err := time.ParseDuration(s)
		switch {
		case err == nil:
			v = d
		case isNumber(s):
			n.errs = append(n.errs, fmt.Errorf("%s=%q: a duration needs a unit, such as %ss or %sms", envName, s, s, s))
		default:
			n.errs = append(n.errs, fmt.Errorf("%s=%q: not a duration (write it like 3s, 500ms or 1m)", envName, s))
		}
	}
	n.fs.DurationVar(p, flagName, v, usage+" ("+envName+")")
	n.checks = append(n.checks, func(source func(string, string) string) error {
		if *p < 0 {
			return fmt.Errorf("%s=%s: must not be negative", source(flagName, envName), *p)
		}
		return nil
	})
}

// envBool reads a true/false variable (1, t, true, 0, f, false, any
// case); unset or empty is false.
func envBool(name string) (bool, error) {
	s := strings.TrimSpace(os.Getenv(name))
	if s == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return false, fmt.Errorf("%s=%q: not a boolean (write true or false)", name, s)
	}
	return b, nil
}

func isNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

// envErr is the first variable that did not parse.
func (n *numbers) envErr() error {
	if len(n.errs) > 0 {
		return n.errs[0]
	}
	return nil
}

// check holds every final value to its range, naming the flag when one
// was given and the variable otherwise.
func (n *numbers) check() error {
	set := map[string]bool{}
	n.fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	source := func(flagName, envName string) string {
		if set[flagName] {
			return "--" + flagName
		}
		return envName
	}
	for _, c := range n.checks {
		if err := c(source); err != nil {
			return err
		}
	}
	return nil
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

// checkPprofAddr accepts an empty address (no profiling listener) or a
// loopback one: 127.0.0.0/8, ::1 or localhost, with a port. The profiles
// show the gateway's memory and code paths, so they are for someone on the
// machine, never for the network.
func checkPprofAddr(addr string) error {
	if addr == "" {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("KESSAI_PPROF_ADDR: %w", err)
	}
	if host == "localhost" {
		return nil
	}
	if ip, err := netip.ParseAddr(host); err == nil && ip.Zone() == "" && ip.Unmap().IsLoopback() {
		return nil
	}
	return fmt.Errorf("KESSAI_PPROF_ADDR=%q: must be a loopback address such as 127.0.0.1:6060", addr)
}

// loopbackHost reports whether a URL's host name is this machine: a
// loopback address, or localhost (and its subdomains, RFC 6761).
func loopbackHost(host string) bool {
	if a, err := netip.ParseAddr(host); err == nil {
		return a.Zone() == "" && a.Unmap().IsLoopback()
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	return host == "localhost" || strings.HasSuffix(host, ".localhost")
}

// publicOrigin is scheme://host[:port] of the public URL.
func (c Config) publicOrigin() string {
	u, _ := url.Parse(c.PublicURL)
	return u.Scheme + "://" + u.Host
}

// demoOrigin is where the demo storefront is reached from a browser on
// this machine.
func (c Config) DemoOrigin() string {
	if c.DemoAddr == "" {
		return ""
	}
	host, port, _ := net.SplitHostPort(c.DemoAddr)
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}
