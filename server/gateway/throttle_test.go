package gateway

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/kessai/kessai/server/kessaitest"
	"github.com/kessai/kessai/server/limit"
	"github.com/kessai/kessai/server/payment"
)

// TestThrottleBurst: a key allows its whole burst at once, then PerMinute
// attempts a minute, on the limiter the gateway uses (a minute allowance
// of PerMinute used to cap the burst: 2 sign-in attempts instead of 5).
func TestThrottleBurst(t *testing.T) {
	clock := kessaitest.NewClock(time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC))
	th := &limitThrottle{}
	th.set(limit.NewMemory(limit.MemoryConfig{Clock: clock}))
	ctx := context.Background()
	keys := []payment.ThrottleKey{{Key: "signin/account+ip/a/ip", Burst: 5, PerMinute: 2}, {Key: "signin/ip/ip", Burst: 30, PerMinute: 10}}
	for i := range 5 {
		if wait, err := th.Take(ctx, keys); err != nil || wait != 0 {
			t.Fatalf("attempt %d: wait %v, error %v; want it admitted", i+1, wait, err)
		}
	}
	wait, err := th.Take(ctx, keys)
	if err != nil || wait < 29*time.Second || wait > 30*time.Second {
		t.Fatalf("attempt 6: wait %v, error %v; want about 30s (2 a minute)", wait, err)
	}
	clock.Advance(30 * time.Second)
	if wait, err := th.Take(ctx, keys); err != nil || wait != 0 {
		t.Fatalf("30 s later: wait %v, error %v; want one more attempt", wait, err)
	}
	if wait, _ := th.Take(ctx, keys); wait == 0 {
		t.Fatal("a second attempt 30 s later was admitted")
	}
	// The address's own key: 30 at once, across accounts.
	for i := range 30 {
		k := []payment.ThrottleKey{{Key: "signin/ip/other", Burst: 30, PerMinute: 10}}
		if wait, err := th.Take(ctx, k); err != nil || wait != 0 {
			t.Fatalf("address attempt %d: wait %v, error %v", i+1, wait, err)
		}
	}
}

// decisionMeter keeps the rate-limit decisions it is told, by class.
type decisionMeter struct{ got []string }

func (m *decisionMeter) Request(string, string, string, int, time.Duration) {}
func (m *decisionMeter) RateLimit(class, decision string) {
	m.got = append(m.got, class+"/"+decision)
}

// failingLimiter cannot count (its Redis is away).
type failingLimiter struct{}

func (failingLimiter) Admit(context.Context, []limit.Bucket) (limit.Result, error) {
	return limit.Result{}, errors.New("redis: connection refused")
}

// TestThrottleTellsMeter: each of the console throttle's decisions is told
// to the metrics under its own class: admitted, refused, and unavailable
// before its limiter is set or when the limiter cannot count.
func TestThrottleTellsMeter(t *testing.T) {
	ctx := context.Background()
	meter := &decisionMeter{}
	th := &limitThrottle{meter: meter}
	keys := []payment.ThrottleKey{{Key: "signin/ip/x", Burst: 1, PerMinute: 1}}
	_, _ = th.Take(ctx, keys)
	th.set(limit.NewMemory(limit.MemoryConfig{}))
	_, _ = th.Take(ctx, keys)
	_, _ = th.Take(ctx, keys)
	th.set(failingLimiter{})
	_, _ = th.Take(ctx, keys)
	want := []string{"console/unavailable", "console/admitted", "console/refused", "console/unavailable"}
	if !slices.Equal(meter.got, want) {
		t.Errorf("told %q, want %q", meter.got, want)
	}
}
