package redis

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/kessai/kessai/server/limit"
)

// benchRequests is server/limit's benchmark traffic: 100 subjects each
// polling 100 charges (a route and an exact bucket per request), with
// rules that admit everything, so that every decision writes both buckets.
func benchRequests() [][]limit.Bucket {
	generous := limit.Rule{Burst: limit.MaxRuleValue, BurstRefillPerMinute: 1, PerMinute: limit.MaxRuleValue}
	var requests [][]limit.Bucket
	for s := range 100 {
		subject := fmt.Sprintf("store:%08d-2222-3333-4444-555555555555/mode:test", s)
		for p := range 100 {
			requests = append(requests, []limit.Bucket{
				{Kind: limit.KindRoute, Key: subject + "|/charges/{id}", Rule: generous},
				{Kind: limit.KindExact, Key: fmt.Sprintf("%s|/charges/%08d-aaaa-bbbb-cccc-dddddddddddd", subject, p), Rule: generous},
			})
		}
	}
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(requests), func(i, j int) { requests[i], requests[j] = requests[j], requests[i] })
	return requests
}

// pinger is a Limiter that only pings the test Redis.
type pinger struct{}

func (pinger) Admit(ctx context.Context, _ []limit.Bucket) (limit.Result, error) {
	return limit.Result{Admitted: true}, testClient.Ping(ctx).Err()
}

// BenchmarkAdmitRedis times a decision on Redis (one round trip to the
// test Redis) beside the memory back end in the same run, from 1 goroutine
// and from 16 (as a busy gateway's handlers would call it).
func BenchmarkAdmitRedis(b *testing.B) {
	requests := benchRequests()
	backends := []struct {
		name string
		new  func(b *testing.B) limit.Limiter
	}{
		{"memory", func(*testing.B) limit.Limiter { return limit.NewMemory(limit.MemoryConfig{}) }},
		{"redis", func(b *testing.B) limit.Limiter { return newTestLimiter(b, Config{Timeout: time.Second}) }},
		// The floor: one PING per call, the round trip without the script.
		{"redis-ping", func(*testing.B) limit.Limiter { return pinger{} }},
	}
	for _, be := range backends {
		for _, goroutines := range []int{1, 16} {
			b.Run(fmt.Sprintf("%s/goroutines=%d", be.name, goroutines), func(b *testing.B) {
				l := be.new(b)
				ctx := context.Background()
				b.ReportAllocs()
				b.SetParallelism((goroutines + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
				start := time.Now()
				if goroutines == 1 {
					for i := range b.N {
						if _, err := l.Admit(ctx, requests[i%len(requests)]); err != nil {
							b.Fatal(err)
						}
					}
				} else {
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
				}
				b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "decisions/s")
			})
		}
	}
}
