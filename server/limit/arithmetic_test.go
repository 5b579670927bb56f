package limit_test

import (
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/kessai/kessai/server/limit"
	"github.com/kessai/kessai/server/limit/limittest"
)

func TestDecideVectors(t *testing.T) {
	limittest.CheckDecide(t, limit.Decide)
}

func TestFullAtVectors(t *testing.T) {
	for _, v := range limittest.Vectors() {
		for i, s := range v.After {
			if got := s.FullAt(v.Rules[i]); got != v.FullAt[i] {
				t.Errorf("%s: bucket %d full at %d µs, want %d", v.Name, i, got, v.FullAt[i])
			}
		}
	}
}

// rationalBucket is the bucket arithmetic read literally: balances are real
// (here rational) numbers of requests, refilled at rate/60000 per ms.
type rationalBucket struct {
	rule limit.Rule
	b, m *big.Rat
	at   int64 // µs
}

func (r *rationalBucket) refill(now int64) {
	if now <= r.at {
		return
	}
	elapsedMS := big.NewRat(now-r.at, 1000)
	grow := func(x *big.Rat, capacity, perMinute int) {
		x.Add(x, new(big.Rat).Mul(elapsedMS, big.NewRat(int64(perMinute), 60000)))
		if c := big.NewRat(int64(capacity), 1); x.Cmp(c) > 0 {
			x.Set(c)
		}
	}
	grow(r.b, r.rule.Burst, r.rule.BurstRefillPerMinute)
	grow(r.m, r.rule.PerMinute, r.rule.PerMinute)
	r.at = now
}

// waitMicros is the whole microseconds until x reaches one request.
func waitMicros(x *big.Rat, perMinute int) int64 {
	one := big.NewRat(1, 1)
	if x.Cmp(one) >= 0 {
		return 0
	}
	// (1 − x) / (perMinute / 60,000,000 per µs), rounded up.
	w := new(big.Rat).Mul(new(big.Rat).Sub(one, x), big.NewRat(60_000_000, int64(perMinute)))
	q, rem := new(big.Int).QuoRem(w.Num(), w.Denom(), new(big.Int))
	if rem.Sign() > 0 {
		q.Add(q, big.NewInt(1))
	}
	return q.Int64()
}

// TestDecideIsExact replays random traffic through Decide and through the
// rational model: the fixed-point balances must equal the real ones exactly,
// not approximately.
func TestDecideIsExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	rules := []limit.Rule{limit.RouteRule(), limit.ExactRule(), limit.ChargeRule(), {Burst: 3, BurstRefillPerMinute: 7, PerMinute: 11}}
	for round := range 100 {
		n := 1 + rng.IntN(3)
		picked := make([]limit.Rule, n)
		model := make([]*rationalBucket, n)
		states := make([]limit.State, n)
		for i := range n {
			picked[i] = rules[rng.IntN(len(rules))]
			model[i] = &rationalBucket{rule: picked[i], b: big.NewRat(int64(picked[i].Burst), 1), m: big.NewRat(int64(picked[i].PerMinute), 1)}
			states[i] = limit.FullState(picked[i], 0)
		}
		now := int64(0)
		for step := range 200 {
			// Mostly bursts, sometimes pauses, sometimes a clock stepping back.
			switch rng.IntN(10) {
			case 0:
				now += rng.Int64N(5_000_000)
			case 1:
				now -= rng.Int64N(10_000)
			default:
				now += rng.Int64N(20_000)
			}
			d := limit.Decide(now, picked, states)

			admitted := true
			var retry int64
			for _, r := range model {
				r.refill(now)
				if r.b.Cmp(big.NewRat(1, 1)) < 0 || r.m.Cmp(big.NewRat(1, 1)) < 0 {
					admitted = false
				}
			}
			for _, r := range model {
				if admitted {
					r.b.Sub(r.b, big.NewRat(1, 1))
					r.m.Sub(r.m, big.NewRat(1, 1))
				}
				retry = max(retry, r.at-now+max(waitMicros(r.b, r.rule.BurstRefillPerMinute), waitMicros(r.m, r.rule.PerMinute)))
			}
			if d.Admitted != admitted || d.RetryAfter != retry {
				t.Fatalf("round %d step %d: Decide = %+v, model admitted %v retry %d", round, step, d, admitted, retry)
			}
			for i, r := range model {
				unit := big.NewRat(limit.Unit, 1)
				wantB, wantM := new(big.Rat).Mul(r.b, unit), new(big.Rat).Mul(r.m, unit)
				if !wantB.IsInt() || !wantM.IsInt() || wantB.Num().Int64() != states[i].Burst || wantM.Num().Int64() != states[i].Minute {
					t.Fatalf("round %d step %d bucket %d: state %+v, model b=%s m=%s", round, step, i, states[i], r.b.FloatString(9), r.m.FloatString(9))
				}
			}
		}
	}
}
