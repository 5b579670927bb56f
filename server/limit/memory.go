package limit

import (
	"context"
	"hash/maphash"
	"maps"
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
// sweeping a small map buys little and would run too often. Below
// minRebuildLen a shrunk map is not worth copying.
const (
	minSweepLen   = 512
	minRebuildLen = 1024
	minShardKeys  = 1024
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

// Memory is the Limiter of a single instance: buckets in a sharded map.
//
// Key table. Buckets are keyed by a 64-bit maphash of their key, seeded per
// Kind with a random seed per process, so an entry costs the same whatever
// the key's length, keeps no string alive and the map holds no pointers for
// the garbage collector to scan. Two keys sharing a hash would share a
// bucket: with a secret seed nobody can aim for that, the chance that any
// two of a million live keys collide is about 3·10^-8, and it would only
// make the limit stricter for those two keys.
//
// Locking. A request locks the shards of its buckets in ascending order, so
// that two requests can never deadlock and the check and the charge of all
// its buckets are one atomic step.
//
// Memory. A bucket is dropped once it is full again (State.FullAt), which is
// lossless: a full bucket and a missing one behave the same. Full buckets
// are dropped by a refused request that finds them, by a shard sweeping
// itself each time it has doubled since its last sweep (amortised O(1) per
// new key), and by Sweep or SweepEvery. A shard whose map has shrunk to a
// quarter of its peak is copied, since Go maps never give memory back.
//
// Cap. When a shard holds its share of MaxKeys and a request needs a new
// key there, the shard is swept; if that frees no room, the request is
// refused with ErrFull and nothing is charged. Evicting a live bucket
// instead would hand its owner a fresh burst: an attacker who can fill the
// table with junk keys could reset the buckets of the path it actually wants
// to hammer. Refusing keeps every admitted request within its limits, and
// keys already held (clients already being served) keep working.
type Memory struct {
	clock           Clock
	epoch           time.Time
	seeds           [kindCount]maphash.Seed
	shards          []shard
	shardMask       uint64
	maxKeysPerShard int
	sweepBackoff    int64
}

type shard struct {
	mu      sync.Mutex
	entries map[uint64]entry
	// peak is the largest len(entries) since the map was made: its size in
	// memory.
	peak int
	// sweepAt is the length at which the shard sweeps itself.
	sweepAt int
	// Nothing can be dropped before minFullAt (a lower bound of every
	// entry's fullAt), and the shard does not sweep for room before
	// backoffUntil.
	minFullAt    int64
	backoffUntil int64
	// Shards sit side by side; keep each one's lock on its own cache lines.
	_ [128 - 48]byte
}

type entry struct {
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
	l := &Memory{
		clock:           cfg.Clock,
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
		l.shards[i].entries = make(map[uint64]entry)
		l.shards[i].sweepAt = minSweepLen
		l.shards[i].minFullAt = math.MaxInt64
	}
	return l
}

// now is the limiter's time in microseconds since it was made. Sub uses the
// monotonic readings when the clock provides them.
func (l *Memory) now() int64 { return l.clock.Now().Sub(l.epoch).Microseconds() }

func (l *Memory) shardOf(hash uint64) *shard { return &l.shards[hash&l.shardMask] }

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
		heldArray  [inlineBuckets]bool
		lockArray  [inlineBuckets]int
	)
	hashes, rules, states, held, locks := hashArray[:0], ruleArray[:0], stateArray[:], heldArray[:], lockArray[:0]
	if n > inlineBuckets {
		hashes, rules, states, held, locks = make([]uint64, 0, n), make([]Rule, 0, n), make([]State, n), make([]bool, n), make([]int, 0, n)
	}
	states, held = states[:n], held[:n]
	for _, b := range buckets {
		if err := b.validate(); err != nil {
			return Result{}, err
		}
		h := maphash.String(l.seeds[b.Kind], b.Key)
		if slices.Contains(hashes, h) {
			return Result{}, ErrDuplicateBucket
		}
		hashes = append(hashes, h)
		rules = append(rules, b.Rule)
		if i, found := slices.BinarySearch(locks, int(h&l.shardMask)); !found {
			locks = slices.Insert(locks, i, int(h&l.shardMask))
		}
	}

	now := l.now()
	for _, s := range locks {
		l.shards[s].mu.Lock()
	}
	for i, h := range hashes {
		e, ok := l.shardOf(h).entries[h]
		held[i] = ok
		if ok {
			states[i] = e.state
		} else {
			states[i] = FullState(rules[i], now)
		}
	}
	d := Decide(now, rules, states)
	var err error
	if !d.Admitted {
		l.dropFull(hashes, rules, states, held)
	} else if wait, ok := l.makeRoom(locks, hashes, held, now); ok {
		l.store(locks, hashes, rules, states, now)
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
	for i, b := range buckets {
		res.add(BucketResult{Kind: b.Kind, Rule: b.Rule, Remaining: states[i].Remaining()})
	}
	return res, err
}

// dropFull forgets the buckets a refused request found full: it costs no
// more than the lookup already made.
func (l *Memory) dropFull(hashes []uint64, rules []Rule, states []State, held []bool) {
	for i, h := range hashes {
		if held[i] && states[i].Burst == int64(rules[i].Burst)*Unit && states[i].Minute == int64(rules[i].PerMinute)*Unit {
			delete(l.shardOf(h).entries, h)
		}
	}
}

// makeRoom reports whether the locked shards can take the request's new
// keys, sweeping a shard that cannot. If they cannot, it returns how long
// until one might (in microseconds).
func (l *Memory) makeRoom(locks []int, hashes []uint64, held []bool, now int64) (int64, bool) {
	for _, s := range locks {
		sh := &l.shards[s]
		if len(sh.entries)+l.newKeys(s, hashes, held) <= l.maxKeysPerShard {
			continue
		}
		if now >= sh.backoffUntil && now >= sh.minFullAt {
			l.sweep(sh, now)
			// The sweep may have dropped buckets this request holds:
			// they were full, so they are new keys now.
			for i, h := range hashes {
				if int(h&l.shardMask) == s {
					_, held[i] = sh.entries[h]
				}
			}
		}
		if len(sh.entries)+l.newKeys(s, hashes, held) > l.maxKeysPerShard {
			return max(sh.backoffUntil-now, sh.minFullAt-now, 1), false
		}
	}
	return 0, true
}

func (l *Memory) newKeys(s int, hashes []uint64, held []bool) int {
	n := 0
	for i, h := range hashes {
		if int(h&l.shardMask) == s && !held[i] {
			n++
		}
	}
	return n
}

func (l *Memory) store(locks []int, hashes []uint64, rules []Rule, states []State, now int64) {
	for i, h := range hashes {
		sh := l.shardOf(h)
		fullAt := states[i].FullAt(rules[i])
		sh.entries[h] = entry{state: states[i], fullAt: fullAt}
		sh.minFullAt = min(sh.minFullAt, fullAt)
		sh.peak = max(sh.peak, len(sh.entries))
	}
	for _, s := range locks {
		sh := &l.shards[s]
		if len(sh.entries) >= sh.sweepAt && now >= sh.minFullAt {
			l.sweep(sh, now)
		}
	}
}

// sweep drops sh's full buckets. The caller holds sh.mu.
func (l *Memory) sweep(sh *shard, now int64) {
	minFullAt := int64(math.MaxInt64)
	for h, e := range sh.entries {
		if e.fullAt <= now {
			delete(sh.entries, h)
		} else {
			minFullAt = min(minFullAt, e.fullAt)
		}
	}
	live := len(sh.entries)
	if sh.peak >= minRebuildLen && sh.peak >= 4*live {
		// Go maps keep their largest size after deletes; a copy holding
		// only the survivors gives the memory back.
		// (maps.Clone would copy the large table as it is.)
		fresh := make(map[uint64]entry, live)
		maps.Insert(fresh, maps.All(sh.entries))
		sh.entries = fresh
		sh.peak = live
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
		n += len(sh.entries)
		sh.mu.Unlock()
	}
	return n
}
