package gateway

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/kessai/kessai/server/api"
	"github.com/kessai/kessai/server/limit"
	"github.com/kessai/kessai/server/payment"
)

// limitThrottle is the console's payment.Throttle on a rate limiter of
// its own (memory, or Redis with its own prefix, so that every process
// counts a guesser's attempts together). The service is made before the
// limiters are opened, so the limiter is set afterwards; until it is,
// Take refuses rather than let attempts through uncounted.
type limitThrottle struct {
	limiter atomic.Pointer[limit.Limiter]
	// meter is told each decision, as the limit class ClassConsole (nil:
	// nothing is).
	meter api.Meter
}

func (t *limitThrottle) set(l limit.Limiter) { t.limiter.Store(&l) }

// errNoThrottle is Take before the limiter is set.
var errNoThrottle = errors.New("the sign-in throttle is not ready")

// Take counts one attempt against every key, all or none; the keys share
// the exact kind, which no other limiter of the process uses.
func (t *limitThrottle) Take(ctx context.Context, keys []payment.ThrottleKey) (time.Duration, error) {
	lp := t.limiter.Load()
	if lp == nil {
		t.tell(api.DecisionUnavailable)
		return 0, errNoThrottle
	}
	buckets := make([]limit.Bucket, len(keys))
	for i, k := range keys {
		buckets[i] = limit.Bucket{Kind: limit.KindExact, Key: k.Key, Rule: throttleRule(k)}
	}
	res, err := (*lp).Admit(ctx, buckets)
	switch {
	case err != nil:
		t.tell(api.DecisionUnavailable)
		return 0, err
	case !res.Admitted:
		t.tell(api.DecisionRefused)
		return max(res.RetryAfter, time.Second), nil
	}
	t.tell(api.DecisionAdmitted)
	return 0, nil
}

func (t *limitThrottle) tell(decision string) {
	if t.meter != nil {
		t.meter.RateLimit(api.ClassConsole, decision)
	}
}

// throttleRule is a key's bucket: Burst attempts at once, then PerMinute a
// minute. The limiter's minute allowance (Rule.PerMinute) is as large as
// the burst, refilling faster than the burst does, so that the burst
// alone decides: an allowance of PerMinute would let only
// min(Burst, PerMinute) attempts through at once.
func throttleRule(k payment.ThrottleKey) limit.Rule {
	return limit.Rule{Burst: k.Burst, BurstRefillPerMinute: k.PerMinute, PerMinute: max(k.Burst, k.PerMinute)}
}
