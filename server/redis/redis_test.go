package redis

// The tests run against a real Redis (KESSAI_TEST_REDIS_URL, default
// redis://127.0.0.1:6379/0). Each test keeps its keys under a prefix of its
// own and deletes them at cleanup, so that runs in parallel never meet.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/kessai/kessai/server/limit"
	"github.com/kessai/kessai/server/limit/limittest"
)

// testClient is the Redis every test shares, opened by TestMain.
var testClient *goredis.Client

func testURL() string {
	if u := os.Getenv("KESSAI_TEST_REDIS_URL"); u != "" {
		return u
	}
	return "redis://127.0.0.1:6379/0"
}

func TestMain(m *testing.M) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	client, err := Open(ctx, testURL())
	cancel()
	if err != nil {
		// A failure, not a skip: a suite that silently skips guards nothing.
		fmt.Fprintf(os.Stderr, "FAIL: server/redis needs a Redis (KESSAI_TEST_REDIS_URL, default redis://127.0.0.1:6379/0): %v\n"+
			"Start one with .ci/ensure-deps (or: redis-server --daemonize yes --port 6379 --save '').\n", err)
		os.Exit(1)
	}
	testClient = client
	code := m.Run()
	client.Close()
	os.Exit(code)
}

// testPrefix returns a key prefix no other test or run uses, and deletes
// every key under it when tb ends.
func testPrefix(tb testing.TB) string {
	tb.Helper()
	var b [8]byte
	rand.Read(b[:])
	prefix := "kessai-test:" + hex.EncodeToString(b[:]) + ":"
	tb.Cleanup(func() { deletePrefix(tb, prefix) })
	return prefix
}

func deletePrefix(tb testing.TB, prefix string) {
	tb.Helper()
	ctx := context.Background()
	iter := testClient.Scan(ctx, 0, prefix+"*", 1000).Iterator()
	var keys []string
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if err := iter.Err(); err != nil {
		tb.Errorf("scan %s*: %v", prefix, err)
		return
	}
	for len(keys) > 0 {
		n := min(len(keys), 1000)
		if err := testClient.Del(ctx, keys[:n]...).Err(); err != nil {
			tb.Errorf("del %s*: %v", prefix, err)
			return
		}
		keys = keys[n:]
	}
}

// newTestLimiter is a limiter on the test Redis under a fresh prefix
// (cfg.Prefix, when set, is kept: two limiters sharing a store).
func newTestLimiter(tb testing.TB, cfg Config) *Limiter {
	tb.Helper()
	if cfg.Prefix == "" {
		cfg.Prefix = testPrefix(tb)
	}
	if cfg.Timeout == 0 {
		// The deadline is TestHungRedis's subject; elsewhere a loaded
		// machine (50 concurrent calls in V10) must not fail a test by it.
		cfg.Timeout = testTimeout
	}
	l, err := NewLimiter(testClient, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return l
}

// testTimeout is the per-call deadline of the tests' limiters.
const testTimeout = 10 * time.Second

// fakeClockConfig reads clock and keeps keys a minute past their bucket's
// refill, since the fake clock stands still while real time runs.
func fakeClockConfig(clock limit.Clock) Config {
	return Config{Clock: clock, ExpirySlack: time.Minute}
}

func TestConformance(t *testing.T) {
	limittest.Run(t, func(t *testing.T, clock *limittest.Clock) limit.Limiter {
		return newTestLimiter(t, fakeClockConfig(clock))
	})
}

// TestShared is V12: two limiters, as two gateways would hold, over one
// Redis.
func TestShared(t *testing.T) {
	limittest.RunShared(t, func(t *testing.T, clock *limittest.Clock) (limit.Limiter, limit.Limiter) {
		cfg := fakeClockConfig(clock)
		cfg.Prefix, cfg.Timeout = testPrefix(t), testTimeout
		other, err := Open(t.Context(), testURL())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { other.Close() })
		b, err := NewLimiter(other, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return newTestLimiter(t, cfg), b
	})
}

// decideCalls numbers decideInRedis's calls, so that each has keys of its
// own.
var decideCalls atomic.Int64

// decideInRedis is limit.Decide computed by the script: it stores states
// under fresh keys, runs the script at now and returns what it decided,
// after checking that what it stored is what it returned (admitted) or
// untouched (refused), and that each key expires when its bucket is full.
// l's ExpirySlack must outlast the test: the time passed may be far from
// Redis's.
func decideInRedis(tb testing.TB, l *Limiter) func(now int64, rules []limit.Rule, states []limit.State) limit.Decision {
	return func(now int64, rules []limit.Rule, states []limit.State) limit.Decision {
		tb.Helper()
		ctx := context.Background()
		call := decideCalls.Add(1)
		keys := make([]string, len(states))
		args := []any{now, l.slackMS}
		before := make([]map[string]string, len(states))
		for i, s := range states {
			keys[i] = fmt.Sprintf("%sdecide:%d:%d", l.prefix, call, i)
			before[i] = map[string]string{"b": strconv.FormatInt(s.Burst, 10), "m": strconv.FormatInt(s.Minute, 10), "t": strconv.FormatInt(s.At, 10)}
			if err := testClient.HSet(ctx, keys[i], before[i]).Err(); err != nil {
				tb.Fatal(err)
			}
			args = append(args, rules[i].Burst, rules[i].BurstRefillPerMinute, rules[i].PerMinute)
		}
		reply, err := l.run(ctx, keys, args)
		if err != nil {
			tb.Fatal(err)
		}
		d := limit.Decision{Admitted: reply[0] == 1, RetryAfter: reply[1]}
		for i := range states {
			states[i] = limit.State{Burst: reply[2+3*i], Minute: reply[3+3*i], At: reply[4+3*i]}
			want := before[i]
			if d.Admitted {
				want = map[string]string{"b": strconv.FormatInt(states[i].Burst, 10), "m": strconv.FormatInt(states[i].Minute, 10), "t": strconv.FormatInt(states[i].At, 10)}
			}
			stored, err := testClient.HGetAll(ctx, keys[i]).Result()
			if err != nil {
				tb.Fatal(err)
			}
			if fmt.Sprint(stored) != fmt.Sprint(want) {
				tb.Errorf("bucket %d stored %v, want %v", i, stored, want)
			}
			ttl, err := testClient.PTTL(ctx, keys[i]).Result()
			if err != nil {
				tb.Fatal(err)
			}
			if !d.Admitted {
				if ttl != -1 {
					tb.Errorf("bucket %d of a refusal expires in %v; a refusal writes nothing", i, ttl)
				}
				continue
			}
			// The key expires at the whole millisecond at or after the
			// bucket is full (plus the slack), less the little real time
			// since the script ran.
			wantTTL := time.Duration((states[i].FullAt(rules[i])-now+999)/1000+l.slackMS) * time.Millisecond
			if ttl > wantTTL || ttl < wantTTL-time.Second {
				tb.Errorf("bucket %d expires in %v, want %v (full at %d µs, now %d)", i, ttl, wantTTL, states[i].FullAt(rules[i]), now)
			}
		}
		return d
	}
}

// decideConfig is the limiter decideInRedis runs on.
var decideConfig = Config{ExpirySlack: time.Hour}

func TestDecideVectors(t *testing.T) {
	l := newTestLimiter(t, decideConfig)
	limittest.CheckDecide(t, decideInRedis(t, l))
}

// TestExpiryVectors checks each vector's FullAt column against the expiry
// the script sets.
func TestExpiryVectors(t *testing.T) {
	l := newTestLimiter(t, decideConfig)
	decide := decideInRedis(t, l)
	for _, v := range limittest.Vectors() {
		if !v.Admitted {
			continue
		}
		states := append([]limit.State(nil), v.Before...)
		decide(v.Now, v.Rules, states)
		for i, s := range states {
			if got := s.FullAt(v.Rules[i]); got != v.FullAt[i] {
				t.Errorf("%s: bucket %d full at %d, want %d", v.Name, i, got, v.FullAt[i])
			}
		}
	}
}

// randomCase is a call of Decide over wide ranges: rules up to
// limit.MaxRuleValue, balances anywhere from empty to a larger rule's cap
// (a rule lowered since), stored times up to the year 2255 and elapsed
// times from the clock running backwards to centuries.
func randomCase(rng *mrand.Rand) (now int64, rules []limit.Rule, states []limit.State) {
	field := func() int {
		switch rng.IntN(4) {
		case 0:
			return 1 + rng.IntN(10)
		case 1:
			return limit.MaxRuleValue - rng.IntN(10)
		case 2:
			return 1 + rng.IntN(5000)
		}
		return 1 + rng.IntN(limit.MaxRuleValue)
	}
	balance := func(capacity int64) int64 {
		switch rng.IntN(5) {
		case 0:
			return capacity
		case 1:
			return limit.Unit - 1 + rng.Int64N(3)
		case 2:
			return rng.Int64N(limit.Unit)
		case 3:
			return rng.Int64N(int64(limit.MaxRuleValue)*limit.Unit + 1)
		}
		return rng.Int64N(capacity + 1)
	}
	const maxTime = 1 << 52 // beyond the year 2100 in Unix µs
	now = rng.Int64N(maxTime)
	n := 1 + rng.IntN(4)
	for range n {
		r := limit.Rule{Burst: field(), BurstRefillPerMinute: field(), PerMinute: field()}
		at := now
		switch rng.IntN(5) {
		case 0:
			at = rng.Int64N(maxTime)
		case 1:
			at = max(now-rng.Int64N(1_000_000_000), 0)
		case 2:
			at = now + rng.Int64N(1_000_000)
		case 3:
			at = max(now-rng.Int64N(int64(limit.Unit)*3), 0)
		}
		rules = append(rules, r)
		states = append(states, limit.State{
			Burst:  balance(int64(r.Burst) * limit.Unit),
			Minute: balance(int64(r.PerMinute) * limit.Unit),
			At:     at,
		})
	}
	return now, rules, states
}

// TestScriptMatchesDecide compares the script with limit.Decide over
// thousands of random calls.
func TestScriptMatchesDecide(t *testing.T) {
	l := newTestLimiter(t, decideConfig)
	decide := decideInRedis(t, l)
	rng := mrand.New(mrand.NewPCG(3, 4))
	cases := 2000
	if testing.Short() {
		cases = 200
	}
	for range cases {
		now, rules, states := randomCase(rng)
		compareDecide(t, decide, now, rules, states)
	}
}

func compareDecide(t *testing.T, decide func(int64, []limit.Rule, []limit.State) limit.Decision, now int64, rules []limit.Rule, states []limit.State) {
	t.Helper()
	want := append([]limit.State(nil), states...)
	wantD := limit.Decide(now, rules, want)
	got := append([]limit.State(nil), states...)
	gotD := decide(now, rules, got)
	if gotD != wantD || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("Decide(%d, %+v, %+v):\nscript %+v %+v\nGo     %+v %+v", now, rules, states, gotD, got, wantD, want)
	}
}

// FuzzScriptDecide compares the script with limit.Decide on one bucket.
func FuzzScriptDecide(f *testing.F) {
	f.Add(int64(0), int64(0), int64(0), int64(0), 1, 1, 1)
	f.Add(int64(1<<52), int64(0), int64(6e15), int64(6e15), limit.MaxRuleValue, limit.MaxRuleValue, limit.MaxRuleValue)
	f.Add(int64(3_155_760_000_000_000), int64(0), int64(0), int64(0), 10, 1200, 120)
	f.Add(int64(900_000), int64(1_000_000), int64(0), int64(110*limit.Unit), 10, 1200, 120)
	f.Add(int64(1_000), int64(0), int64(0), int64(0), 3, 7, 7)
	l := newTestLimiter(f, decideConfig)
	f.Fuzz(func(t *testing.T, now, at, b, m int64, burst, burstRate, perMinute int) {
		clamp := func(x, lo, hi int64) int64 { return min(max(x, lo), hi) }
		const maxTime, maxBalance = 1 << 52, int64(limit.MaxRuleValue) * limit.Unit
		rule := limit.Rule{
			Burst:                int(clamp(int64(burst), 1, limit.MaxRuleValue)),
			BurstRefillPerMinute: int(clamp(int64(burstRate), 1, limit.MaxRuleValue)),
			PerMinute:            int(clamp(int64(perMinute), 1, limit.MaxRuleValue)),
		}
		state := limit.State{Burst: clamp(b, 0, maxBalance), Minute: clamp(m, 0, maxBalance), At: clamp(at, 0, maxTime)}
		compareDecide(t, decideInRedis(t, l), clamp(now, 0, maxTime), []limit.Rule{rule}, []limit.State{state})
	})
}

// TestMatchesMemory replays one random history through the memory back end
// and through Redis: every Result must be the same.
func TestMatchesMemory(t *testing.T) {
	clock := limittest.NewClock()
	mem := limit.NewMemory(limit.MemoryConfig{Clock: clock})
	red := newTestLimiter(t, fakeClockConfig(clock))
	rng := mrand.New(mrand.NewPCG(5, 6))
	odd := limit.Rule{Burst: 3, BurstRefillPerMinute: 7, PerMinute: 11}
	ctx := context.Background()
	for i := range 3000 {
		subject := fmt.Sprintf("store:%d/mode:test", rng.IntN(3))
		var buckets []limit.Bucket
		switch rng.IntN(3) {
		case 0:
			buckets = []limit.Bucket{{Kind: limit.KindCharge, Key: subject, Rule: limit.ChargeRule()}}
		case 1:
			buckets = []limit.Bucket{
				{Kind: limit.KindRoute, Key: subject + "|/charges/{id}", Rule: limit.RouteRule()},
				{Kind: limit.KindExact, Key: fmt.Sprintf("%s|/charges/%d", subject, rng.IntN(4)), Rule: limit.ExactRule()},
			}
		default:
			buckets = []limit.Bucket{{Kind: limit.KindExact, Key: subject + "|odd", Rule: odd}}
		}
		want, werr := mem.Admit(ctx, buckets)
		got, gerr := red.Admit(ctx, buckets)
		if werr != nil || gerr != nil {
			t.Fatalf("request %d: memory %v, redis %v", i, werr, gerr)
		}
		if got.Admitted != want.Admitted || got.RetryAfter != want.RetryAfter || fmt.Sprint(got.Buckets()) != fmt.Sprint(want.Buckets()) {
			t.Fatalf("request %d %v:\nredis  %v %v %v\nmemory %v %v %v", i, buckets,
				got.Admitted, got.RetryAfter, got.Buckets(), want.Admitted, want.RetryAfter, want.Buckets())
		}
		switch rng.IntN(4) {
		case 0:
			clock.Advance(time.Duration(rng.IntN(100)) * time.Millisecond)
		case 1:
			clock.Advance(time.Duration(rng.IntN(2000)) * time.Microsecond)
		case 2:
			if rng.IntN(50) == 0 {
				clock.Advance(time.Duration(rng.IntN(120)) * time.Second)
			}
		}
	}
}

// TestRedisClock runs on Redis's own clock, as production does: requests
// are counted, and a key is gone once its bucket is full again.
func TestRedisClock(t *testing.T) {
	l := newTestLimiter(t, Config{})
	ctx := context.Background()
	// Full again 100 µs after a request, so the key lives 1 ms.
	quick := limit.Rule{Burst: 1, BurstRefillPerMinute: 600_000, PerMinute: 600_000}
	slow := limit.Rule{Burst: 2, BurstRefillPerMinute: 1, PerMinute: 2}
	buckets := []limit.Bucket{
		{Kind: limit.KindRoute, Key: "quick", Rule: quick},
		{Kind: limit.KindExact, Key: "slow", Rule: slow},
	}
	for i, wantAdmitted := range []bool{true, true, false} {
		time.Sleep(5 * time.Millisecond)
		res, err := l.Admit(ctx, buckets)
		if err != nil {
			t.Fatal(err)
		}
		if res.Admitted != wantAdmitted {
			t.Fatalf("request %d: admitted = %v, want %v", i+1, res.Admitted, wantAdmitted)
		}
	}
	ttl, err := testClient.PTTL(ctx, l.key(buckets[1])).Result()
	if err != nil {
		t.Fatal(err)
	}
	// Two requests out of a bucket refilling 1 (burst) a minute.
	if ttl < 110*time.Second || ttl > 120*time.Second {
		t.Errorf("slow bucket expires in %v, want about 2 min", ttl)
	}
	deadline := time.Now().Add(5 * time.Second)
	for testClient.Exists(ctx, l.key(buckets[0])).Val() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("a bucket full again for seconds is still stored")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestKeys: kinds never share a key; any bytes are a key; a long key is
// stored as a digest of bounded length, still one bucket per text.
func TestKeys(t *testing.T) {
	clock := limittest.NewClock()
	l := newTestLimiter(t, fakeClockConfig(clock))
	ctx := context.Background()
	admit := func(buckets ...limit.Bucket) limit.Result {
		t.Helper()
		res, err := l.Admit(ctx, buckets)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	remaining := func(res limit.Result) []int {
		var r []int
		for _, b := range res.Buckets() {
			r = append(r, b.Remaining)
		}
		return r
	}
	long := strings.Repeat("/x", 5000)
	for _, tc := range []struct {
		name    string
		buckets []limit.Bucket
	}{
		{"same text, two kinds", []limit.Bucket{
			{Kind: limit.KindRoute, Key: "s|/charges", Rule: limit.RouteRule()},
			{Kind: limit.KindExact, Key: "s|/charges", Rule: limit.ExactRule()},
		}},
		{"any bytes", []limit.Bucket{
			{Kind: limit.KindRoute, Key: "s|\x00\r\n*1\r\n$4\r\nPING{}\xff", Rule: limit.RouteRule()},
			{Kind: limit.KindExact, Key: "s|'); redis.call('FLUSHALL') --", Rule: limit.ExactRule()},
		}},
		{"long keys differing at the end", []limit.Bucket{
			{Kind: limit.KindExact, Key: long + "a", Rule: limit.ExactRule()},
			{Kind: limit.KindExact, Key: long + "b", Rule: limit.ExactRule()},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			admit(tc.buckets...)
			res := admit(tc.buckets...)
			want := []int{tc.buckets[0].Rule.Burst - 2, tc.buckets[1].Rule.Burst - 2}
			if got := remaining(res); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("remaining after two requests = %v, want %v", got, want)
			}
			for _, b := range tc.buckets {
				k := l.key(b)
				if len(k) > len(l.prefix)+len("exact:")+maxKeyText {
					t.Errorf("key of %d bytes stored as %d bytes", len(b.Key), len(k))
				}
				if testClient.Exists(ctx, k).Val() != 1 {
					t.Errorf("no key %q", k)
				}
			}
		})
	}
	// A text of exactly maxKeyText bytes is kept as it is; one more byte is
	// digested, and the two never meet.
	short, hashed := strings.Repeat("k", maxKeyText), strings.Repeat("k", maxKeyText+1)
	if !strings.HasSuffix(l.key(limit.Bucket{Kind: limit.KindExact, Key: short}), ":"+short) {
		t.Errorf("a %d-byte key is not kept as it is", maxKeyText)
	}
	if k := l.key(limit.Bucket{Kind: limit.KindExact, Key: hashed}); strings.Contains(k, short) {
		t.Errorf("a %d-byte key is stored as it is: %q", maxKeyText+1, k)
	}
}

// TestNoScriptFallback: a Redis that does not hold the script (restarted,
// or SCRIPT FLUSH) gets it sent in full.
func TestNoScriptFallback(t *testing.T) {
	l := newTestLimiter(t, Config{})
	// The same script under a SHA no Redis has seen.
	l.script = goredis.NewScript(decideSource + "\n-- " + l.prefix)
	if exists, err := l.script.Exists(t.Context(), testClient).Result(); err != nil || exists[0] {
		t.Fatalf("script loaded already (%v, %v)", exists, err)
	}
	res, err := l.Admit(t.Context(), []limit.Bucket{{Kind: limit.KindCharge, Key: "s", Rule: limit.ChargeRule()}})
	if err != nil || !res.Admitted {
		t.Fatalf("first request on a Redis without the script: %v, %v", res.Admitted, err)
	}
}

// wantUnavailable checks that a failed Admit is an error, admits nothing,
// and returned within bound.
func wantUnavailable(t *testing.T, l *Limiter, bound time.Duration) {
	t.Helper()
	type outcome struct {
		res limit.Result
		err error
	}
	done := make(chan outcome, 1)
	start := time.Now()
	go func() {
		res, err := l.Admit(context.Background(), []limit.Bucket{{Kind: limit.KindCharge, Key: "s", Rule: limit.ChargeRule()}})
		done <- outcome{res, err}
	}()
	select {
	case o := <-done:
		if !errors.Is(o.err, ErrUnavailable) {
			t.Errorf("err = %v, want ErrUnavailable", o.err)
		}
		if o.res.Admitted {
			t.Error("admitted without Redis")
		}
		t.Logf("failed after %v: %v", time.Since(start), o.err)
	case <-time.After(bound):
		t.Fatalf("Admit still waiting after %v", bound)
	}
}

func TestUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	opts, err := options("redis://" + addr)
	if err != nil {
		t.Fatal(err)
	}
	client := goredis.NewClient(opts)
	t.Cleanup(func() { client.Close() })
	l, err := NewLimiter(client, Config{Timeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	wantUnavailable(t, l, 2*time.Second)
}

// TestHungRedis: a server that accepts and never answers turns into quick
// errors (and so 503s), not requests piling up.
func TestHungRedis(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	url := "redis://" + ln.Addr().String()

	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	if _, err := Open(ctx, url); err == nil {
		t.Error("Open succeeded against a server that never answers")
	}

	opts, err := options(url)
	if err != nil {
		t.Fatal(err)
	}
	client := goredis.NewClient(opts)
	t.Cleanup(func() { client.Close() })
	l, err := NewLimiter(client, Config{Timeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		wantUnavailable(t, l, time.Second)
	}
}

func TestConfig(t *testing.T) {
	plain := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1"})
	t.Cleanup(func() { plain.Close() })
	if _, err := NewLimiter(plain, Config{}); err == nil {
		t.Error("NewLimiter accepted a client that ignores context deadlines")
	}
	if _, err := NewLimiter(testClient, Config{ExpirySlack: -time.Second}); err == nil {
		t.Error("NewLimiter accepted a negative ExpirySlack")
	}
	_, err := options("redis://user:hunter2@[::1")
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("a bad URL gives %v; want an error without the password", err)
	}
}
