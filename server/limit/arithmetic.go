package limit

// The arithmetic of one bucket (README, "Rate limits and other limits"), in
// fixed point.
//
// Balances are integers in Units of 1/60,000,000 of a request and time is in
// whole microseconds. A bucket refilling at R requests per minute then gains
// exactly R Units per microsecond, so every refill, charge and wait is
// integer arithmetic with no rounding anywhere: two back ends, or a Go back
// end and its Lua port, cannot drift apart by a rounding step, and the
// spec's "real number" balances are represented exactly at microsecond
// resolution (the resolution of Redis TIME).
//
// With every Rule field at most MaxRuleValue, balances stay below 6·10^15 and
// Unix microseconds below 2^53 until the year 2255, so Lua's doubles hold
// every value exactly. The Lua port must compute ceilDiv exactly (see there).

// Unit is one request in the balances of State.
const Unit int64 = 60_000_000

// State is what is stored for one bucket. A bucket that is not stored is
// full: FullState.
type State struct {
	Burst  int64 // b, in Units
	Minute int64 // m, in Units
	// At is the time, in microseconds on the back end's clock, at which
	// Burst and Minute were exact. It never moves backwards.
	At int64
}

// Decision is the outcome of Decide.
type Decision struct {
	Admitted bool
	// RetryAfter is in microseconds: how long until every bucket holds at
	// least one Unit of request in both balances.
	RetryAfter int64
}

// FullState is a bucket that was never used, or has refilled completely,
// at time now.
func FullState(r Rule, now int64) State {
	return State{Burst: int64(r.Burst) * Unit, Minute: int64(r.PerMinute) * Unit, At: now}
}

// Decide is one request counted against several buckets at time now
// (microseconds). states[i] is the stored state of the bucket ruled by
// rules[i] (FullState for a bucket not stored); Decide overwrites it with the
// state to store. It is the whole of the rate-limit arithmetic: the Lua
// script of the Redis back end mirrors it, and its refill and waitFor, line
// for line:
//
//  1. Refill every bucket to now.
//  2. The request is admitted when every bucket holds at least one Unit of
//     request in both b and m.
//  3. If admitted, take one request from b and m of every bucket; if refused,
//     take nothing (the refilled states equal the stored ones in value, so a
//     back end need not write them).
//  4. RetryAfter is the longest wait, over every bucket and both balances,
//     until that balance holds one request again.
func Decide(now int64, rules []Rule, states []State) Decision {
	admitted := true
	for i := range states {
		states[i] = Refill(states[i], rules[i], now)
		if states[i].Burst < Unit || states[i].Minute < Unit {
			admitted = false
		}
	}
	if admitted {
		for i := range states {
			states[i].Burst -= Unit
			states[i].Minute -= Unit
		}
	}
	var retryAfter int64
	for i, s := range states {
		// s.At is past now only when the clock went backwards; the bucket
		// counts from s.At, so the wait is longer by the difference.
		wait := s.At - now + max(
			waitFor(s.Burst, int64(rules[i].BurstRefillPerMinute)),
			waitFor(s.Minute, int64(rules[i].PerMinute)))
		retryAfter = max(retryAfter, wait)
	}
	return Decision{Admitted: admitted, RetryAfter: retryAfter}
}

// Refill brings s forward to now under r. A clock that reads earlier than
// s.At refills nothing and leaves At where it was, so that no time is ever
// counted twice. A balance above its capacity (a rule lowered since it was
// stored) is cut down to it.
func Refill(s State, r Rule, now int64) State {
	elapsed := max(now-s.At, 0)
	s.Burst = fill(s.Burst, int64(r.Burst)*Unit, int64(r.BurstRefillPerMinute), elapsed)
	s.Minute = fill(s.Minute, int64(r.PerMinute)*Unit, int64(r.PerMinute), elapsed)
	s.At = max(s.At, now)
	return s
}

// fill adds rate Units per microsecond for elapsed microseconds, capped at
// capacity. It compares elapsed with the time to full before multiplying,
// so a bucket idle for years cannot overflow (or, in Lua, lose exactness).
func fill(balance, capacity, rate, elapsed int64) int64 {
	if balance >= capacity || elapsed >= ceilDiv(capacity-balance, rate) {
		return capacity
	}
	return balance + elapsed*rate
}

// waitFor is how many microseconds a balance refilling at rate Units per
// microsecond needs to hold one request.
func waitFor(balance, rate int64) int64 {
	if balance >= Unit {
		return 0
	}
	return ceilDiv(Unit-balance, rate)
}

// ceilDiv is ⌈n/d⌉ for n ≥ 0, d > 0. In Lua, math.ceil(n / d) on doubles can
// be one off when the quotient is large; compute q = math.floor(n / d), then
// correct it with exact products (q*d < n → q+1) as the Go integers do.
func ceilDiv(n, d int64) int64 {
	return (n + d - 1) / d
}

// Remaining is floor(b), what the remaining-requests headers show.
func (s State) Remaining() int { return int(s.Burst / Unit) }

// FullAt is the time at which s, left alone, is full under r again, and so
// equivalent to a bucket not stored: a back end may forget it from then on
// (the memory back end sweeps it; Redis expires the key).
func (s State) FullAt(r Rule) int64 {
	burstCap, minuteCap := int64(r.Burst)*Unit, int64(r.PerMinute)*Unit
	return s.At + max(
		ceilDiv(max(burstCap-s.Burst, 0), int64(r.BurstRefillPerMinute)),
		ceilDiv(max(minuteCap-s.Minute, 0), int64(r.PerMinute)))
}
