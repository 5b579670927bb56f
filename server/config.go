package main

import (
	"encoding/base64"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strings"
	"time"
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
	SigningKey      []byte
	ShutdownTimeout time.Duration
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
	fs.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", 20*time.Second, "how long SIGTERM waits for requests in flight")
	if err := fs.Parse(args); err != nil {
		return c, err
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
	if c.DatabaseURL != "" {
		return c, errors.New("KESSAI_DATABASE_URL: the PostgreSQL engine is not built yet; unset it to use the embedded SQLite store")
	}
	if c.RedisURL != "" {
		return c, errors.New("KESSAI_REDIS_URL: the Redis limiter is not built yet; unset it to use the in-memory limiter")
	}
	return c, nil
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
