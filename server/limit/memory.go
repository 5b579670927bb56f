package limit

import (
	"context"
	"hash/maphash"
	"math"
	"math/bits"
	"slices"
	"sync"
	"time"
)

// Defaults of MemoryConfig.
const (
	DefaultMaxKeys      = 1_000_000
	DefaultShards       = 64
	DefaultSweepBackoff = time.Second
)

// minSweepLen is the size below which a shard is not swept as it grows:
// sweeping a small table buys little and would run too often. minSlots is
// the smallest table a shard has.
const (
	minSweepLen  = 512
	minSlots     = 16
	minShardKeys = 1024
)

// MemoryConfig configures NewMemory. The zero value is usable.
type MemoryConfig struct {
	// Clock defaults to SystemClock.
	Clock Clock
	// MaxKeys caps the buckets held at once (default DefaultMaxKeys). It is
	// split evenly over the shards, so a request can meet ErrFull while
	// the table as a whole holds slightly fewer than MaxKeys (about 2 %
	// fewer with the defaults, as keys spread randomly).
	MaxKeys int
	// Shards is the number of independently locked parts of the table,
	// rounded up to a power of two (default DefaultShards), and lowered
	// until each shard may hold minShardKeys, so that a small MaxKeys is
	// not cut into shares too small to be even.
	Shards int
	// SweepBackoff is how long a shard that is still nearly full after a
	// sweep refuses new keys before it sweeps again, so that a table kept
	// full costs one sweep per backoff instead of one per request
	// (default DefaultSweepBackoff).
	SweepBackoff time.Duration
}

// Memory is the Limiter of a single instance: buckets in a sharded table.
//
// Key table. Buckets are keyed by a 64-bit maphash of their key, seeded per
// Kind with a random seed per process, so an entry costs the same whatever
// the key's length, keeps no string alive and the table holds no pointers
// for the garbage collector to scan. Two keys sharing a hash would share a
// bucket: with a secret seed nobody can aim for that, the chance that any
// two of a million live keys collide is about 3·10^-8, and it would only
// make the limit stricter for those two keys.
//
// Each shard is its own open-addressed table (linear probing, at most 3/4
// full) rather than a Go map, because the key is already a good hash: a
// lookup is one probe that indexes by the hash's high bits (the low ones
// pick the shard), and an admitted request writes its new balances into the
// slot it read them from, where a map would hash the key again and search
// again to store them. Deleting shifts the rest of the probe run back, so
// there are no tombstones to clean up.
//
// Locking. A request locks the shards of its buckets in ascending order, so
// that two requests can never deadlock and the check and the charge of all
// its buckets are one atomic step.
//
// Memory. A bucket is dropped once it is full again (State.FullAt), which is
// lossless: a full bucket and a missing one behave the same. Full buckets
// are dropped by a refused request that finds them, by a shard sweeping
// itself each time it has doubled since its last sweep (amortised O(1) per
// new key), and by Sweep or SweepEvery. A sweep that leaves a shard's table
// less than 3/16 full moves the survivors into a smaller one, so the memory
// of a flood of keys is given back.
//
// Cap. When a shard holds its share of MaxKeys and a request needs a new
// key there, the shard is swept; if that frees no room, the request is
// refused with ErrFull and nothing is charged. Evicting a live bucket
// instead would hand its owner a fresh burst: an attacker who can fill the
// table with junk keys could reset the buckets of the path it actually wants
// to hammer. Refusing keeps every admitted request within its limits, and
// keys already held (clients already being served) keep working.
type Memory struct {
	clock Clock
	// monotonic is set for SystemClock, whose time is then read as
	// time.Since(epoch): one monotonic clock read, where Now reads the
	// wall clock too.
	monotonic       bool
	epoch           time.Time
	seeds           [kindCount]maphash.Seed
	shards          []shard
	shardMask       uint64
	maxKeysPerShard int
	sweepBackoff    int64
}

type shard struct {
	mu sync.Mutex
	// slots has a power-of-two length; a key's probe run starts at the
	// slot its hash's top bits name (hash >> shift).
	slots []slot
	shift uint
	// n is the number of keys held.
	n int
	// sweepAt is the n at which the shard sweeps itself.
	sweepAt int
	// Nothing can be dropped before minFullAt (a lower bound of every
	// entry's fullAt), and the shard does not sweep for room before
	// backoffUntil.
	minFullAt    int64
	backoffUntil int64
	// Shards sit side by side; keep each one's lock on its own cache lines.
	_ [128 - 72]byte
}

// slot is one bucket held, or an empty slot when hash is 0 (a key hashing
// to 0 is held as 1).
type slot struct {
	hash   uint64
	state  State
	fullAt int64
}

// NewMemory returns an empty in-memory limiter.
func NewMemory(cfg MemoryConfig) *Memory {
	if cfg.Clock == nil {
		cfg.Clock = SystemClock{}
	}
	if cfg.MaxKeys <= 0 {
		cfg.MaxKeys = DefaultMaxKeys
	}
	if cfg.Shards <= 0 {
		cfg.Shards = DefaultShards
	}
	if cfg.SweepBackoff <= 0 {
		cfg.SweepBackoff = DefaultSweepBackoff
	}
	shards := 1 << bits.Len(uint(cfg.Shards-1))
	for shards > 1 && cfg.MaxKeys/shards < minShardKeys {
		shards /= 2
	}
	_, monotonic := cfg.Clock.(SystemClock)
	l := &Memory{
		clock:           cfg.Clock,
		monotonic:       monotonic,
		epoch:           cfg.Clock.Now(),
		shards:          make([]shard, shards),
		shardMask:       uint64(shards - 1),
		maxKeysPerShard: max(cfg.MaxKeys/shards, 1),
		sweepBackoff:    cfg.SweepBackoff.Microseconds(),
	}
	for i := range l.seeds {
		l.seeds[i] = maphash.MakeSeed()
	}
	for i := range l.shards {
		l.shards[i].resize(minSlots)
		l.shards[i].sweepAt = minSweepLen
		l.shards[i].minFullAt = math.MaxInt64
	}
	return l
}

// now is the limiter's time in microseconds since it was made. Sub and
// Since use the monotonic readings when the clock provides them.
func (l *Memory) now() int64 {
	if l.monotonic {
		return time.Since(l.epoch).Microseconds()
	}
	return l.clock.Now().Sub(l.epoch).Microseconds()
}

func (l *Memory) shardOf(hash uint64) *shard { return &l.shards[hash&l.shardMask] }

// hash is the table's key of b, never 0 (the empty slot's).
func (l *Memory) hash(b *Bucket) uint64 {
	h := maphash.String(l.seeds[b.Kind], b.Key)
	if h == 0 {
		h = 1
	}
	return h
}

// inlineBuckets covers every request the API makes (one or two buckets)
// without allocating.
const inlineBuckets = InlineBuckets

// Admit implements Limiter.
func (l *Memory) Admit(_ context.Context, buckets []Bucket) (Result, error) {
	n := len(buckets)
	var (
		hashArray  [inlineBuckets]uint64
		ruleArray  [inlineBuckets]Rule
		stateArray [inlineBuckets]State
		atArray    [inlineBuckets]int
		lockArray  [inlineBuckets]int
	)
	// at[i] is the slot holding bucket i, -1 when it is not held.
	hashes, rules, states, at, locks := hashArray[:0], ruleArray[:0], stateArray[:], atArray[:], lockArray[:0]
	if n > inlineBuckets {
		hashes, rules, states, at, locks = make([]uint64, 0, n), make([]Rule, 0, n), make([]State, n), make([]int, n), make([]int, 0, n)
	}
	states, at = states[:n], at[:n]
	for i := range buckets {
		b := &buckets[i]
		if !b.Kind.Valid() || !ruleInRange(b.Rule) {
			if err := b.validate(); err != nil {
				return Result{}, err
			}
		}
		h := l.hash(b)
		if slices.Contains(hashes, h) {
			return Result{}, ErrDuplicateBucket
		}
		hashes = append(hashes, h)
		rules = append(rules, b.Rule)
		locks = insertShard(locks, int(h&l.shardMask))
	}

	now := l.now()
	for _, s := range locks {
		l.shards[s].mu.Lock()
	}
	for i, h := range hashes {
		sh := l.shardOf(h)
		if j, ok := sh.find(h); ok {
			at[i], states[i] = j, sh.slots[j].state
		} else {
			at[i], states[i] = -1, FullState(rules[i], now)
		}
	}
	d := Decide(now, rules, states)
	var err error
	if !d.Admitted {
		l.dropFull(hashes, rules, states, at)
	} else if wait, ok := l.makeRoom(locks, hashes, at, now); ok {
		l.store(locks, hashes, rules, states, at, now)
	} else {
		// Decide took exactly one request from each bucket; give it back,
		// so the result shows the balances this refusal leaves.
		for i := range states {
			states[i].Burst += Unit
			states[i].Minute += Unit
		}
		d = Decision{Admitted: false, RetryAfter: wait}
		err = ErrFull
	}
	for _, s := range locks {
		l.shards[s].mu.Unlock()
	}

	res := Result{Admitted: d.Admitted, RetryAfter: time.Duration(d.RetryAfter) * time.Microsecond}
	for i := range buckets {
		b := &buckets[i]
		res.add(BucketResult{Kind: b.Kind, Rule: b.Rule, Remaining: states[i].Remaining()})
	}
	return res, err
}

// ruleInRange is Rule.Validate without building an error, so that the
// common case of a valid rule costs three comparisons.
func ruleInRange(r Rule) bool {
	return uint(r.Burst-1) < MaxRuleValue && uint(r.BurstRefillPerMinute-1) < MaxRuleValue && uint(r.PerMinute-1) < MaxRuleValue
}

// insertShard adds shard s to locks, kept sorted and without repeats (an
// insertion sort: a request has one or two buckets).
func insertShard(locks []int, s int) []int {
	i := len(locks)
	for i > 0 && locks[i-1] > s {
		i--
	}
	if i > 0 && locks[i-1] == s {
		return locks
	}
	locks = append(locks, 0)
	copy(locks[i+1:], locks[i:])
	locks[i] = s
	return locks
}

// dropFull forgets the buckets a refused request found full. Removing one
// can move another's slot, so each is looked up again.
func (l *Memory) dropFull(hashes []uint64, rules []Rule, states []State, at []int) {
	for i, h := range hashes {
		if at[i] >= 0 && states[i].Burst == int64(rules[i].Burst)*Unit && states[i].Minute == int64(rules[i].PerMinute)*Unit {
			sh := l.shardOf(h)
			if j, ok := sh.find(h); ok {
				sh.remove(j)
			}
		}
	}
}

// makeRoom reports whether the locked shards can take the request's new
// keys, sweeping a shard that cannot. If they cannot, it returns how long
// until one might (in microseconds).
func (l *Memory) makeRoom(locks []int, hashes []uint64, at []int, now int64) (int64, bool) {
	for _, s := range locks {
		sh := &l.shards[s]
		if sh.n+l.newKeys(s, hashes, at) <= l.maxKeysPerShard {
			continue
		}
		if now >= sh.backoffUntil && now >= sh.minFullAt {
			l.sweep(sh, now)
			// The sweep moved entries, and may have dropped buckets this
			// request holds: they were full, so they are new keys now.
			for i, h := range hashes {
				if int(h&l.shardMask) == s {
					if j, ok := sh.find(h); ok {
						at[i] = j
					} else {
						at[i] = -1
					}
				}
			}
		}
		if sh.n+l.newKeys(s, hashes, at) > l.maxKeysPerShard {
			return max(sh.backoffUntil-now, sh.minFullAt-now, 1), false
		}
	}
	return 0, true
}

func (l *Memory) newKeys(s int, hashes []uint64, at []int) int {
	n := 0
	for i, h := range hashes {
		if int(h&l.shardMask) == s && at[i] < 0 {
			n++
		}
	}
	return n
}

func (l *Memory) store(locks []int, hashes []uint64, rules []Rule, states []State, at []int, now int64) {
	// Held buckets first, in their slots: inserting a new key may grow the
	// table and move them.
	for i, h := range hashes {
		if at[i] >= 0 {
			l.shardOf(h).put(at[i], states[i], states[i].FullAt(rules[i]))
		}
	}
	for i, h := range hashes {
		if at[i] < 0 {
			sh := l.shardOf(h)
			sh.put(sh.insert(h), states[i], states[i].FullAt(rules[i]))
		}
	}
	for _, s := range locks {
		sh := &l.shards[s]
		if sh.n >= sh.sweepAt && now >= sh.minFullAt {
			l.sweep(sh, now)
		}
	}
}

// find returns the slot holding hash h, or false and the empty slot that
// ends h's probe run. The table is never full, so the run ends.
func (sh *shard) find(h uint64) (int, bool) {
	mask := len(sh.slots) - 1
	for i := int(h >> sh.shift); ; i = (i + 1) & mask {
		switch sh.slots[i].hash {
		case h:
			return i, true
		case 0:
			return i, false
		}
	}
}

// put stores a bucket's state in slot i.
func (sh *shard) put(i int, s State, fullAt int64) {
	sh.slots[i].state, sh.slots[i].fullAt = s, fullAt
	sh.minFullAt = min(sh.minFullAt, fullAt)
}

// insert claims a slot for h, which the shard does not hold, growing the
// table past 3/4 full (beyond that, probe runs grow long).
func (sh *shard) insert(h uint64) int {
	if 4*(sh.n+1) > 3*len(sh.slots) {
		sh.resize(2 * len(sh.slots))
	}
	i, _ := sh.find(h)
	sh.slots[i].hash = h
	sh.n++
	return i
}

// remove empties slot i, moving later entries of its probe run back into
// the hole when their run starts at or before it, so that every entry stays
// reachable from its start without tombstones. Only entries that were after
// i in the run move, each to a slot between i and where it was.
func (sh *shard) remove(i int) {
	mask := len(sh.slots) - 1
	for j := i; ; {
		j = (j + 1) & mask
		h := sh.slots[j].hash
		if h == 0 {
			break
		}
		if (j-int(h>>sh.shift))&mask >= (j-i)&mask {
			sh.slots[i] = sh.slots[j]
			i = j
		}
	}
	sh.slots[i] = slot{}
	sh.n--
}

// resize moves the entries into a new table of size slots (a power of two
// larger than sh.n).
func (sh *shard) resize(size int) {
	old := sh.slots
	sh.slots = make([]slot, size)
	sh.shift = uint(64 - bits.TrailingZeros(uint(size)))
	for _, s := range old {
		if s.hash != 0 {
			i, _ := sh.find(s.hash)
			sh.slots[i] = s
		}
	}
}

// slotsFor is the table size for n keys after a sweep: at most 3/8 full,
// half the limit, so that it does not soon grow again.
func slotsFor(n int) int {
	size := minSlots
	for 8*n > 3*size {
		size *= 2
	}
	return size
}

// sweep drops sh's full buckets. The caller holds sh.mu.
func (l *Memory) sweep(sh *shard, now int64) {
	minFullAt := int64(math.MaxInt64)
	for i := 0; i < len(sh.slots); {
		s := &sh.slots[i]
		if s.hash == 0 {
			i++
			continue
		}
		if s.fullAt <= now {
			// remove may move a later entry into slot i (or one already
			// seen, from the run wrapping round the end, to a later
			// slot): look at slot i again.
			sh.remove(i)
			continue
		}
		minFullAt = min(minFullAt, s.fullAt)
		i++
	}
	live := sh.n
	if len(sh.slots) > minSlots && 16*live <= 3*len(sh.slots) {
		// Give back the memory of keys that came and went.
		sh.resize(slotsFor(live))
	}
	sh.minFullAt = minFullAt
	sh.sweepAt = max(2*live, minSweepLen)
	if live > l.maxKeysPerShard-l.maxKeysPerShard/8 {
		sh.backoffUntil = now + l.sweepBackoff
	}
}

// Sweep drops every bucket that is full now. Admit already keeps the table
// in proportion to the live buckets; Sweep gives memory back after traffic
// stops.
func (l *Memory) Sweep() {
	now := l.now()
	for i := range l.shards {
		sh := &l.shards[i]
		sh.mu.Lock()
		if now >= sh.minFullAt {
			l.sweep(sh, now)
		}
		sh.mu.Unlock()
	}
}

// SweepEvery calls Sweep every interval until ctx is done. Run it in its own
// goroutine; it returns when ctx is cancelled.
func (l *Memory) SweepEvery(ctx context.Context, interval time.Duration) {
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			l.Sweep()
		}
	}
}

// Keys is the number of buckets held: those not yet full, plus full ones
// not yet dropped.
func (l *Memory) Keys() int {
	n := 0
	for i := range l.shards {
		sh := &l.shards[i]
		sh.mu.Lock()
		n += sh.n
		sh.mu.Unlock()
	}
	return n
}
