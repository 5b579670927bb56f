package gateway_test

// Charges per second on the embedded store, next to the raw commit rate of
// the same kind of SQLite file in the same run:
//
//	make bench-charges
//
// or go test -run '^$' -bench '^(BenchmarkCreateCharge|BenchmarkSQLiteCommit)$' -benchmem ./server/gateway/
//
// Both benchmarks run the gateway the binary runs, started by the same
// function (gatewaytest.Start, through gateway.Start): kessai.db through
// sqlite.Open (WAL, synchronous=FULL, one writer connection), keys
// generated into the temp data directory, the demo account seeded, the
// worker, the limiters and idempotency in front of the API. Differences
// from the binary, on purpose: logs are discarded, the daily test-charge
// quota is lifted (b.N exceeds the 1440 a day of the default limits), the
// rate limits are raised to their ceiling so that they count but never
// refuse, and the sandbox acquirer has no latency.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kessai/kessai/server/gateway"
	"github.com/kessai/kessai/server/gateway/gatewaytest"
	"github.com/kessai/kessai/server/kessaitest"
	"github.com/kessai/kessai/server/limit"
)

// benchGateway is a test gateway with a client sized for the benchmark's
// concurrency.
type benchGateway struct {
	*gatewaytest.Gateway
	client *http.Client
}

// newBenchGateway starts a benchmark's gateway; latency is the sandbox
// acquirer's.
func newBenchGateway(b *testing.B, latency time.Duration) *benchGateway {
	b.Helper()
	g := gatewaytest.Start(b, gatewaytest.Options{Quiet: true, Latency: latency, Configure: func(c *gateway.Config) {
		c.Resources.TestChargesPerDay = math.MaxInt32
		ceiling := limit.Rule{Burst: limit.MaxRuleValue, BurstRefillPerMinute: limit.MaxRuleValue, PerMinute: limit.MaxRuleValue}
		c.Rates = limit.Rules{Charge: ceiling, Route: ceiling, Exact: ceiling}
	}})
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	b.Cleanup(client.CloseIdleConnections)
	return &benchGateway{Gateway: g, client: client}
}

func (g *benchGateway) post(path string, body []byte, want int) ([]byte, error) {
	req, err := http.NewRequest(http.MethodPost, g.URL+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", g.Auth)
	req.Header.Set("Content-Type", "application/json")
	res, err := g.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	if err == nil && res.StatusCode != want {
		err = fmt.Errorf("POST %s: %d %s", path, res.StatusCode, out)
	}
	return out, err
}

// pending counts charges the worker has not finished yet (at most one
// page's worth: only zero matters).
func (g *benchGateway) pending() (int, error) {
	req, err := http.NewRequest(http.MethodGet, g.URL+"/stores/"+g.StoreID+"/charges?status=pending&limit=100", nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", g.Auth)
	res, err := g.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	var page struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.NewDecoder(res.Body).Decode(&page); err != nil {
		return 0, err
	}
	return len(page.Items), nil
}

var benchTokenBody = []byte(fmt.Sprintf(`{"payment_type":"card","type":"one_time","email":"bench@example.com",`+
	`"data":{"cardholder":"TARO YAMADA","card_number":"4000020000000000","exp_month":12,"exp_year":%d,"cvv":"123"}}`,
	time.Now().Year()+3))

// BenchmarkCreateCharge measures card charges end to end on the embedded
// store: one op is POST /tokens (201) then POST /charges (201) over real
// HTTP (httptest, loopback) through the full API handler (router and
// middleware), and the timed region ends only when the worker has
// finished every charge (successful). 4×GOMAXPROCS clients send
// concurrently. Each charge costs three write transactions: the token,
// the charge, the authorisation; and a share of the worker's claims.
//
// Metrics: ns/op is wall time per fully processed charge; charges/s is its
// inverse; accepted/s is how fast the API answered 201 to both requests
// (the worker keeps up or lags behind that); tx/charge and commits/charge
// are the write transactions and the SQLite COMMITs (WAL fsyncs) per
// charge, warm-up included: group commit (server/sqlite/group.go) shares
// one COMMIT among concurrent transactions. KESSAI_BENCH_MAX_GROUP=1 turns
// it off, for a comparison in the same build.
func BenchmarkCreateCharge(b *testing.B) {
	g := newBenchGateway(b, 0)
	benchMaxGroup(b, g)
	b.ReportAllocs()
	before := g.SQLite().WriteStats()
	_, accepted, elapsed := runCharges(b, g)
	after := g.SQLite().WriteStats()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "charges/s")
	b.ReportMetric(float64(b.N)/accepted.Seconds(), "accepted/s")
	charges := float64(b.N + benchWarmUpCharges)
	b.ReportMetric(float64(after.Transactions-before.Transactions)/charges, "tx/charge")
	b.ReportMetric(float64(after.Commits-before.Commits)/charges, "commits/charge")
}

// benchMaxGroup applies KESSAI_BENCH_MAX_GROUP (sqlite.DB.SetMaxGroup).
func benchMaxGroup(b *testing.B, g *benchGateway) {
	if v := os.Getenv("KESSAI_BENCH_MAX_GROUP"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			b.Fatalf("KESSAI_BENCH_MAX_GROUP: %v", err)
		}
		g.SQLite().SetMaxGroup(n)
	}
}

// runCharges is the timed part of the charge benchmarks. It warms g up,
// untimed: connections, caches, the worker, and the WAL file, which grows
// on a fresh database until its first checkpoint (appends that change the
// file size make each fsync dearer than the steady state of a gateway that
// has been running a while). Then it sends b.N charges from 4×GOMAXPROCS
// clients and waits until the worker has finished every one. It returns
// when the run started, how long the API took to accept every charge and
// how long until the last was finished, with the timer stopped.
func runCharges(b *testing.B, g *benchGateway) (start time.Time, accepted, elapsed time.Duration) {
	b.Helper()
	for range benchWarmUpCharges {
		if err := benchCharge(g); err != nil {
			b.Fatal(err)
		}
	}
	waitDrained(b, g)

	var failed atomic.Value
	b.SetParallelism(4)
	b.ResetTimer()
	start = time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := benchCharge(g); err != nil {
				failed.CompareAndSwap(nil, err)
				return
			}
		}
	})
	accepted = time.Since(start)
	waitDrained(b, g)
	elapsed = time.Since(start)
	b.StopTimer()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	return start, accepted, elapsed
}

// Untimed warm-up sizes: enough for the WAL (auto-checkpoint at 1000
// pages) to wrap once.
const (
	benchWarmUpCharges = 150
	benchWarmUpCommits = 1500
)

func benchCharge(g *benchGateway) error {
	out, err := g.post("/tokens", benchTokenBody, http.StatusCreated)
	if err != nil {
		return err
	}
	var tok struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(out, &tok); err != nil {
		return err
	}
	_, err = g.post("/charges", []byte(`{"transaction_token_id":"`+tok.ID+`","amount":1000,"currency":"JPY"}`), http.StatusCreated)
	return err
}

// waitDrained waits until the worker has finished every charge.
func waitDrained(b *testing.B, g *benchGateway) {
	b.Helper()
	kessaitest.WaitFor(b, 5*time.Minute, "the worker to finish every charge", func() bool {
		n, err := g.pending()
		if err != nil {
			b.Fatal(err)
		}
		return n == 0
	})
}

// BenchmarkSQLiteCommit is the floor for BenchmarkCreateCharge: the raw
// commit rate of a gateway's kessai.db, opened exactly as the gateway opens
// it (sqlite.Open: WAL, synchronous=FULL, the one writer connection). One
// op is one autocommitted INSERT of one row into a scratch table, i.e. one
// write transaction with its WAL fsync.
func BenchmarkSQLiteCommit(b *testing.B) {
	g := newBenchGateway(b, 0)
	ctx := context.Background()
	if err := g.SQLite().Exec(ctx, `CREATE TABLE bench_commit (id INTEGER PRIMARY KEY, payload TEXT NOT NULL, created_on INTEGER NOT NULL)`); err != nil {
		b.Fatal(err)
	}
	payload := string(bytes.Repeat([]byte("x"), 200))
	// Warm up the WAL past its first checkpoint, as for the charges.
	for range benchWarmUpCommits {
		if err := g.SQLite().Exec(ctx, `INSERT INTO bench_commit (payload, created_on) VALUES (?, ?)`, payload, time.Now().UnixNano()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if err := g.SQLite().Exec(ctx, `INSERT INTO bench_commit (payload, created_on) VALUES (?, ?)`, payload, time.Now().UnixNano()); err != nil {
			b.Fatal(err)
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "commits/s")
}
