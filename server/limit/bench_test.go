package limit_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/kessai/kessai/server/limit"
	"github.com/kessai/kessai/server/limit/limittest"
)

// The benchmark traffic: 100 subjects, each polling 100 charges, so 10,000
// exact keys and 100 route keys (or 100 charge keys).
const (
	benchSubjects = 100
	benchPaths    = 100
)

// generous admits everything, to time the path that writes both buckets.
// Its burst refills slowly, so the buckets stay held (as busy keys are)
// rather than being dropped and inserted again.
var generous = limit.Rule{Burst: limit.MaxRuleValue, BurstRefillPerMinute: 1, PerMinute: limit.MaxRuleValue}

func benchRequests(class string, rules limit.Rules) [][]limit.Bucket {
	var requests [][]limit.Bucket
	for s := range benchSubjects {
		subject := fmt.Sprintf("store:%08d-2222-3333-4444-555555555555/mode:test", s)
		if class == "charge" {
			requests = append(requests, []limit.Bucket{{Kind: limit.KindCharge, Key: subject, Rule: rules.Charge}})
			continue
		}
		for p := range benchPaths {
			requests = append(requests, []limit.Bucket{
				{Kind: limit.KindRoute, Key: subject + "|/charges/{id}", Rule: rules.Route},
				{Kind: limit.KindExact, Key: fmt.Sprintf("%s|/charges/%08d-aaaa-bbbb-cccc-dddddddddddd", subject, p), Rule: rules.Exact},
			})
		}
	}
	// Interleave subjects, as concurrent clients would.
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(requests), func(i, j int) { requests[i], requests[j] = requests[j], requests[i] })
	return requests
}

var benchRuleSets = []struct {
	name  string
	rules limit.Rules
}{
	{"spec-rules", limit.DefaultRules()},
	{"all-admitted", limit.Rules{Charge: generous, Route: generous, Exact: generous}},
}

func BenchmarkAdmit(b *testing.B) {
	for _, class := range []string{"standard", "charge"} {
		for _, set := range benchRuleSets {
			b.Run(class+"/"+set.name, func(b *testing.B) {
				requests := benchRequests(class, set.rules)
				l := limit.NewMemory(limit.MemoryConfig{})
				ctx := context.Background()
				admitted := 0
				b.ReportAllocs()
				b.ResetTimer()
				defer measureCPU(b)()
				for i := range b.N {
					res, err := l.Admit(ctx, requests[i%len(requests)])
					if err != nil {
						b.Fatal(err)
					}
					if res.Admitted {
						admitted++
					}
				}
				b.ReportMetric(float64(admitted)/float64(b.N), "admitted/op")
			})
		}
	}
}

func BenchmarkAdmitParallel(b *testing.B) {
	for _, class := range []string{"standard", "charge"} {
		for _, set := range benchRuleSets {
			for _, shards := range []int{1, 8, limit.DefaultShards} {
				b.Run(fmt.Sprintf("%s/%s/shards=%d", class, set.name, shards), func(b *testing.B) {
					requests := benchRequests(class, set.rules)
					l := limit.NewMemory(limit.MemoryConfig{Shards: shards})
					ctx := context.Background()
					b.ReportAllocs()
					b.ResetTimer()
					defer measureCPU(b)()
					b.RunParallel(func(pb *testing.PB) {
						i := rand.IntN(len(requests))
						for pb.Next() {
							if _, err := l.Admit(ctx, requests[i%len(requests)]); err != nil {
								b.Error(err)
								return
							}
							i++
						}
					})
				})
			}
		}
	}
}

// BenchmarkBaseline is the floor Admit is compared with: the clock read and
// a mutex-guarded map lookup and store per bucket, with nothing decided.
func BenchmarkBaseline(b *testing.B) {
	type state struct{ burst, minute, at int64 }
	run := func(b *testing.B, readClock bool, parallel bool) {
		requests := benchRequests("standard", limit.DefaultRules())
		var mu sync.Mutex
		states := make(map[string]state)
		one := func(i int) {
			var now int64
			if readClock {
				now = time.Now().UnixMicro()
			}
			mu.Lock()
			for _, bucket := range requests[i%len(requests)] {
				s := states[bucket.Key]
				s.at = now
				states[bucket.Key] = s
			}
			mu.Unlock()
		}
		b.ReportAllocs()
		b.ResetTimer()
		defer measureCPU(b)()
		if !parallel {
			for i := range b.N {
				one(i)
			}
			return
		}
		b.RunParallel(func(pb *testing.PB) {
			i := rand.IntN(len(requests))
			for pb.Next() {
				one(i)
				i++
			}
		})
	}
	b.Run("mutex+map[string]x2", func(b *testing.B) { run(b, false, false) })
	b.Run("time.Now+mutex+map[string]x2", func(b *testing.B) { run(b, true, false) })
	b.Run("time.Now+mutex+map[string]x2/parallel", func(b *testing.B) { run(b, true, true) })
}

// BenchmarkIdleKeyMemory reports the heap per held key, a million distinct
// exact keys all live.
func BenchmarkIdleKeyMemory(b *testing.B) {
	for range b.N {
		b.ReportMetric(idleKeyBytes(1_000_000), "B/key")
	}
}

// BenchmarkAdmitNewKey times the path of a request whose exact key is new
// (a query string never seen, say): insert, and the amortised sweeps that
// drop the keys of earlier cycles.
func BenchmarkAdmitNewKey(b *testing.B) {
	const keys = 100_000
	requests := make([][]limit.Bucket, keys)
	for i := range requests {
		requests[i] = []limit.Bucket{{Kind: limit.KindExact, Key: fmt.Sprintf("store:1/mode:test|/charges/c?x=%d", i), Rule: limit.ExactRule()}}
	}
	c := limittest.NewClock()
	l := limit.NewMemory(limit.MemoryConfig{Clock: c})
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	defer measureCPU(b)()
	for i := range b.N {
		if i%keys == 0 {
			// Every key of the last cycle is full again.
			c.Advance(time.Second)
		}
		if res, err := l.Admit(ctx, requests[i%keys]); err != nil || !res.Admitted {
			b.Fatal(res, err)
		}
	}
	b.ReportMetric(float64(l.Keys()), "keys-held")
}
