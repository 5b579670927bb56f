package gatewaytest

import (
	"context"
	"os"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	kredis "github.com/kessai/kessai/server/redis"
)

// RedisURL is the test Redis: KESSAI_TEST_REDIS_URL, by default the local
// one .ci/run starts.
func RedisURL() string {
	if u := os.Getenv("KESSAI_TEST_REDIS_URL"); u != "" {
		return u
	}
	return "redis://127.0.0.1:6379/0"
}

// Redis opens the test Redis, failing with how to start it.
func Redis(t *testing.T) *goredis.Client {
	t.Helper()
	// One message, not go-redis's line per failed dial.
	goredis.SetLogger(quietRedis{})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	client, err := kredis.Open(ctx, RedisURL())
	if err != nil {
		t.Fatalf("the scale-out test needs a Redis (KESSAI_TEST_REDIS_URL, default redis://127.0.0.1:6379/0): %v\n"+
			"Start PostgreSQL and Redis with .ci/ensure-deps (or: redis-server --daemonize yes --port 6379 --save '').", err)
	}
	t.Cleanup(func() { client.Close() })
	return client
}

// quietRedis drops go-redis's own log lines.
type quietRedis struct{}

func (quietRedis) Printf(context.Context, string, ...any) {}
