package limit_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/kessai/kessai/server/kessaitest"
	"github.com/kessai/kessai/server/limit"
	"github.com/kessai/kessai/server/limit/limittest"
)

func TestMemoryConformance(t *testing.T) {
	for _, shards := range []int{1, limit.DefaultShards} {
		t.Run(fmt.Sprintf("shards=%d", shards), func(t *testing.T) {
			limittest.Run(t, func(t *testing.T, c *limittest.Clock) limit.Limiter {
				return limit.NewMemory(limit.MemoryConfig{Clock: c, Shards: shards})
			})
		})
	}
}

func TestMemoryShared(t *testing.T) {
	limittest.RunShared(t, func(t *testing.T, c *limittest.Clock) (limit.Limiter, limit.Limiter) {
		l := limit.NewMemory(limit.MemoryConfig{Clock: c})
		return l, l
	})
}

func admit(t *testing.T, l limit.Limiter, buckets ...limit.Bucket) limit.Result {
	t.Helper()
	res, err := l.Admit(context.Background(), buckets)
	if err != nil {
		t.Fatalf("Admit: %v", err)
	}
	return res
}

func chargeBucket(key string) limit.Bucket {
	return limit.Bucket{Kind: limit.KindCharge, Key: key, Rule: limit.ChargeRule()}
}

func wantKeys(t *testing.T, l *limit.Memory, want int) {
	t.Helper()
	if got := l.Keys(); got != want {
		t.Errorf("Keys() = %d, want %d", got, want)
	}
}

func TestMemorySweepDropsFullBuckets(t *testing.T) {
	c := limittest.NewClock()
	l := limit.NewMemory(limit.MemoryConfig{Clock: c})
	admit(t, l,
		limit.Bucket{Kind: limit.KindRoute, Key: "s|/charges/{id}", Rule: limit.RouteRule()},
		limit.Bucket{Kind: limit.KindExact, Key: "s|/charges/a", Rule: limit.ExactRule()})
	wantKeys(t, l, 2)

	// The route bucket is full again after 50 ms; the exact bucket's minute
	// allowance needs 500 ms.
	for _, step := range []struct {
		advance time.Duration
		keys    int
	}{
		{49 * time.Millisecond, 2},
		{time.Millisecond, 1},
		{449 * time.Millisecond, 1},
		{time.Millisecond, 0},
	} {
		c.Advance(step.advance)
		l.Sweep()
		wantKeys(t, l, step.keys)
	}
}

func TestMemoryRefusalDropsFullBuckets(t *testing.T) {
	c := limittest.NewClock()
	l := limit.NewMemory(limit.MemoryConfig{Clock: c})
	slow := limit.Bucket{Kind: limit.KindRoute, Key: "slow", Rule: limit.Rule{Burst: 1, BurstRefillPerMinute: 1, PerMinute: 1}}
	fast := limit.Bucket{Kind: limit.KindExact, Key: "fast", Rule: limit.Rule{Burst: 1, BurstRefillPerMinute: limit.MaxRuleValue, PerMinute: limit.MaxRuleValue}}
	admit(t, l, slow, fast)
	wantKeys(t, l, 2)
	c.Advance(time.Millisecond)
	if res := admit(t, l, slow, fast); res.Admitted {
		t.Fatal("admitted past an empty bucket")
	}
	// The refusal found the fast bucket full and forgot it.
	wantKeys(t, l, 1)
}

// TestMemoryBoundedWithoutSweeper: with nobody calling Sweep, the table
// stays in proportion to the live buckets as keys come and go.
func TestMemoryBoundedWithoutSweeper(t *testing.T) {
	c := limittest.NewClock()
	l := limit.NewMemory(limit.MemoryConfig{Clock: c, Shards: 1})
	most := 0
	for i := range 100_000 {
		// Each key is used once and is full again 20 ms later.
		admit(t, l, chargeBucket(fmt.Sprint("k", i)))
		c.Advance(10 * time.Millisecond)
		most = max(most, l.Keys())
	}
	if most > 512 {
		t.Errorf("table grew to %d keys with at most 3 live", most)
	}
}

func TestMemoryKeyCap(t *testing.T) {
	c := limittest.NewClock()
	const maxKeys = 16
	l := limit.NewMemory(limit.MemoryConfig{Clock: c, Shards: 1, MaxKeys: maxKeys, SweepBackoff: time.Second})
	key := func(i int) limit.Bucket { return chargeBucket(fmt.Sprint("k", i)) }

	// Key 0 is full again at 20 ms, keys 1–14 at 60 ms, the slow key (empty
	// now) after a minute.
	slow := limit.Bucket{Kind: limit.KindCharge, Key: "slow", Rule: limit.Rule{Burst: 1, BurstRefillPerMinute: 1, PerMinute: 1}}
	admit(t, l, key(0))
	for i := 1; i < maxKeys-1; i++ {
		for range 3 {
			admit(t, l, key(i))
		}
	}
	admit(t, l, slow)
	wantKeys(t, l, maxKeys)

	refusedFull := func(what string, b limit.Bucket, retryAfter time.Duration) {
		t.Helper()
		res, err := l.Admit(context.Background(), []limit.Bucket{b})
		if !errors.Is(err, limit.ErrFull) {
			t.Fatalf("%s: err = %v, want ErrFull", what, err)
		}
		if res.Admitted || res.Buckets()[0].Remaining != 100 || res.RetryAfter != retryAfter {
			t.Fatalf("%s: %+v, want refused, remaining 100, retry after %v", what, res, retryAfter)
		}
	}
	refusedFull("a new key at the cap", key(16), 20*time.Millisecond)
	// Keys already held keep working.
	if res := admit(t, l, key(1)); !res.Admitted || res.Buckets()[0].Remaining != 96 {
		t.Fatalf("held key at the cap: %+v", res)
	}
	// A refusal on the rate is still a plain refusal, whatever the table.
	if res := admit(t, l, slow, key(16)); res.Admitted {
		t.Fatal("admitted past an empty bucket")
	}

	// At 20 ms the sweep frees key 0, which leaves the table nearly full:
	// the new key gets the place, and the shard stops sweeping for 1 s.
	c.Advance(20 * time.Millisecond)
	if res := admit(t, l, key(16)); !res.Admitted || res.Buckets()[0].Remaining != 99 {
		t.Fatalf("new key after the sweep: %+v", res)
	}
	refusedFull("the next new key", key(17), time.Second)
	// Keys 1–14 are full at 60 ms, but the shard is backing off.
	c.Advance(40 * time.Millisecond)
	refusedFull("a new key while backing off", key(17), 960*time.Millisecond)
	c.Advance(960 * time.Millisecond)
	if res := admit(t, l, key(17)); !res.Admitted || res.Buckets()[0].Remaining != 99 {
		t.Fatalf("new key after the backoff: %+v", res)
	}
	wantKeys(t, l, 2) // the slow key and key 17
}

// TestMemoryGivesMemoryBack: after a flood of keys, a sweep returns the
// memory, not only the entries.
func TestMemoryGivesMemoryBack(t *testing.T) {
	c := limittest.NewClock()
	l := limit.NewMemory(limit.MemoryConfig{Clock: c})
	before := heapAlloc()
	for i := range 200_000 {
		admit(t, l, chargeBucket(fmt.Sprint("k", i)))
	}
	flooded := heapAlloc() - before
	c.Advance(time.Second)
	l.Sweep()
	wantKeys(t, l, 0)
	if left := heapAlloc() - before; left > flooded/4 {
		t.Errorf("%d bytes held after the sweep, %d at the flood", left, flooded)
	}
	runtime.KeepAlive(l)
}

func TestMemorySweepEvery(t *testing.T) {
	kessaitest.CheckGoroutines(t)
	c := limittest.NewClock()
	l := limit.NewMemory(limit.MemoryConfig{Clock: c})
	admit(t, l, chargeBucket("k"))
	c.Advance(time.Second)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		l.SweepEvery(ctx, time.Millisecond)
		close(done)
	}()
	kessaitest.WaitFor(t, 5*time.Second, "SweepEvery to drop the full bucket", func() bool { return l.Keys() == 0 })
	cancel()
	<-done
}

// TestMemoryIdleKeySize holds the design goal of at most ~150 bytes per
// idle key. BenchmarkIdleKeyMemory measures a million.
func TestMemoryIdleKeySize(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates 100,000 keys")
	}
	if perKey := idleKeyBytes(100_000); perKey > 150 {
		t.Errorf("%.0f bytes per idle key, want at most 150", perKey)
	}
}

// idleKeyBytes is the heap per exact key held, n distinct keys all live.
func idleKeyBytes(n int) float64 {
	c := limittest.NewClock()
	before := heapAlloc()
	l := limit.NewMemory(limit.MemoryConfig{Clock: c, MaxKeys: 2 * n})
	buckets := []limit.Bucket{{Kind: limit.KindExact, Rule: limit.ExactRule()}}
	for i := range n {
		buckets[0].Key = fmt.Sprintf("store:11111111-2222-3333-4444-555555555555/mode:test|/charges/%d?polling=true", i)
		if _, err := l.Admit(context.Background(), buckets); err != nil {
			panic(err)
		}
	}
	if l.Keys() != n {
		panic(fmt.Sprintf("%d keys held, want %d", l.Keys(), n))
	}
	perKey := float64(heapAlloc()-before) / float64(n)
	runtime.KeepAlive(l)
	return perKey
}

func heapAlloc() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// TestMemoryManyBuckets: a request of more buckets than a Result holds
// inline still gets every one back, in its order, each counted.
func TestMemoryManyBuckets(t *testing.T) {
	for _, n := range []int{1, limit.InlineBuckets, limit.InlineBuckets + 1, 9} {
		l := limit.NewMemory(limit.MemoryConfig{Clock: limittest.NewClock()})
		var buckets []limit.Bucket
		for i := range n {
			rule := limit.Rule{Burst: 10 + i, BurstRefillPerMinute: 60, PerMinute: 100 + i}
			buckets = append(buckets, limit.Bucket{Kind: limit.Kind(1 + i%3), Key: fmt.Sprintf("k%d", i), Rule: rule})
		}
		for round := 1; round <= 2; round++ {
			res := admit(t, l, buckets...)
			got := res.Buckets()
			if !res.Admitted || len(got) != n {
				t.Fatalf("%d buckets, round %d: admitted %v with %d buckets", n, round, res.Admitted, len(got))
			}
			for i, b := range got {
				if b.Kind != buckets[i].Kind || b.Rule != buckets[i].Rule || b.Remaining != buckets[i].Rule.Burst-round {
					t.Errorf("%d buckets, round %d: bucket %d is %+v, want %v %+v with %d left", n, round, i, b, buckets[i].Kind, buckets[i].Rule, buckets[i].Rule.Burst-round)
				}
			}
		}
	}
}

// TestMemoryMatchesDecide: under random traffic over thousands of keys, with
// tables growing, shrinking and dropping full buckets all the while, every
// answer is what Decide gives over a plain map that never forgets a bucket.
func TestMemoryMatchesDecide(t *testing.T) {
	rules := map[limit.Kind]limit.Rule{
		limit.KindCharge: {Burst: 2, BurstRefillPerMinute: 600, PerMinute: 900},
		limit.KindRoute:  {Burst: 3, BurstRefillPerMinute: 1200, PerMinute: 300},
		limit.KindExact:  {Burst: 1, BurstRefillPerMinute: 6000, PerMinute: 6000},
	}
	type key struct {
		kind limit.Kind
		name string
	}
	for _, shards := range []int{1, limit.DefaultShards} {
		t.Run(fmt.Sprintf("shards=%d", shards), func(t *testing.T) {
			c := limittest.NewClock()
			l := limit.NewMemory(limit.MemoryConfig{Clock: c, Shards: shards})
			states := make(map[key]limit.State)
			var now int64 // microseconds, as Memory counts them
			r := rand.New(rand.NewPCG(3, 4))
			for step := range 60_000 {
				advance := time.Duration(r.IntN(300)) * time.Microsecond
				c.Advance(advance)
				now += advance.Microseconds()
				if step%5_000 == 0 {
					l.Sweep()
				}
				// A few hot keys and a long tail, one to three buckets.
				var buckets []limit.Bucket
				for range 1 + r.IntN(3) {
					k := key{limit.Kind(1 + r.IntN(3)), fmt.Sprint("k", r.IntN(1+r.IntN(4_000)))}
					if !slices.ContainsFunc(buckets, func(b limit.Bucket) bool { return b.Kind == k.kind && b.Key == k.name }) {
						buckets = append(buckets, limit.Bucket{Kind: k.kind, Key: k.name, Rule: rules[k.kind]})
					}
				}
				var (
					want      []limit.State
					rulesUsed []limit.Rule
				)
				for _, b := range buckets {
					s, ok := states[key{b.Kind, b.Key}]
					if !ok {
						s = limit.FullState(b.Rule, now)
					}
					want, rulesUsed = append(want, s), append(rulesUsed, b.Rule)
				}
				d := limit.Decide(now, rulesUsed, want)
				if d.Admitted {
					for i, b := range buckets {
						states[key{b.Kind, b.Key}] = want[i]
					}
				}
				res := admit(t, l, buckets...)
				if res.Admitted != d.Admitted || res.RetryAfter != time.Duration(d.RetryAfter)*time.Microsecond {
					t.Fatalf("step %d: admitted %v, retry after %v; Decide says %v, %v µs", step, res.Admitted, res.RetryAfter, d.Admitted, d.RetryAfter)
				}
				for i, got := range res.Buckets() {
					if got.Remaining != want[i].Remaining() {
						t.Fatalf("step %d: bucket %v %q has %d left, Decide says %d", step, buckets[i].Kind, buckets[i].Key, got.Remaining, want[i].Remaining())
					}
				}
			}
			if l.Keys() > len(states) {
				t.Errorf("%d keys held, more than the %d ever used", l.Keys(), len(states))
			}
		})
	}
}
