package gateway_test

import (
	"strings"
	"testing"
	"time"

	"github.com/kessai/kessai/server/gateway"
	"github.com/kessai/kessai/server/gateway/gatewaytest"
)

// TestConfigRefusesMalformedNumbers: a numeric or duration variable that is
// malformed or out of range stops the gateway with an error naming the
// variable and the value, instead of silently using the default.
func TestConfigRefusesMalformedNumbers(t *testing.T) {
	badDurations := []struct{ value, problem string }{
		{"30", "unit"},       // a bare number: 30 what?
		{"abc", "duration"},  // not a duration at all
		{"-1s", "negative"},  // a negative wait
		{"1x", "duration"},   // an unknown unit
		{"3 s", "duration"},  // a space inside
		{"1e3s", "duration"}, // not Go's syntax
	}
	badInts := []struct{ value, problem string }{
		{"abc", "whole number"},
		{"1.5", "whole number"},
		{"-5", "at least 1"},
		{"0", "at least 1"},
		{"10k", "whole number"},
		{"99999999999999999999", "too large"},
	}
	for _, v := range gatewaytest.NumericVars {
		cases := badInts
		if v.Duration {
			cases = badDurations
		}
		for _, tc := range cases {
			t.Run(v.Name+"="+tc.value, func(t *testing.T) {
				gatewaytest.ClearEnv(t)
				t.Setenv(v.Name, tc.value)
				_, err := gateway.LoadConfig(nil)
				if err == nil {
					t.Fatalf("%s=%q accepted", v.Name, tc.value)
				}
				msg := err.Error()
				if strings.Contains(msg, "\n") {
					t.Errorf("error is not one line: %q", msg)
				}
				for _, want := range []string{v.Name, tc.value, tc.problem} {
					if !strings.Contains(msg, want) {
						t.Errorf("error %q does not mention %q", msg, want)
					}
				}
			})
		}
	}

	// Rate rules have an upper bound too.
	t.Run("rate above its maximum", func(t *testing.T) {
		gatewaytest.ClearEnv(t)
		t.Setenv("KESSAI_RATE_ROUTE_BURST", "100000001")
		if _, err := gateway.LoadConfig(nil); err == nil || !strings.Contains(err.Error(), "KESSAI_RATE_ROUTE_BURST") {
			t.Errorf("an out-of-range burst: %v, want an error naming KESSAI_RATE_ROUTE_BURST", err)
		}
	})

	// Flags that mirror the variables are held to the same rules.
	for _, args := range [][]string{{"--poll-wait=-1s"}, {"--duplicate-window=-30s"}, {"--limit-app-tokens=-1"}, {"--rate-charge-burst=0"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			gatewaytest.ClearEnv(t)
			if _, err := gateway.LoadConfig(args); err == nil {
				t.Errorf("%v accepted", args)
			}
		})
	}
}

// TestConfigNumbers: good values are taken, an empty or unset variable
// means the default.
func TestConfigNumbers(t *testing.T) {
	gatewaytest.ClearEnv(t)
	c, err := gateway.LoadConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.PollWait != 3*time.Second || c.Resources.DuplicateWindow != 30*time.Second || c.Rates.Charge.Burst != 100 ||
		c.PageRatePerMinute != 600 || c.SandboxLatency != 0 || c.IdempotencyLockTimeout != 90*time.Second {
		t.Errorf("defaults: %+v", c)
	}
	for name, value := range map[string]string{
		"KESSAI_POLL_WAIT": "1500ms", "KESSAI_SANDBOX_LATENCY": "0", "KESSAI_DUPLICATE_WINDOW": "0s",
		"KESSAI_RATE_CHARGE_BURST": "7", "KESSAI_LIMIT_APP_TOKENS": " 3 ", "KESSAI_PAGE_RATE_PER_MINUTE": "1",
		"KESSAI_IDEMPOTENCY_LOCK_TIMEOUT": "5s",
	} {
		t.Setenv(name, value)
	}
	if c, err = gateway.LoadConfig(nil); err != nil {
		t.Fatal(err)
	}
	if c.PollWait != 1500*time.Millisecond || c.SandboxLatency != 0 || c.Resources.DuplicateWindow != 0 ||
		c.Rates.Charge.Burst != 7 || c.Resources.AppTokens != 3 || c.PageRatePerMinute != 1 || c.IdempotencyLockTimeout != 5*time.Second {
		t.Errorf("set values: %+v", c)
	}
}

// TestConfigStoreURLs: KESSAI_DATABASE_URL and KESSAI_REDIS_URL switch the
// gateway to PostgreSQL and Redis; a URL of another scheme (a typo, a MySQL
// URL) stops it rather than falling back to the embedded store, and the
// refusal never repeats the URL, which may carry a password.
func TestConfigStoreURLs(t *testing.T) {
	tests := []struct {
		name, value string
		ok          bool
	}{
		{"KESSAI_DATABASE_URL", "postgres://kessai:s3cret@db.internal:5432/kessai", true},
		{"KESSAI_DATABASE_URL", "postgresql://db.internal/kessai?sslmode=require", true},
		{"KESSAI_DATABASE_URL", "mysql://kessai:s3cret@db.internal/kessai", false},
		{"KESSAI_DATABASE_URL", "kessai:s3cret@db.internal", false},
		{"KESSAI_DATABASE_URL", "postgres://kessai:s3cret@[::1", false},
		{"KESSAI_REDIS_URL", "redis://:s3cret@cache.internal:6379/2", true},
		{"KESSAI_REDIS_URL", "rediss://cache.internal:6380", true},
		{"KESSAI_REDIS_URL", "unix:///run/redis.sock", true},
		{"KESSAI_REDIS_URL", "memcached://:s3cret@cache.internal", false},
		{"KESSAI_REDIS_URL", "cache.internal:6379", false},
	}
	for _, tc := range tests {
		t.Run(tc.name+"="+tc.value, func(t *testing.T) {
			gatewaytest.ClearEnv(t)
			t.Setenv(tc.name, tc.value)
			c, err := gateway.LoadConfig(nil)
			if tc.ok {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if got := c.DatabaseURL + c.RedisURL; got != tc.value {
					t.Errorf("configured %q, want %q", got, tc.value)
				}
				return
			}
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), tc.name) || strings.Contains(err.Error(), "s3cret") {
				t.Errorf("refusal %q should name %s and never repeat the URL", err, tc.name)
			}
		})
	}
}

// TestConfigMail: KESSAI_SMTP_URL must be an smtp:// or smtps:// URL with
// a host, and a refusal names the variable without repeating the
// password; KESSAI_MAIL_FROM must be one address, and defaults to
// no-reply at the public URL's host.
func TestConfigLogFormat(t *testing.T) {
	for _, tc := range []struct {
		value, want string
		ok          bool
	}{{"", gateway.LogText, true}, {"text", gateway.LogText, true}, {"JSON", gateway.LogJSON, true}, {" json ", gateway.LogJSON, true}, {"logfmt", "", false}} {
		gatewaytest.ClearEnv(t)
		t.Setenv("KESSAI_LOG_FORMAT", tc.value)
		c, err := gateway.LoadConfig(nil)
		switch {
		case tc.ok && (err != nil || c.LogFormat != tc.want):
			t.Errorf("KESSAI_LOG_FORMAT=%q: %q, %v; want %q", tc.value, c.LogFormat, err, tc.want)
		case !tc.ok && (err == nil || !strings.Contains(err.Error(), "KESSAI_LOG_FORMAT")):
			t.Errorf("KESSAI_LOG_FORMAT=%q: %v, want an error naming the variable", tc.value, err)
		}
	}
}

func TestConfigMail(t *testing.T) {
	t.Run("defaults", func(t *testing.T) {
		for _, tc := range []struct{ publicURL, from string }{
			{"", "Kessai <no-reply@[127.0.0.1]>"},
			{"https://pay.example.com", "Kessai <no-reply@pay.example.com>"},
			{"https://pay.example.com:8443/base/", "Kessai <no-reply@pay.example.com>"},
			{"http://[::1]:8080", "Kessai <no-reply@[::1]>"},
		} {
			gatewaytest.ClearEnv(t)
			t.Setenv("KESSAI_PUBLIC_URL", tc.publicURL)
			c, err := gateway.LoadConfig(nil)
			if err != nil {
				t.Fatalf("KESSAI_PUBLIC_URL=%q: %v", tc.publicURL, err)
			}
			if c.SMTPURL != "" || c.MailFrom != tc.from {
				t.Errorf("KESSAI_PUBLIC_URL=%q: SMTPURL %q, MailFrom %q, want none and %q", tc.publicURL, c.SMTPURL, c.MailFrom, tc.from)
			}
		}
	})
	tests := []struct {
		name, value string
		ok          bool
	}{
		{"KESSAI_SMTP_URL", "smtp://kessai:s3cret@mail.example.com", true},
		{"KESSAI_SMTP_URL", "smtp://mail.example.com:25", true},
		{"KESSAI_SMTP_URL", "smtps://apikey:s3cret@mail.example.com:465", true},
		{"KESSAI_SMTP_URL", "http://kessai:s3cret@mail.example.com", false},
		{"KESSAI_SMTP_URL", "kessai:s3cret@mail.example.com:587", false},
		{"KESSAI_SMTP_URL", "smtp://kessai:s3cret@", false},
		{"KESSAI_SMTP_URL", "smtp://kessai:s3cret@:587", false},
		{"KESSAI_SMTP_URL", "smtp://kessai:s3cret@mail.example.com:99999", false},
		{"KESSAI_SMTP_URL", "smtp://kessai:s3cret@mail.example.com?insecure_skip_verify=true", false},
		{"KESSAI_SMTP_URL", "smtp://kessai:s3cret@[::1", false},
		{"KESSAI_SMTP_URL", "smtp://kessai:s3cret", false},
		{"KESSAI_MAIL_FROM", "Shop Console <console@shop.example>", true},
		{"KESSAI_MAIL_FROM", "console@shop.example", true},
		{"KESSAI_MAIL_FROM", "決済コンソール <console@shop.example>", true},
		{"KESSAI_MAIL_FROM", "console", false},
		{"KESSAI_MAIL_FROM", "a@shop.example, b@shop.example", false},
		{"KESSAI_MAIL_FROM", "Kessai <console@shop.example", false},
	}
	for _, tc := range tests {
		t.Run(tc.name+"="+tc.value, func(t *testing.T) {
			gatewaytest.ClearEnv(t)
			t.Setenv(tc.name, tc.value)
			c, err := gateway.LoadConfig(nil)
			if tc.ok {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				got := c.SMTPURL
				if tc.name == "KESSAI_MAIL_FROM" {
					got = c.MailFrom
				}
				if got != tc.value {
					t.Errorf("configured %q, want %q", got, tc.value)
				}
				return
			}
			if err == nil {
				t.Fatal("accepted")
			}
			if msg := err.Error(); !strings.Contains(msg, tc.name) || strings.Contains(msg, "s3cret") || strings.Contains(msg, "\n") {
				t.Errorf("refusal %q should be one line naming %s, never the password", err, tc.name)
			}
		})
	}
	t.Run("flags", func(t *testing.T) {
		gatewaytest.ClearEnv(t)
		c, err := gateway.LoadConfig([]string{"--smtp-url=smtps://mail.example.com", "--mail-from=console@shop.example"})
		if err != nil || c.SMTPURL != "smtps://mail.example.com" || c.MailFrom != "console@shop.example" {
			t.Errorf("flags: %v, %q, %q", err, c.SMTPURL, c.MailFrom)
		}
		if _, err := gateway.LoadConfig([]string{"--smtp-url=imap://kessai:s3cret@mail.example.com"}); err == nil || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("--smtp-url of another scheme: %v", err)
		}
	})
}

// TestConfigWebhookTestPrivate: test-mode webhooks may reach loopback and
// private receivers by default only on a gateway whose public URL is
// loopback; KESSAI_WEBHOOK_TEST_PRIVATE changes either default. The old
// KESSAI_WEBHOOK_ALLOW_PRIVATE (live mode to private networks) stops the
// gateway when true: live mode never may now.
func TestConfigWebhookTestPrivate(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		args []string
		want bool
	}{
		{nil, nil, true}, // KESSAI_ADDR 127.0.0.1:8080
		{map[string]string{"KESSAI_PUBLIC_URL": "http://localhost:8080"}, nil, true},
		{map[string]string{"KESSAI_PUBLIC_URL": "http://[::1]:8080/"}, nil, true},
		{map[string]string{"KESSAI_PUBLIC_URL": "http://kessai.localhost"}, nil, true},
		{map[string]string{"KESSAI_PUBLIC_URL": "https://pay.example.com"}, nil, false},
		{map[string]string{"KESSAI_PUBLIC_URL": "http://10.0.0.5:8080"}, nil, false},
		{map[string]string{"KESSAI_PUBLIC_URL": "http://localhost.example.com"}, nil, false},
		{map[string]string{"KESSAI_ADDR": "0.0.0.0:8080"}, nil, false},
		{map[string]string{"KESSAI_WEBHOOK_TEST_PRIVATE": "false"}, nil, false},
		{map[string]string{"KESSAI_WEBHOOK_TEST_PRIVATE": " 0 "}, nil, false},
		{map[string]string{"KESSAI_PUBLIC_URL": "https://pay.example.com", "KESSAI_WEBHOOK_TEST_PRIVATE": "true"}, nil, true},
		{map[string]string{"KESSAI_PUBLIC_URL": "https://pay.example.com"}, []string{"--webhook-test-private=true"}, true},
		{nil, []string{"--webhook-test-private=false"}, false},
		{map[string]string{"KESSAI_WEBHOOK_ALLOW_PRIVATE": "false"}, nil, true},
	} {
		gatewaytest.ClearEnv(t)
		for k, v := range c.env {
			t.Setenv(k, v)
		}
		cfg, err := gateway.LoadConfig(c.args)
		if err != nil || cfg.WebhookTestPrivate != c.want {
			t.Errorf("%v %v: %v, %v; want %v", c.env, c.args, cfg.WebhookTestPrivate, err, c.want)
		}
	}
	for name, value := range map[string]string{"KESSAI_WEBHOOK_TEST_PRIVATE": "sometimes", "KESSAI_WEBHOOK_ALLOW_PRIVATE": "true"} {
		gatewaytest.ClearEnv(t)
		t.Setenv(name, value)
		if _, err := gateway.LoadConfig(nil); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s=%s: %v, want an error naming it", name, value, err)
		}
	}
}
