package limittest

import (
	"slices"
	"testing"

	"github.com/kessai/kessai/server/limit"
)

// Vector is one call of limit.Decide with its expected outcome, worked out
// by hand from the bucket arithmetic described in the package limit
// documentation (times in µs, balances in limit.Units).
type Vector struct {
	Name       string
	Now        int64
	Rules      []limit.Rule
	Before     []limit.State
	Admitted   bool
	RetryAfter int64
	After      []limit.State
	// FullAt is After[i].FullAt(Rules[i]): when the bucket may be forgotten
	// (a Redis key's expiry).
	FullAt []int64
}

const unit = limit.Unit

// Vectors returns the arithmetic vectors (a fresh copy on each call).
func Vectors() []Vector {
	exact, route, charge := limit.ExactRule(), limit.RouteRule(), limit.ChargeRule()
	return []Vector{{
		Name:  "unused exact bucket",
		Now:   0,
		Rules: []limit.Rule{exact}, Before: []limit.State{{Burst: 10 * unit, Minute: 120 * unit}},
		Admitted: true, RetryAfter: 0,
		After:  []limit.State{{Burst: 9 * unit, Minute: 119 * unit}},
		FullAt: []int64{500_000},
	}, {
		Name:  "standard request charges route and exact",
		Now:   1_000_000,
		Rules: []limit.Rule{route, exact},
		Before: []limit.State{
			{Burst: 30 * unit, Minute: 1200 * unit, At: 1_000_000},
			{Burst: 10 * unit, Minute: 120 * unit, At: 1_000_000},
		},
		Admitted: true, RetryAfter: 0,
		After: []limit.State{
			{Burst: 29 * unit, Minute: 1199 * unit, At: 1_000_000},
			{Burst: 9 * unit, Minute: 119 * unit, At: 1_000_000},
		},
		FullAt: []int64{1_050_000, 1_500_000},
	}, {
		Name:  "empty burst is refused and waits 50 ms",
		Now:   0,
		Rules: []limit.Rule{exact}, Before: []limit.State{{Burst: 0, Minute: 110 * unit}},
		Admitted: false, RetryAfter: 50_000,
		After:  []limit.State{{Burst: 0, Minute: 110 * unit}},
		FullAt: []int64{5_000_000},
	}, {
		Name:  "50 ms bring one request back",
		Now:   50_000,
		Rules: []limit.Rule{exact}, Before: []limit.State{{Burst: 0, Minute: 110 * unit}},
		Admitted: true, RetryAfter: 50_000,
		After:  []limit.State{{Burst: 0, Minute: 109*unit + 6_000_000, At: 50_000}},
		FullAt: []int64{5_500_000},
	}, {
		Name:  "an hour refills to the cap, not beyond",
		Now:   3_600_000_000,
		Rules: []limit.Rule{exact}, Before: []limit.State{{Burst: 0, Minute: 110 * unit}},
		Admitted: true, RetryAfter: 0,
		After:  []limit.State{{Burst: 9 * unit, Minute: 119 * unit, At: 3_600_000_000}},
		FullAt: []int64{3_600_500_000},
	}, {
		Name:  "the minute allowance refuses",
		Now:   0,
		Rules: []limit.Rule{exact}, Before: []limit.State{{Burst: 10 * unit, Minute: unit / 5}},
		Admitted: false, RetryAfter: 400_000,
		After:  []limit.State{{Burst: 10 * unit, Minute: unit / 5}},
		FullAt: []int64{59_900_000},
	}, {
		Name:  "one bucket refuses and none is charged",
		Now:   0,
		Rules: []limit.Rule{route, exact},
		Before: []limit.State{
			{Burst: 0, Minute: 1000 * unit},
			{Burst: 10 * unit, Minute: 120 * unit},
		},
		Admitted: false, RetryAfter: 50_000,
		After: []limit.State{
			{Burst: 0, Minute: 1000 * unit},
			{Burst: 10 * unit, Minute: 120 * unit},
		},
		FullAt: []int64{10_000_000, 0},
	}, {
		Name:  "RetryAfter is the longest wait",
		Now:   0,
		Rules: []limit.Rule{route, exact},
		Before: []limit.State{
			{Burst: 0, Minute: 1200 * unit},
			{Burst: 5 * unit, Minute: 0},
		},
		Admitted: false, RetryAfter: 500_000,
		After: []limit.State{
			{Burst: 0, Minute: 1200 * unit},
			{Burst: 5 * unit, Minute: 0},
		},
		FullAt: []int64{1_500_000, 60_000_000},
	}, {
		Name:  "a clock behind the stored time refills nothing",
		Now:   900_000,
		Rules: []limit.Rule{exact}, Before: []limit.State{{Burst: 0, Minute: 110 * unit, At: 1_000_000}},
		Admitted: false, RetryAfter: 150_000,
		After:  []limit.State{{Burst: 0, Minute: 110 * unit, At: 1_000_000}},
		FullAt: []int64{6_000_000},
	}, {
		Name:     "a lowered rule cuts the balance",
		Now:      0,
		Rules:    []limit.Rule{{Burst: 5, BurstRefillPerMinute: 1200, PerMinute: 120}},
		Before:   []limit.State{{Burst: 10 * unit, Minute: 120 * unit}},
		Admitted: true, RetryAfter: 0,
		After:  []limit.State{{Burst: 4 * unit, Minute: 119 * unit}},
		FullAt: []int64{500_000},
	}, {
		Name:  "the charge burst refills 0.05 per ms",
		Now:   20_000,
		Rules: []limit.Rule{charge}, Before: []limit.State{{Burst: 0, Minute: 2900 * unit}},
		Admitted: true, RetryAfter: 20_000,
		After:  []limit.State{{Burst: 0, Minute: 2900 * unit, At: 20_000}},
		FullAt: []int64{2_020_000},
	}, {
		Name:  "a fraction of a request is kept",
		Now:   12_500,
		Rules: []limit.Rule{exact}, Before: []limit.State{{Burst: unit / 2, Minute: 119 * unit}},
		Admitted: false, RetryAfter: 12_500,
		After:  []limit.State{{Burst: 45_000_000, Minute: 119*unit + 1_500_000, At: 12_500}},
		FullAt: []int64{500_000},
	}, {
		Name:  "a century idle neither overflows nor overfills",
		Now:   3_155_760_000_000_000,
		Rules: []limit.Rule{exact}, Before: []limit.State{{}},
		Admitted: true, RetryAfter: 0,
		After:  []limit.State{{Burst: 9 * unit, Minute: 119 * unit, At: 3_155_760_000_000_000}},
		FullAt: []int64{3_155_760_000_500_000},
	}, {
		Name:  "exactly one request left",
		Now:   0,
		Rules: []limit.Rule{exact}, Before: []limit.State{{Burst: unit, Minute: unit}},
		Admitted: true, RetryAfter: 500_000,
		After:  []limit.State{{}},
		FullAt: []int64{60_000_000},
	}, {
		Name:  "one Unit short",
		Now:   0,
		Rules: []limit.Rule{exact}, Before: []limit.State{{Burst: unit - 1, Minute: 120 * unit}},
		Admitted: false, RetryAfter: 1,
		After:  []limit.State{{Burst: unit - 1, Minute: 120 * unit}},
		FullAt: []int64{450_001},
	}, {
		Name:     "a rate that does not divide a minute rounds waits up",
		Now:      1_000,
		Rules:    []limit.Rule{{Burst: 3, BurstRefillPerMinute: 7, PerMinute: 7}},
		Before:   []limit.State{{}},
		Admitted: false, RetryAfter: 8_570_429,
		After:  []limit.State{{Burst: 7_000, Minute: 7_000, At: 1_000}},
		FullAt: []int64{60_000_000},
	}}
}

// CheckDecide runs every vector through decide, which has the contract of
// limit.Decide: it reads states and overwrites them with what to store.
func CheckDecide(t *testing.T, decide func(now int64, rules []limit.Rule, states []limit.State) limit.Decision) {
	t.Helper()
	for _, v := range Vectors() {
		t.Run(v.Name, func(t *testing.T) {
			states := slices.Clone(v.Before)
			d := decide(v.Now, v.Rules, states)
			if d.Admitted != v.Admitted {
				t.Errorf("Admitted = %v, want %v", d.Admitted, v.Admitted)
			}
			if d.RetryAfter != v.RetryAfter {
				t.Errorf("RetryAfter = %d µs, want %d", d.RetryAfter, v.RetryAfter)
			}
			if !slices.Equal(states, v.After) {
				t.Errorf("states = %+v, want %+v", states, v.After)
			}
		})
	}
}
