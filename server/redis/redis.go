// Package redis is the rate limiter's shared back end: several gateway
// processes pointed at one Redis share every bucket, and so every limit,
// exactly.
//
// Each request is decided by one Lua script (decide.lua, a port of
// limit.Decide) in one round trip, so that the check and the charge of all
// of its buckets are one atomic step on the server: two gateways can never
// both take a bucket's last request. The script runs on Redis's clock
// (TIME), so gateways with skewed clocks still agree; tests pass their fake
// clock's time instead.
//
// A bucket is one hash (b, m, t: limit.State) under Config.Prefix, expiring
// when the bucket would be full again, which is the same as no key: memory
// follows the live buckets without a sweeper. Run Redis with
// maxmemory-policy noeviction: evicting a live bucket would hand its owner a
// fresh burst, and a refused write is a 503 instead (the memory back end's
// choice too, see limit.Memory).
//
// When Redis cannot answer within Config.Timeout, Admit returns an error and
// admits nothing; the API answers 503. A request whose answer was lost may
// still have been charged: that errs on the strict side.
//
// Redis Cluster is not supported as is: the script needs all of a request's
// keys in one hash slot, which would take a hash tag on the subject (the part
// of each key before "|") that this package does not know how to find.
package redis

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/kessai/kessai/server/limit"
)

// Defaults of Config.
const (
	DefaultPrefix = "kessai:rl:"
	// DefaultTimeout is long enough for a Redis on the same network under
	// load (a decision takes well under a millisecond there, but the wait
	// for a pooled connection counts too) and short enough that a hung
	// Redis turns into quick 503s rather than requests piling up behind it.
	DefaultTimeout = 250 * time.Millisecond
)

// openTimeout bounds Open's ping when its context has no earlier deadline.
const openTimeout = 5 * time.Second

// maxKeyText is the longest bucket key stored as it is; a longer one (a
// query string of kilobytes, say) is stored as its digest, so that a key
// costs Redis a bounded amount whatever a client sends.
const maxKeyText = 256

// ErrUnavailable wraps every failure to reach Redis or to run the script:
// the request was not decided, and must not be admitted.
var ErrUnavailable = errors.New("redis: rate limiter store unavailable")

//go:embed decide.lua
var decideSource string

var decideScript = goredis.NewScript(decideSource)

// Config configures NewLimiter. The zero value is the production setting.
type Config struct {
	// Prefix starts every key (default DefaultPrefix).
	Prefix string
	// Clock, when set, is the limiter's time instead of Redis's (tests).
	Clock limit.Clock
	// Timeout bounds each Admit (default DefaultTimeout).
	Timeout time.Duration
	// ExpirySlack is added to every key's expiry. Zero expires a key the
	// moment its bucket is full again, which is exact on Redis's clock; a
	// test whose fake Clock stands still while real time runs sets it, so
	// that no key expires before the fake clock says its bucket is full.
	ExpirySlack time.Duration
}

// Limiter is a limit.Limiter over one Redis.
type Limiter struct {
	client  *goredis.Client
	script  *goredis.Script
	prefix  string
	clock   limit.Clock
	timeout time.Duration
	slackMS int64
}

var _ limit.Limiter = (*Limiter)(nil)

// Open connects to the Redis at rawURL (redis://[user:password@]host:port/db,
// rediss:// for TLS, unix://) and pings it. Its client honours context
// deadlines, as NewLimiter requires.
func Open(ctx context.Context, rawURL string) (*goredis.Client, error) {
	opts, err := options(rawURL)
	if err != nil {
		return nil, err
	}
	client := goredis.NewClient(opts)
	ctx, cancel := context.WithTimeout(ctx, openTimeout)
	defer cancel()
	if err := client.Ping(ctx).Err(); err != nil {
		client.Close()
		return nil, fmt.Errorf("redis: no answer from %s: %w", opts.Addr, err)
	}
	return client, nil
}

// options parses rawURL without ever putting it, password and all, into an
// error message.
func options(rawURL string) (*goredis.Options, error) {
	opts, err := goredis.ParseURL(rawURL)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("redis: invalid URL: %w", err)
	}
	// Without it go-redis ignores the per-call deadline on the socket and
	// waits out its own ReadTimeout (5 s) on a hung server.
	opts.ContextTimeoutEnabled = true
	return opts, nil
}

// NewLimiter returns a limiter keeping its buckets in client's Redis. The
// client must honour context deadlines (Open's does), or Timeout would not
// bound a call.
func NewLimiter(client *goredis.Client, cfg Config) (*Limiter, error) {
	if !client.Options().ContextTimeoutEnabled {
		return nil, errors.New("redis: the client ignores context deadlines (set Options.ContextTimeoutEnabled)")
	}
	if cfg.Prefix == "" {
		cfg.Prefix = DefaultPrefix
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.ExpirySlack < 0 {
		return nil, fmt.Errorf("redis: ExpirySlack %v is negative", cfg.ExpirySlack)
	}
	return &Limiter{
		client:  client,
		script:  decideScript,
		prefix:  cfg.Prefix,
		clock:   cfg.Clock,
		timeout: cfg.Timeout,
		slackMS: cfg.ExpirySlack.Milliseconds(),
	}, nil
}

// Admit implements limit.Limiter.
func (l *Limiter) Admit(ctx context.Context, buckets []limit.Bucket) (limit.Result, error) {
	for i, b := range buckets {
		if !b.Kind.Valid() {
			return limit.Result{}, fmt.Errorf("limit: bucket %q has invalid kind %d", b.Key, uint8(b.Kind))
		}
		if err := b.Rule.Validate(); err != nil {
			return limit.Result{}, fmt.Errorf("%s bucket %q: %w", b.Kind, b.Key, err)
		}
		for _, earlier := range buckets[:i] {
			if earlier.Kind == b.Kind && earlier.Key == b.Key {
				return limit.Result{}, limit.ErrDuplicateBucket
			}
		}
	}
	if len(buckets) == 0 {
		return limit.Result{Admitted: true}, nil
	}
	keys := make([]string, len(buckets))
	args := make([]any, 2, 2+3*len(buckets))
	args[0] = ""
	if l.clock != nil {
		args[0] = l.clock.Now().UnixMicro()
	}
	args[1] = l.slackMS
	for i, b := range buckets {
		keys[i] = l.key(b)
		args = append(args, b.Rule.Burst, b.Rule.BurstRefillPerMinute, b.Rule.PerMinute)
	}
	reply, err := l.run(ctx, keys, args)
	if err != nil {
		return limit.Result{}, err
	}
	res := limit.Result{Admitted: reply[0] == 1, RetryAfter: time.Duration(reply[1]) * time.Microsecond}
	for i, b := range buckets {
		res.AddBucket(limit.BucketResult{Kind: b.Kind, Rule: b.Rule, Remaining: limit.State{Burst: reply[2+3*i]}.Remaining()})
	}
	return res, nil
}

// run is one decision: the script under the per-call deadline, its reply
// checked for shape.
func (l *Limiter) run(ctx context.Context, keys []string, args []any) ([]int64, error) {
	ctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	// Run sends EVALSHA, and the script itself only when Redis answers
	// NOSCRIPT (a restarted or flushed server).
	reply, err := l.script.Run(ctx, l.client, keys, args...).Int64Slice()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	if len(reply) != 2+3*len(keys) {
		return nil, fmt.Errorf("%w: script answered %d values for %d buckets", ErrUnavailable, len(reply), len(keys))
	}
	return reply, nil
}

// key is a bucket's Redis key: the prefix, the kind (so that kinds never
// share a key) and the key text, or past maxKeyText bytes a digest of it
// under a different separator (so that a digest never equals a text).
// Redis keys are binary-safe and travel as KEYS, never inside the script's
// source, so the text needs no escaping.
func (l *Limiter) key(b limit.Bucket) string {
	if len(b.Key) <= maxKeyText {
		return l.prefix + b.Kind.String() + ":" + b.Key
	}
	sum := sha256.Sum256([]byte(b.Key))
	return l.prefix + b.Kind.String() + "#" + hex.EncodeToString(sum[:16])
}
