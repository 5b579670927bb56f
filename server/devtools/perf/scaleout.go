// The scale-out rows (PERF_SCALEOUT=1, `make perf-scaleout`): the same
// paths on PostgreSQL + Redis, with one gateway process and with two on one
// schema and one Redis prefix, beside the SQLite rows above them in the
// table and beside anchors measured in the same run.
//
//   - Read path: one charge made through the API, then GET
//     /stores/{id}/charges/{id} under wrk against one process (-t2 -c32), and
//     against two at once (two wrk -t1 -c16 side by side, one per process:
//     the same 32 connections, their rates summed), interleaved with the bare
//     net/http handler answering the same bytes; medians of PERF_ROUNDS.
//   - Write path: loadClients HTTP clients send POST /tokens then POST
//     /charges for PERF_DURATION, spread over the processes; accepted is how
//     fast both answered 201, processed how fast the worker(s) finished them
//     (until GET …/charges?status=pending is empty). The anchor is the raw
//     commit rate of the same PostgreSQL: autocommitted single-row INSERTs
//     from as many connections for as long, synchronous_commit on, as the
//     gateway commits; the note gives one connection's rate too.
//   - Drain: with the sandbox acquirer taking 300 ms a call,
//     PERF_SCALEOUT_CHARGES charges (default 1000) sent as fast as the API
//     takes them, and how fast they are finished.
//
// The database is KESSAI_TEST_DATABASE_URL (default the local server's
// "test", as the Go tests use it) and Redis KESSAI_TEST_REDIS_URL (default
// redis://127.0.0.1:6379/0); each cluster gets a fresh schema and key
// prefix, dropped and deleted when it stops.
//
// On one machine two processes share its cores with each other and with the
// load: these rows show what a second process costs or gains on the same
// hardware (and that the figures hold across processes), not how a second
// machine would scale.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	goredis "github.com/redis/go-redis/v9"
)

const (
	defaultTestDatabaseURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	defaultTestRedisURL    = "redis://127.0.0.1:6379/0"
	// loadClients is the write path's concurrency: 4×GOMAXPROCS on this
	// 2-core machine's terms, as the SQLite benchmark sends, doubled so
	// that two processes each get as many as that one did.
	loadClients = 16
)

func scaleoutDatabaseURL() string { return env("KESSAI_TEST_DATABASE_URL", defaultTestDatabaseURL) }
func scaleoutRedisURL() string    { return env("KESSAI_TEST_REDIS_URL", defaultTestRedisURL) }

// hostOf names a server without the URL's credentials.
func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(an unparsable URL)"
	}
	return u.Scheme + "://" + u.Host + u.Path
}

// scaleoutReachable fails at once, rather than after the SQLite rows, when
// PostgreSQL or Redis does not answer.
func scaleoutReachable() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var errs []error
	if conn, err := pgx.Connect(ctx, scaleoutDatabaseURL()); err != nil {
		errs = append(errs, fmt.Errorf("PostgreSQL at %s (KESSAI_TEST_DATABASE_URL) does not answer", hostOf(scaleoutDatabaseURL())))
	} else {
		conn.Close(ctx)
	}
	if opt, err := goredis.ParseURL(scaleoutRedisURL()); err != nil {
		errs = append(errs, errors.New("KESSAI_TEST_REDIS_URL is not a redis:// URL"))
	} else {
		c := goredis.NewClient(opt)
		if err := c.Ping(ctx).Err(); err != nil {
			errs = append(errs, fmt.Errorf("Redis at %s (KESSAI_TEST_REDIS_URL) does not answer", hostOf(scaleoutRedisURL())))
		}
		c.Close()
	}
	if len(errs) > 0 {
		return fmt.Errorf("PERF_SCALEOUT: %w; .ci/ensure-deps starts PostgreSQL and Redis", errors.Join(errs...))
	}
	return nil
}

// cluster is n gateway processes on one schema and one Redis prefix.
type cluster struct {
	schema, prefix string
	gateways       []*gateway
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func adminExec(sql string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, scaleoutDatabaseURL())
	if err != nil {
		return fmt.Errorf("PostgreSQL at %s: %w", hostOf(scaleoutDatabaseURL()), err)
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}

// schemaURL is the test database's URL with connections on schema.
func schemaURL(schema string) string {
	u, _ := url.Parse(scaleoutDatabaseURL())
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// startCluster starts n processes, one after another so that the first
// migrates the schema and seeds the demo account, all with the same keys
// and the first's address as their public URL; the credentials are the
// first's.
func startCluster(st settings, bin string, n int, latency string) (*cluster, error) {
	c := &cluster{schema: "kessai_perf_" + randomHex(6), prefix: "kessai-perf-" + randomHex(6) + ":"}
	if err := adminExec("CREATE SCHEMA " + c.schema); err != nil {
		return nil, err
	}
	signing, card := randomHex(32), randomHex(32)
	addrs := make([]string, n)
	for i := range addrs {
		var err error
		if addrs[i], err = freeAddr(); err != nil {
			c.stop()
			return nil, err
		}
	}
	for i, addr := range addrs {
		dataDir := filepath.Join(st.scratch, c.schema+"-"+strconv.Itoa(i))
		g := &gateway{url: "http://" + addr, logPath: dataDir + ".log"}
		environ := []string{
			"KESSAI_ADDR=" + addr, "KESSAI_DEMO_ADDR=", "KESSAI_DATA_DIR=" + dataDir,
			"KESSAI_SANDBOX_LATENCY=" + latency, "KESSAI_LOG_LEVEL=info",
			"KESSAI_LIMIT_TEST_CHARGES_PER_DAY=" + ceiling,
			"KESSAI_DATABASE_URL=" + schemaURL(c.schema), "KESSAI_REDIS_URL=" + scaleoutRedisURL(),
			"KESSAI_REDIS_PREFIX=" + c.prefix, "KESSAI_SIGNING_KEY=" + signing, "KESSAI_CARD_KEY=" + card,
			"KESSAI_PUBLIC_URL=http://" + addrs[0],
		}
		for _, class := range []string{"CHARGE", "ROUTE", "EXACT"} {
			for _, knob := range []string{"BURST", "REFILL_PER_MINUTE", "PER_MINUTE"} {
				environ = append(environ, "KESSAI_RATE_"+class+"_"+knob+"="+ceiling)
			}
		}
		if err := g.start(bin, environ); err != nil {
			c.stop()
			return nil, err
		}
		c.gateways = append(c.gateways, g)
		if i == 0 {
			var err error
			if g.auth, g.storeID, err = demoAuth(dataDir); err != nil {
				c.stop()
				return nil, err
			}
		} else {
			g.auth, g.storeID = c.gateways[0].auth, c.gateways[0].storeID
		}
	}
	return c, nil
}

// start runs bin with environ and waits for GET /heartbeat.
func (g *gateway) start(bin string, environ []string) error {
	logFile, err := os.Create(g.logPath)
	if err != nil {
		return err
	}
	defer logFile.Close()
	g.cmd = exec.Command(bin, "serve")
	g.cmd.Env = append(cleanEnv(), environ...)
	g.cmd.Stdout, g.cmd.Stderr = io.Discard, logFile
	if err := g.cmd.Start(); err != nil {
		return err
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if res, err := http.Get(g.url + "/heartbeat"); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			g.stop()
			return fmt.Errorf("a gateway on PostgreSQL did not answer /heartbeat within 30 s (log: %s)", tail(g.logPath))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stop stops the processes, drops the schema and deletes the prefix's keys.
func (c *cluster) stop() {
	var wg sync.WaitGroup
	for _, g := range c.gateways {
		wg.Go(g.stop)
	}
	wg.Wait()
	if err := adminExec("DROP SCHEMA IF EXISTS " + c.schema + " CASCADE"); err != nil {
		fmt.Fprintf(os.Stderr, "perf: dropping schema %s: %v\n", c.schema, err)
	}
	opt, err := goredis.ParseURL(scaleoutRedisURL())
	if err != nil {
		return
	}
	rc := goredis.NewClient(opt)
	defer rc.Close()
	ctx := context.Background()
	iter := rc.Scan(ctx, 0, c.prefix+"*", 1000).Iterator()
	var keys []string
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	for len(keys) > 0 {
		n := min(len(keys), 500)
		rc.Del(ctx, keys[:n]...)
		keys = keys[n:]
	}
}

// loadClient is an HTTP client that keeps a connection for every client of
// the load (the default transport keeps two per host and would reconnect).
var loadClient = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4 * loadClients}}

func (g *gateway) post(path, body string) (string, error) {
	req, err := http.NewRequest(http.MethodPost, g.url+path, strings.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", g.auth)
	req.Header.Set("Content-Type", "application/json")
	res, err := loadClient.Do(req)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return "", err
	}
	var obj struct{ ID string }
	if res.StatusCode != http.StatusCreated || json.Unmarshal(b, &obj) != nil || obj.ID == "" {
		return "", fmt.Errorf("POST %s: %d %s", path, res.StatusCode, b)
	}
	return obj.ID, nil
}

var loadTokenBody = fmt.Sprintf(`{"payment_type":"card","type":"one_time","email":"perf@example.com",`+
	`"data":{"cardholder":"TARO YAMADA","card_number":"4000020000000000","exp_month":12,"exp_year":%d,"cvv":"123"}}`,
	time.Now().Year()+3)

// charge is one charge: POST /tokens, then POST /charges of that token.
func (g *gateway) charge() error {
	tok, err := g.post("/tokens", loadTokenBody)
	if err != nil {
		return err
	}
	_, err = g.post("/charges", `{"transaction_token_id":"`+tok+`","amount":1000,"currency":"JPY"}`)
	return err
}

// pendingCharges counts the charges not finished yet (one page's worth:
// only zero matters).
func (g *gateway) pendingCharges() (int, error) {
	req, err := http.NewRequest(http.MethodGet, g.url+"/stores/"+g.storeID+"/charges?status=pending&limit=100", nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", g.auth)
	res, err := loadClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	var page struct {
		Items []json.RawMessage `json:"items"`
	}
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(res.Body)
		return 0, fmt.Errorf("GET pending charges: %d %s", res.StatusCode, b)
	}
	if err := json.NewDecoder(res.Body).Decode(&page); err != nil {
		return 0, err
	}
	return len(page.Items), nil
}

func (c *cluster) waitDrained(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		n, err := c.gateways[0].pendingCharges()
		if err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("charges still pending after %s", limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// chargeLoad sends charges from loadClients clients, spread over the
// processes, until d has passed (d > 0) or count charges were sent, then
// waits until every one is finished. It returns how many were accepted,
// how long acceptance took and how long until the last was finished.
func (c *cluster) chargeLoad(d time.Duration, count int) (n int, accepted, processed time.Duration, err error) {
	var started, done atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	start := time.Now()
	for i := range loadClients {
		g := c.gateways[i%len(c.gateways)]
		wg.Go(func() {
			for failed.Load() == nil {
				if d > 0 && time.Since(start) >= d || d <= 0 && started.Add(1) > int64(count) {
					return
				}
				if err := g.charge(); err != nil {
					failed.CompareAndSwap(nil, err)
					return
				}
				done.Add(1)
			}
		})
	}
	wg.Wait()
	accepted = time.Since(start)
	if err, _ := failed.Load().(error); err != nil {
		return 0, 0, 0, err
	}
	n = int(done.Load())
	if err := c.waitDrained(5 * time.Minute); err != nil {
		return 0, 0, 0, err
	}
	return n, accepted, time.Since(start), nil
}

// warm sends a few charges, untimed: connections, caches, the workers.
func (c *cluster) warm() error {
	_, _, _, err := c.chargeLoad(0, 4*loadClients)
	return err
}

// rawCommits is the commit rate of autocommitted single-row INSERTs into a
// scratch table of a fresh schema, from conns connections for d.
func rawCommits(conns int, d time.Duration) (float64, error) {
	schema := "kessai_perf_" + randomHex(6)
	if err := adminExec("CREATE SCHEMA " + schema); err != nil {
		return 0, err
	}
	defer adminExec("DROP SCHEMA IF EXISTS " + schema + " CASCADE")
	cfg, err := pgxpool.ParseConfig(schemaURL(schema))
	if err != nil {
		return 0, err
	}
	// As the gateway opens it (server/postgres): an acknowledged commit
	// is durable.
	cfg.ConnConfig.RuntimeParams["synchronous_commit"] = "on"
	cfg.MaxConns, cfg.MinConns = int32(conns), int32(conns)
	ctx := context.Background()
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return 0, err
	}
	defer pool.Close()
	if _, err := pool.Exec(ctx, `CREATE TABLE perf_commit (id bigserial PRIMARY KEY, payload text NOT NULL, created_on timestamptz NOT NULL)`); err != nil {
		return 0, err
	}
	payload := strings.Repeat("x", 200)
	insert := func() error {
		_, err := pool.Exec(ctx, `INSERT INTO perf_commit (payload, created_on) VALUES ($1, $2)`, payload, time.Now())
		return err
	}
	for range 200 {
		if err := insert(); err != nil {
			return 0, err
		}
	}
	var commits atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	start := time.Now()
	for range conns {
		wg.Go(func() {
			for time.Since(start) < d {
				if err := insert(); err != nil {
					failed.CompareAndSwap(nil, err)
					return
				}
				commits.Add(1)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err, _ := failed.Load().(error); err != nil {
		return 0, err
	}
	return float64(commits.Load()) / elapsed.Seconds(), nil
}

// scaleout measures the rows described at the top of this file.
func scaleout(st settings, bin string) ([]row, error) {
	fmt.Printf("perf: PostgreSQL at %s + Redis at %s, one gateway process and two (server/devtools/perf/scaleout.go)\n",
		hostOf(scaleoutDatabaseURL()), hostOf(scaleoutRedisURL()))
	d, err := time.ParseDuration(st.duration)
	if err != nil {
		return nil, err
	}
	rows, err := scaleoutRead(st, bin)
	if err != nil {
		return nil, err
	}
	w, err := scaleoutWrite(st, bin, d)
	if err != nil {
		return nil, err
	}
	rows = append(rows, w...)
	dr, err := scaleoutDrain(st, bin)
	if err != nil {
		return nil, err
	}
	return append(rows, dr...), nil
}

func scaleoutRead(st settings, bin string) ([]row, error) {
	c, err := startCluster(st, bin, 2, "0")
	if err != nil {
		return nil, err
	}
	defer c.stop()
	first, second := c.gateways[0], c.gateways[1]
	path, res, body, err := first.seedCharge()
	if err != nil {
		return nil, err
	}
	bareURL, stopBare, err := bareServer(res, body)
	if err != nil {
		return nil, err
	}
	defer stopBare()
	auth := "Authorization: " + first.auth
	half := st
	half.wrkThreads, half.wrkConns = "1", strconv.Itoa(atoiOr(st.wrkConns, 32)/2)
	var one, two, bare []float64
	for i := range st.rounds {
		k1, lat1, err := wrk(st, first.url+path, auth)
		if err != nil {
			return nil, err
		}
		var a, b float64
		var aerr, berr error
		var wg sync.WaitGroup
		wg.Go(func() { a, _, aerr = wrk(half, first.url+path, auth) })
		wg.Go(func() { b, _, berr = wrk(half, second.url+path, auth) })
		wg.Wait()
		if err := errors.Join(aerr, berr); err != nil {
			return nil, err
		}
		bb, _, err := wrk(st, bareURL+path, auth)
		if err != nil {
			return nil, err
		}
		one, two, bare = append(one, k1), append(two, a+b), append(bare, bb)
		fmt.Printf("perf: PostgreSQL round %d: 1 process %.0f req/s (%s), 2 processes %.0f + %.0f req/s, bare %.0f req/s\n", i+1, k1, lat1, a, b, bb)
	}
	return []row{
		{path: "GET …/charges/{id}, PostgreSQL + Redis, 1 process (req/s)", kessai: rps(median(one)), anchor: rps(median(bare)) + " bare net/http",
			ratio: ratio(median(one), median(bare)), note: "spread " + spread(one) + ", bare " + spread(bare)},
		{path: "GET …/charges/{id}, PostgreSQL + Redis, 2 processes (req/s)", kessai: rps(median(two)), anchor: rps(median(bare)) + " bare net/http",
			ratio: ratio(median(two), median(bare)), note: fmt.Sprintf("two wrk -t1 -c%s at once, one per process, summed; spread %s; %s× one process",
				half.wrkConns, spread(two), strconv.FormatFloat(median(two)/median(one), 'f', 2, 64))},
	}, nil
}

func atoiOr(s string, fallback int) int {
	if n, err := strconv.Atoi(s); err == nil {
		return n
	}
	return fallback
}

func scaleoutWrite(st settings, bin string, d time.Duration) ([]row, error) {
	type result struct {
		n                   int
		accepted, processed time.Duration
	}
	var results [2]result
	for i, procs := range []int{1, 2} {
		c, err := startCluster(st, bin, procs, "0")
		if err != nil {
			return nil, err
		}
		err = c.warm()
		if err == nil {
			var r result
			r.n, r.accepted, r.processed, err = c.chargeLoad(d, 0)
			results[i] = r
		}
		c.stop()
		if err != nil {
			return nil, err
		}
		r := results[i]
		fmt.Printf("perf: PostgreSQL, %d process(es): %d charges accepted in %s, all finished after %s\n",
			procs, r.n, r.accepted.Round(time.Millisecond), r.processed.Round(time.Millisecond))
	}
	many, err := rawCommits(loadClients, d)
	if err != nil {
		return nil, err
	}
	single, err := rawCommits(1, d/2)
	if err != nil {
		return nil, err
	}
	fmt.Printf("perf: PostgreSQL raw 1-row commits: %.0f/s from %d connections, %.0f/s from one\n", many, loadClients, single)
	anchor := fmt.Sprintf("%s raw 1-row commits (%d conns)", rps(many), loadClients)
	var rows []row
	for _, kind := range []string{"accepted", "fully processed"} {
		for i, procs := range []int{1, 2} {
			r := results[i]
			dur := r.accepted
			if kind != "accepted" {
				dur = r.processed
			}
			rate := float64(r.n) / dur.Seconds()
			note := fmt.Sprintf("HTTP, %d clients, %s; one connection commits %s", loadClients, st.duration, rps(single))
			if kind != "accepted" {
				note = fmt.Sprintf("until no charge is pending; %s× its acceptance", strconv.FormatFloat(rate*r.accepted.Seconds()/float64(r.n), 'f', 2, 64))
			}
			rows = append(rows, row{path: fmt.Sprintf("charge %s, PostgreSQL + Redis, %d process%s (charges/s)", kind, procs, plural(procs)),
				kessai: rps(rate), anchor: anchor, ratio: ratio(rate, many), note: note})
		}
	}
	return rows, nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "es"
}

func scaleoutDrain(st settings, bin string) ([]row, error) {
	count := atoi("PERF_SCALEOUT_CHARGES", 1000)
	var rows []row
	for _, procs := range []int{1, 2} {
		c, err := startCluster(st, bin, procs, "300ms")
		if err != nil {
			return nil, err
		}
		err = c.warm()
		var n int
		var accepted, processed time.Duration
		if err == nil {
			n, accepted, processed, err = c.chargeLoad(0, count)
		}
		c.stop()
		if err != nil {
			return nil, err
		}
		fmt.Printf("perf: PostgreSQL drain, %d process(es): %d charges accepted in %s, all finished after %s\n",
			procs, n, accepted.Round(time.Millisecond), processed.Round(time.Millisecond))
		drained, took := float64(n)/processed.Seconds(), float64(n)/accepted.Seconds()
		rows = append(rows, row{path: fmt.Sprintf("drain, acquirer 300 ms, %d charges, PostgreSQL + Redis, %d process%s (charges/s)", n, procs, plural(procs)),
			kessai: rps(drained) + " drained", anchor: rps(took) + " accepted", ratio: ratio(drained, took),
			note: fmt.Sprintf("the last finished %.2f s after the last was accepted", (processed - accepted).Seconds())})
	}
	return rows, nil
}
