package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/kessai/kessai/server/api"
	"github.com/kessai/kessai/server/limit"
	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/postgres"
	"github.com/kessai/kessai/server/redis"
	"github.com/kessai/kessai/server/sqlite"
)

// store is a storage engine as the gateway uses it: the domain's storage
// and the idempotency keys', and the fingerprints of the keys its
// processes share (keycheck.go).
type store interface {
	payment.Storage
	payment.IdempotencyStore
	KeyFingerprints
}

// openStore opens PostgreSQL when KESSAI_DATABASE_URL is set, with the
// change feed that links the gateway processes sharing it; otherwise the
// embedded SQLite store in the data directory, which one process has to
// itself (no feed).
func openStore(ctx context.Context, cfg Config) (store, payment.ChangeFeed, error) {
	if cfg.DatabaseURL == "" {
		db, err := sqlite.Open(ctx, filepath.Join(cfg.DataDir, sqlite.FileName))
		return db, nil, err
	}
	db, err := postgres.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return nil, nil, err
	}
	feed, err := db.ChangeFeed(ctx)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	return db, feed, nil
}

// Key prefixes of the two limiters in Redis, after KESSAI_REDIS_PREFIX: the
// API's buckets and the hosted pages' never share a key.
const (
	redisAPIPrefix   = "rl:api:"
	redisPagesPrefix = "rl:pages:"
	// redisSignInPrefix is the console's sign-in throttle's.
	redisSignInPrefix = "rl:signin:"
)

// limiters are the API's and the hosted pages' rate limiters, and the
// console's sign-in throttle's.
type limiters struct {
	api, pages, signIn limit.Limiter
	// closer releases what they hold (the Redis client); nil for memory.
	closer io.Closer
	// readiness checks their back end (Redis answers PING); empty for
	// memory.
	readiness []api.ReadinessCheck
}

// openLimiters puts the rate limits in Redis when KESSAI_REDIS_URL is set,
// where every gateway process shares them exactly; otherwise in memory,
// swept in the background, for this process alone.
func (r *Running) openLimiters(ctx context.Context) (limiters, error) {
	cfg := r.cfg
	if cfg.RedisURL == "" {
		apiLimiter := limit.NewMemory(limit.MemoryConfig{MaxKeys: cfg.RateMaxKeys, Clock: r.limitClock()})
		r.background.run(func(ctx context.Context) { apiLimiter.SweepEvery(ctx, time.Minute) })
		pages := limit.NewMemory(limit.MemoryConfig{Clock: r.limitClock()})
		r.background.run(func(ctx context.Context) { pages.SweepEvery(ctx, time.Minute) })
		signIn := limit.NewMemory(limit.MemoryConfig{Clock: r.limitClock()})
		r.background.run(func(ctx context.Context) { signIn.SweepEvery(ctx, time.Minute) })
		return limiters{api: apiLimiter, pages: pages, signIn: signIn}, nil
	}
	goredis.SetLogger(redisLog{r.log})
	client, err := redis.Open(ctx, cfg.RedisURL)
	if err != nil {
		return limiters{}, err
	}
	rc := redis.Config{Clock: r.limitClock()}
	if rc.Clock != nil {
		// A test's clock stands still while Redis's runs: keep every key
		// until that clock says its bucket is full again.
		rc.ExpirySlack = time.Hour
	}
	var ls limiters
	rc.Prefix = cfg.RedisPrefix + redisAPIPrefix
	apiLimiter, err := redis.NewLimiter(client, rc)
	rc.Prefix = cfg.RedisPrefix + redisPagesPrefix
	pages, perr := redis.NewLimiter(client, rc)
	rc.Prefix = cfg.RedisPrefix + redisSignInPrefix
	signIn, serr := redis.NewLimiter(client, rc)
	if err := errors.Join(err, perr, serr); err != nil {
		client.Close()
		return limiters{}, fmt.Errorf("redis: %w", err)
	}
	ls.api, ls.pages, ls.signIn, ls.closer = apiLimiter, pages, signIn, client
	ls.readiness = []api.ReadinessCheck{{Name: "redis", Check: func(ctx context.Context) error { return client.Ping(ctx).Err() }}}
	return ls, nil
}

// redisLog takes go-redis's own messages to slog at debug: it would print
// "failed to dial" on every dial while Redis is down, and the limiter's
// 503s and their log lines already tell the operator.
type redisLog struct{ log *slog.Logger }

func (l redisLog) Printf(ctx context.Context, format string, v ...any) {
	l.log.DebugContext(ctx, fmt.Sprintf(format, v...))
}

func (l limiters) close() error {
	if l.closer == nil {
		return nil
	}
	return l.closer.Close()
}

// sqlite is the embedded store, for the benchmarks and tests that measure
// or poke it directly; nil on PostgreSQL.
func (g *gateway) sqlite() *sqlite.DB {
	db, _ := g.db.(*sqlite.DB)
	return db
}
