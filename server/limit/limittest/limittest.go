// Package limittest is the conformance kit of package limit: every back end
// (memory, Redis) must pass the same vectors, so that a request is admitted
// or refused the same way whichever back end an instance runs.
//
//   - Run replays the contract's vectors V1–V11 (each written out where it
//     is checked) and a few edge cases against a
//     Limiter; RunShared replays V12 against two limiters sharing a store.
//   - CheckDecide runs the arithmetic vectors (Vectors) against a function
//     with the signature of limit.Decide, such as a wrapper that loads the
//     states into Redis, runs the Lua script and reads them back.
//
// Time is a Clock that only moves when told, and a back end under test must
// read it (a Redis back end passes it to its script instead of using TIME).
package limittest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/kessai/kessai/server/kessaitest"
	"github.com/kessai/kessai/server/limit"
)

// Clock is the test kit's fake clock, so that a back end's tests and the
// gateway's share one.
type Clock = kessaitest.Clock

// NewClock returns a clock stopped at an arbitrary fixed instant.
func NewClock() *Clock {
	return kessaitest.NewClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
}

// NewLimiter returns a fresh, empty limiter that reads clock.
type NewLimiter func(t *testing.T, clock *Clock) limit.Limiter

// The keys a standard request and a charge operation of one subject count
// against, built the way the HTTP layer builds them.
func standard(subject, route, path string) []limit.Bucket {
	return []limit.Bucket{
		{Kind: limit.KindRoute, Key: subject + "|" + route, Rule: limit.RouteRule()},
		{Kind: limit.KindExact, Key: subject + "|" + path, Rule: limit.ExactRule()},
	}
}

func charge(subject string) []limit.Bucket {
	return []limit.Bucket{{Kind: limit.KindCharge, Key: subject, Rule: limit.ChargeRule()}}
}

const subject = "store:11111111-2222-3333-4444-555555555555/mode:test"

func getCharge(id string) []limit.Bucket {
	return standard(subject, "/charges/{id}", "/charges/"+id)
}

func admit(t *testing.T, l limit.Limiter, buckets []limit.Bucket) limit.Result {
	t.Helper()
	res, err := l.Admit(context.Background(), buckets)
	if err != nil {
		t.Fatalf("Admit(%v): %v", buckets, err)
	}
	if len(res.Buckets()) != len(buckets) {
		t.Fatalf("Admit returned %d buckets, want %d", len(res.Buckets()), len(buckets))
	}
	for i, b := range res.Buckets() {
		if b.Kind != buckets[i].Kind || b.Rule != buckets[i].Rule {
			t.Fatalf("result bucket %d is %v %+v, want %v %+v", i, b.Kind, b.Rule, buckets[i].Kind, buckets[i].Rule)
		}
	}
	return res
}

// want checks one result: admitted or not, and floor(b) of each bucket by
// kind (-1 skips a kind).
func want(t *testing.T, what string, res limit.Result, admitted bool, route, exact, charge int) {
	t.Helper()
	if res.Admitted != admitted {
		t.Errorf("%s: admitted = %v, want %v", what, res.Admitted, admitted)
	}
	for _, k := range []struct {
		kind limit.Kind
		want int
	}{{limit.KindRoute, route}, {limit.KindExact, exact}, {limit.KindCharge, charge}} {
		b, ok := res.Find(k.kind)
		switch {
		case k.want < 0 && ok:
			t.Errorf("%s: unexpected %s bucket", what, k.kind)
		case k.want >= 0 && !ok:
			t.Errorf("%s: no %s bucket", what, k.kind)
		case ok && b.Remaining != k.want:
			t.Errorf("%s: %s remaining = %d, want %d", what, k.kind, b.Remaining, k.want)
		}
	}
}

func wantRetryAfter(t *testing.T, what string, res limit.Result, d time.Duration) {
	t.Helper()
	if res.RetryAfter != d {
		t.Errorf("%s: RetryAfter = %v, want %v", what, res.RetryAfter, d)
	}
}

// drain sends n GETs of one path at the current time; all must be admitted.
func drain(t *testing.T, l limit.Limiter, id string, n int) {
	t.Helper()
	for i := range n {
		if res := admit(t, l, getCharge(id)); !res.Admitted {
			t.Fatalf("GET /charges/%s #%d refused", id, i+1)
		}
	}
}

// Run checks a Limiter against the spec's vectors. Every subtest gets a
// fresh limiter and clock.
func Run(t *testing.T, newLimiter NewLimiter) {
	fresh := func(t *testing.T) (limit.Limiter, *Clock) {
		t.Helper()
		c := NewClock()
		return newLimiter(t, c), c
	}
	// afterV2 is the state V3–V5 start from: the exact burst of /charges/a
	// used up at t=0 and an 11th request refused.
	afterV2 := func(t *testing.T) (limit.Limiter, *Clock) {
		t.Helper()
		l, c := fresh(t)
		drain(t, l, "a", 10)
		if admit(t, l, getCharge("a")).Admitted {
			t.Fatal("11th GET admitted")
		}
		return l, c
	}

	t.Run("V1 one GET", func(t *testing.T) {
		l, _ := fresh(t)
		res := admit(t, l, getCharge("a"))
		want(t, "GET", res, true, 29, 9, -1)
		wantRetryAfter(t, "GET", res, 0)
		if b, _ := res.Find(limit.KindExact); b.Rule.PerMinute != 120 {
			t.Errorf("exact per-minute = %d, want 120", b.Rule.PerMinute)
		}
		if b, _ := res.Find(limit.KindRoute); b.Rule.PerMinute != 1200 {
			t.Errorf("route per-minute = %d, want 1200", b.Rule.PerMinute)
		}
	})

	t.Run("V2 11th GET at once is refused", func(t *testing.T) {
		l, _ := fresh(t)
		for i := range 10 {
			want(t, fmt.Sprintf("GET #%d", i+1), admit(t, l, getCharge("a")), true, 29-i, 9-i, -1)
		}
		res := admit(t, l, getCharge("a"))
		// The route bucket shows 20: the refusal took nothing from it.
		want(t, "11th GET", res, false, 20, 0, -1)
		// One request comes back after 50 ms; the HTTP layer shows 1 s.
		wantRetryAfter(t, "11th GET", res, 50*time.Millisecond)
	})

	t.Run("V3 50 ms later one more", func(t *testing.T) {
		l, c := afterV2(t)
		c.Advance(50 * time.Millisecond)
		want(t, "GET", admit(t, l, getCharge("a")), true, 20, 0, -1)
		want(t, "next GET", admit(t, l, getCharge("a")), false, 20, 0, -1)
	})

	t.Run("V4 500 ms later ten more", func(t *testing.T) {
		l, c := afterV2(t)
		c.Advance(500 * time.Millisecond)
		for i := range 10 {
			want(t, fmt.Sprintf("GET #%d", i+1), admit(t, l, getCharge("a")), true, 29-i, 9-i, -1)
		}
		want(t, "11th GET", admit(t, l, getCharge("a")), false, 20, 0, -1)
	})

	t.Run("V5 an hour later the burst is 10, not more", func(t *testing.T) {
		l, c := afterV2(t)
		c.Advance(time.Hour)
		drain(t, l, "a", 10)
		want(t, "11th GET", admit(t, l, getCharge("a")), false, 20, 0, -1)
	})

	t.Run("V6 another id has its own exact bucket", func(t *testing.T) {
		l, _ := fresh(t)
		drain(t, l, "a", 10)
		want(t, "GET /charges/b", admit(t, l, getCharge("b")), true, 19, 9, -1)
	})

	t.Run("V7 route burst refuses and takes nothing", func(t *testing.T) {
		l, c := fresh(t)
		for i := range 30 {
			id := fmt.Sprintf("x%d", i+1)
			want(t, "GET /charges/"+id, admit(t, l, getCharge(id)), true, 29-i, 9, -1)
		}
		for range 10 {
			res := admit(t, l, getCharge("x31"))
			want(t, "GET /charges/x31", res, false, 0, 10, -1)
			wantRetryAfter(t, "GET /charges/x31", res, 50*time.Millisecond)
		}
		// Had any of the ten refusals been charged to /charges/x31, its
		// exact burst would not allow this one.
		c.Advance(50 * time.Millisecond)
		want(t, "GET /charges/x31 50 ms later", admit(t, l, getCharge("x31")), true, 0, 9, -1)
	})

	t.Run("V8 one charge operation", func(t *testing.T) {
		l, _ := fresh(t)
		res := admit(t, l, charge(subject))
		want(t, "POST /charges", res, true, -1, -1, 99)
		if b, _ := res.Find(limit.KindCharge); b.Rule.PerMinute != 3000 {
			t.Errorf("charge per-minute = %d, want 3000", b.Rule.PerMinute)
		}
	})

	t.Run("V9 101st charge operation", func(t *testing.T) {
		l, _ := fresh(t)
		for i := range 100 {
			want(t, fmt.Sprintf("POST #%d", i+1), admit(t, l, charge(subject)), true, -1, -1, 99-i)
		}
		res := admit(t, l, charge(subject))
		want(t, "POST #101", res, false, -1, -1, 0)
		wantRetryAfter(t, "POST #101", res, 20*time.Millisecond)
	})

	t.Run("V10 50 concurrent GETs admit exactly 10", func(t *testing.T) {
		l, _ := fresh(t)
		for round := range 100 {
			// Each round is another subject, so the route bucket is fresh.
			buckets := standard(fmt.Sprintf("store:s%d/mode:test", round), "/charges/{id}", "/charges/a")
			results := make([]limit.Result, 50)
			errs := make([]error, 50)
			start := make(chan struct{})
			var wg sync.WaitGroup
			for i := range results {
				wg.Go(func() {
					<-start
					results[i], errs[i] = l.Admit(context.Background(), buckets)
				})
			}
			close(start)
			wg.Wait()
			// Each admitted request saw a different balance: 9, 8, … 0.
			seen := map[int]bool{}
			for i, res := range results {
				if errs[i] != nil {
					t.Fatalf("round %d: %v", round, errs[i])
				}
				if res.Admitted {
					b, _ := res.Find(limit.KindExact)
					seen[b.Remaining] = true
				}
			}
			if len(seen) != 10 || !seen[0] || !seen[9] {
				t.Fatalf("round %d: admitted requests saw exact balances %v, want each of 0..9 once", round, seen)
			}
			admitted := 0
			for _, res := range results {
				if res.Admitted {
					admitted++
				}
			}
			if admitted != 10 {
				t.Fatalf("round %d: %d admitted, want 10", round, admitted)
			}
		}
	})

	t.Run("V11 the minute allowance binds", func(t *testing.T) {
		l, c := fresh(t)
		const step = 50 * time.Millisecond
		const requests = int(70 * time.Second / step)
		admitted := make([]bool, requests)
		for i := range admitted {
			admitted[i] = admit(t, l, getCharge("a")).Admitted
			c.Advance(step)
		}
		// The exact arithmetic: m loses 0.9 per admitted request (one taken,
		// 0.1 back per 50 ms), so requests 0–132 pass; m is then 0.2 and
		// each later one needs 10 steps (500 ms) of refill.
		for i, ok := range admitted {
			wantOK := i <= 132 || (i >= 140 && i%10 == 0)
			if ok != wantOK {
				t.Fatalf("request %d at %v: admitted = %v, want %v", i, time.Duration(i)*step, ok, wantOK)
			}
		}
		// The spec's bound: over any 60 s, at most 120 + 120.
		window := int(60 * time.Second / step)
		inWindow := 0
		for i, ok := range admitted {
			if ok {
				inWindow++
			}
			if i >= window && admitted[i-window] {
				inWindow--
			}
			if inWindow > 240 {
				t.Fatalf("%d admitted in the 60 s ending at request %d", inWindow, i)
			}
		}
	})

	t.Run("refused while the clock runs backwards", func(t *testing.T) {
		l, c := fresh(t)
		drain(t, l, "a", 10)
		c.Advance(-time.Hour)
		res := admit(t, l, getCharge("a"))
		want(t, "GET an hour back", res, false, 20, 0, -1)
		wantRetryAfter(t, "GET an hour back", res, time.Hour+50*time.Millisecond)
		c.Advance(time.Hour + 50*time.Millisecond)
		want(t, "GET back on time", admit(t, l, getCharge("a")), true, 20, 0, -1)
	})

	t.Run("a lowered rule cuts the balance", func(t *testing.T) {
		l, _ := fresh(t)
		admit(t, l, getCharge("a"))
		lowered := getCharge("a")
		lowered[1].Rule.Burst = 5
		want(t, "GET under burst 5", admit(t, l, lowered), true, 28, 4, -1)
	})

	t.Run("no buckets", func(t *testing.T) {
		l, _ := fresh(t)
		if res := admit(t, l, nil); !res.Admitted {
			t.Error("a request with no buckets was refused")
		}
	})

	t.Run("invalid buckets", func(t *testing.T) {
		l, _ := fresh(t)
		for _, tc := range []struct {
			name    string
			buckets []limit.Bucket
			err     error
		}{
			{"no kind", []limit.Bucket{{Key: "k", Rule: limit.ExactRule()}}, nil},
			{"zero rule", []limit.Bucket{{Kind: limit.KindExact, Key: "k"}}, nil},
			{"rule too large", []limit.Bucket{{Kind: limit.KindExact, Key: "k", Rule: limit.Rule{Burst: limit.MaxRuleValue + 1, BurstRefillPerMinute: 1, PerMinute: 1}}}, nil},
			{"same bucket twice", append(getCharge("a"), getCharge("a")[1]), limit.ErrDuplicateBucket},
		} {
			res, err := l.Admit(context.Background(), tc.buckets)
			if err == nil || (tc.err != nil && !errors.Is(err, tc.err)) {
				t.Errorf("%s: err = %v, want %v", tc.name, err, tc.err)
			}
			if res.Admitted {
				t.Errorf("%s: admitted", tc.name)
			}
		}
		// Nothing was counted by the failed calls.
		want(t, "GET", admit(t, l, getCharge("a")), true, 29, 9, -1)
	})
}

// RunShared is V12: two limiters over one shared store, 50 concurrent GETs
// split between them, admit exactly 10.
func RunShared(t *testing.T, newPair func(t *testing.T, clock *Clock) (limit.Limiter, limit.Limiter)) {
	a, b := newPair(t, NewClock())
	for round := range 20 {
		buckets := standard(fmt.Sprintf("store:s%d/mode:test", round), "/charges/{id}", "/charges/a")
		var admitted sync.WaitGroup
		var mu sync.Mutex
		count := 0
		start := make(chan struct{})
		for i := range 50 {
			l := a
			if i%2 == 1 {
				l = b
			}
			admitted.Go(func() {
				<-start
				res, err := l.Admit(context.Background(), buckets)
				if err != nil {
					t.Error(err)
					return
				}
				if res.Admitted {
					mu.Lock()
					count++
					mu.Unlock()
				}
			})
		}
		close(start)
		admitted.Wait()
		if count != 10 {
			t.Fatalf("round %d: %d admitted, want 10", round, count)
		}
	}
}
