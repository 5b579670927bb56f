// Package limit decides whether a request may run under Kessai's rate limits,
// and what the rate-limit headers and Retry-After say.
//
// A bucket holds a burst balance and a minute allowance, both starting full.
// Each refills continuously at the bucket's per-minute rate spread over the
// minute, never past its cap (the burst, the per-minute limit). A request
// counted against several buckets is admitted when every one of them holds at
// least one request of each after refilling, and then takes one from each, all
// or none; a refused request takes nothing. The remaining headers show the
// burst balance rounded down; Retry-After is the whole seconds, rounded up and
// at least one, until every bucket needed holds one again. The README's "Rate
// limits and other limits" says which buckets a request counts against.
//
// It exists so that the arithmetic lives in one place that every back end
// shares: the in-memory limiter here (one instance), and a Redis limiter
// (several instances sharing one store) that must admit exactly the same
// requests. Both apply Decide, a pure function of the buckets' stored states,
// their rules and the time; the Redis back end ports it to one Lua script so
// that all of a request's buckets are checked and charged in one round trip.
// Package limittest holds the vectors and the conformance suite both pass.
//
// The limiter knows nothing of HTTP. The caller names each bucket (kind plus a
// key it builds, such as "store:<id>/mode:test|/charges/{id}"), supplies its
// Rule, and turns the Result into headers and a 429.
package limit

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Limiter admits or refuses one request counted against several buckets at
// once: either every bucket is charged one request or none is.
//
// Admit returns an error when it cannot decide: invalid buckets (a bug in
// the caller), ErrFull (the Result then shows the balances and when to
// retry), or a back end that cannot be reached. Admitted is false with
// every error; whether to answer 429, 503 or let the request through is
// the caller's policy.
type Limiter interface {
	Admit(ctx context.Context, buckets []Bucket) (Result, error)
}

// Kind is the family a bucket belongs to. The families are fixed so that
// keys of different kinds can never collide, in memory or in a shared store.
type Kind uint8

// The bucket kinds: the charge class's one bucket, and the standard class's
// route and exact buckets. The zero Kind is invalid, so that a
// forgotten field is an error rather than a silently shared bucket.
const (
	KindCharge Kind = iota + 1
	KindRoute
	KindExact
)

// kindCount sizes arrays indexed by Kind.
const kindCount = 4

func (k Kind) String() string {
	switch k {
	case KindCharge:
		return "charge"
	case KindRoute:
		return "route"
	case KindExact:
		return "exact"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Valid reports whether k is one of the known kinds.
func (k Kind) Valid() bool { return k >= KindCharge && k <= KindExact }

// Rule is the size and speed of one kind of bucket. A bucket holds two
// balances: the burst balance b (at most Burst, refilled at
// BurstRefillPerMinute per minute) and the minute allowance m (at most
// PerMinute, refilled at PerMinute per minute). Refilling is continuous.
//
// The two rates differ for the exact bucket: its burst comes back at
// 1200/min (one request per 50 ms, as the seed states) while its sustained
// rate is held to 120/min by m.
type Rule struct {
	Burst                int
	BurstRefillPerMinute int
	PerMinute            int
}

// MaxRuleValue bounds every Rule field so that balances in Units stay below
// 2^53: a Lua port computing with doubles is then exact, like the Go code.
const MaxRuleValue = 100_000_000

// Validate reports a Rule that cannot be applied: every field must be in
// [1, MaxRuleValue]. A zero rate would mean a bucket that never refills.
func (r Rule) Validate() error {
	for _, f := range [...]struct {
		name  string
		value int
	}{
		{"Burst", r.Burst},
		{"BurstRefillPerMinute", r.BurstRefillPerMinute},
		{"PerMinute", r.PerMinute},
	} {
		if f.value < 1 || f.value > MaxRuleValue {
			return fmt.Errorf("limit: rule %s = %d, want 1..%d", f.name, f.value, MaxRuleValue)
		}
	}
	return nil
}

// ChargeRule is the default for POST /tokens, /charges and /subscriptions.
func ChargeRule() Rule { return Rule{Burst: 100, BurstRefillPerMinute: 3000, PerMinute: 3000} }

// RouteRule is the default for a route template ("/charges/{id}").
func RouteRule() Rule { return Rule{Burst: 30, BurstRefillPerMinute: 1200, PerMinute: 1200} }

// ExactRule is the default for an exact path with its query string.
func ExactRule() Rule { return Rule{Burst: 10, BurstRefillPerMinute: 1200, PerMinute: 120} }

// Rules is one Rule per kind, the shape configuration takes.
type Rules struct {
	Charge, Route, Exact Rule
}

// DefaultRules are the spec's numbers.
func DefaultRules() Rules {
	return Rules{Charge: ChargeRule(), Route: RouteRule(), Exact: ExactRule()}
}

// For returns the rule of kind k (the zero Rule for an unknown kind).
func (rs Rules) For(k Kind) Rule {
	switch k {
	case KindCharge:
		return rs.Charge
	case KindRoute:
		return rs.Route
	case KindExact:
		return rs.Exact
	}
	return Rule{}
}

// Validate checks every rule.
func (rs Rules) Validate() error {
	for _, k := range [...]Kind{KindCharge, KindRoute, KindExact} {
		if err := rs.For(k).Validate(); err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
	}
	return nil
}

// Bucket is one balance a request counts against. Kind and Key together
// name it; Rule says how big and how fast it is. The same Kind and Key must
// always come with the same Rule, except when configuration changes it
// (a bucket holding more than a lowered rule allows is cut down to it).
type Bucket struct {
	Kind Kind
	Key  string
	Rule Rule
}

func (b Bucket) validate() error {
	if !b.Kind.Valid() {
		return fmt.Errorf("limit: bucket %q has invalid kind %d", b.Key, uint8(b.Kind))
	}
	if err := b.Rule.Validate(); err != nil {
		return fmt.Errorf("%s bucket %q: %w", b.Kind, b.Key, err)
	}
	return nil
}

// Result is the answer for one request.
//
// It holds the buckets of a request of up to InlineBuckets buckets (every
// request the API makes) inside itself, so that returning it allocates
// nothing; Buckets lists them.
type Result struct {
	Admitted bool
	// RetryAfter is how long until every bucket holds at least one request
	// in both balances (zero when that is already so). For a refusal the
	// HTTP layer rounds it up to whole seconds, at least 1.
	RetryAfter time.Duration

	n      int
	inline [InlineBuckets]BucketResult
	more   []BucketResult // when there are more than InlineBuckets
}

// InlineBuckets is the most buckets a Result holds without allocating.
const InlineBuckets = 4

// Buckets are the request's buckets after it was counted or refused, in
// the order the request listed them.
func (r *Result) Buckets() []BucketResult {
	if r.more != nil {
		return r.more
	}
	return r.inline[:r.n]
}

// add appends one bucket to r.
func (r *Result) add(b BucketResult) {
	if r.more == nil && r.n < InlineBuckets {
		r.inline[r.n] = b
		r.n++
		return
	}
	if r.more == nil {
		r.more = append(make([]BucketResult, 0, r.n+1), r.inline[:r.n]...)
	}
	r.more = append(r.more, b)
	r.n++
}

// BucketResult is one bucket after the request was counted or refused.
// It holds no key.
type BucketResult struct {
	Kind Kind
	// Rule is the bucket's, for the X-Requests-Per-Minute headers.
	Rule Rule
	// Remaining is floor(b), what the X-Remaining-Requests headers show.
	Remaining int
}

// Find returns the first bucket of kind k, for callers that write headers
// by kind.
func (r *Result) Find(k Kind) (BucketResult, bool) {
	for _, b := range r.Buckets() {
		if b.Kind == k {
			return b, true
		}
	}
	return BucketResult{}, false
}

var (
	// ErrFull means the limiter holds as many keys as it may and none of
	// them can be dropped yet, so a request that needs a new key is refused
	// rather than admitted uncounted. The HTTP layer answers 503 with
	// Retry-After; requests on keys already held are unaffected.
	ErrFull = errors.New("limit: key table full")
	// ErrDuplicateBucket means one request listed the same bucket twice;
	// charging it twice would be a bug in the caller.
	ErrDuplicateBucket = errors.New("limit: bucket listed twice in one request")
)

// Clock is how a limiter reads the time, so tests can move it by hand.
type Clock interface {
	Now() time.Time
}

// SystemClock is the process clock. It keeps Go's monotonic reading, so a
// wall-clock step does not move the limiter's time.
type SystemClock struct{}

// Now returns the current time.
func (SystemClock) Now() time.Time { return time.Now() }
