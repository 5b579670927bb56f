package gateway_test

// How fast the worker drains charges when every acquirer call takes as long
// as a real acquirer's, next to how fast the API accepts them:
//
//	make bench-charges
//
// or go test -run '^$' -bench '^BenchmarkDrainCharges$' -benchtime 2000x ./server/gateway/
//
// Give it a fixed count (-benchtime Nx) of a few thousand: with the default
// one second the queue never grows deep enough to show the drain rate.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"
)

// drainLatency is the sandbox acquirer's latency for the drain benchmark:
// what a real acquirer takes for an authorisation.
const drainLatency = 300 * time.Millisecond

// BenchmarkDrainCharges sends b.N card charges (POST /tokens, then POST
// /charges) from 4×GOMAXPROCS clients as fast as the API answers, with the
// sandbox acquirer taking 300 ms per call, and stops the clock when the
// worker has finished every one of them.
//
// Metrics: charges/s is b.N over the time until the last charge was
// finished (the drain rate, once the queue is deep); accepted/s is b.N over
// the time the API took to accept them all; wait-p50-s, wait-p90-s and
// wait-p99-s are how long a charge stayed pending, from its creation to its
// answer (created_on to updated_on), at the median and the 90th and 99th
// percentiles.
func BenchmarkDrainCharges(b *testing.B) {
	g := newBenchGateway(b, drainLatency)
	start, accepted, elapsed := runCharges(b, g)
	waits, err := g.waits(start)
	if err != nil {
		b.Fatal(err)
	}
	if len(waits) != b.N {
		b.Fatalf("%d charges made during the run, want %d", len(waits), b.N)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "charges/s")
	b.ReportMetric(float64(b.N)/accepted.Seconds(), "accepted/s")
	b.ReportMetric(percentile(waits, 50).Seconds(), "wait-p50-s")
	b.ReportMetric(percentile(waits, 90).Seconds(), "wait-p90-s")
	b.ReportMetric(percentile(waits, 99).Seconds(), "wait-p99-s")
}

// waits lists, for every charge created at or after since, how long it was
// pending: from its creation to its last change, which for a charge that
// nobody touched since is the worker's answer.
func (g *benchGateway) waits(since time.Time) ([]time.Duration, error) {
	var waits []time.Duration
	cursor := ""
	for {
		path := g.URL + "/stores/" + g.StoreID + "/charges?limit=100"
		if cursor != "" {
			path += "&cursor=" + cursor
		}
		req, err := http.NewRequest(http.MethodGet, path, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Authorization", g.Auth)
		res, err := g.client.Do(req)
		if err != nil {
			return nil, err
		}
		var page struct {
			Items []struct {
				ID        string    `json:"id"`
				Status    string    `json:"status"`
				CreatedOn time.Time `json:"created_on"`
				UpdatedOn time.Time `json:"updated_on"`
			} `json:"items"`
			HasMore bool `json:"has_more"`
		}
		err = json.NewDecoder(res.Body).Decode(&page)
		res.Body.Close()
		if err != nil {
			return nil, err
		}
		for _, ch := range page.Items {
			if ch.CreatedOn.Before(since) {
				continue
			}
			if ch.Status != "successful" {
				return nil, fmt.Errorf("charge %s is %s", ch.ID, ch.Status)
			}
			waits = append(waits, ch.UpdatedOn.Sub(ch.CreatedOn))
		}
		if !page.HasMore || len(page.Items) == 0 {
			return waits, nil
		}
		cursor = page.Items[len(page.Items)-1].ID
	}
}

// percentile is the p-th percentile of ds (nearest rank).
func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (len(s)*p+99)/100 - 1
	return s[max(i, 0)]
}
