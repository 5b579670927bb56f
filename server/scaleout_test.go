package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	goredis "github.com/redis/go-redis/v9"

	"github.com/kessai/kessai/server/gateway"
	"github.com/kessai/kessai/server/gateway/gatewaytest"
	"github.com/kessai/kessai/server/kessaitest"
	"github.com/kessai/kessai/server/postgres"
	"github.com/kessai/kessai/server/postgres/postgrestest"
)

// TestScaleOut runs two gateway processes, A and B, on one PostgreSQL
// schema and one Redis, and checks that every rule holds across them as it
// does in one process: one demo merchant however they start, one rate-limit
// budget, one accepted charge of identical concurrent ones, one app-token
// quota, long polls and revocations that cross from one process to the
// other at once, and work a killed process had claimed finished by the
// other, once.
//
// It builds the real binary, so it is skipped under -short; it fails (never
// skips) when PostgreSQL or Redis cannot be reached.
func TestScaleOut(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the gateway binary against PostgreSQL and Redis")
	}
	if err := postgrestest.Reachable(); err != nil {
		t.Fatal(err)
	}
	rdb := gatewaytest.Redis(t)
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatal("no go tool on PATH to build the gateway")
	}
	bin := gatewayBinary(t, goTool)

	cases := []struct {
		name string
		run  func(*testing.T, *scaleCluster)
	}{
		{"FirstStartAtOnce", testScaleFirstStart},
		{"OneRateBudget", testScaleRateBudget},
		{"OneDuplicateAccepted", testScaleDuplicateCharges},
		{"OneAppTokenQuota", testScaleAppTokenQuota},
		{"LongPollAcross", testScaleLongPoll},
		{"OperationPollAcross", testScaleOperationPoll},
		{"RevocationAcross", testScaleRevocation},
		{"KillUnderLoad", testScaleKill},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			began := time.Now()
			c.run(t, newScaleCluster(t, bin, rdb))
			t.Logf("%s took %v", c.name, time.Since(began).Round(time.Millisecond))
		})
	}
}

// scaleCluster is what the processes of one case share: a schema, a Redis
// prefix and the keys.
type scaleCluster struct {
	t           *testing.T
	bin, dir    string
	dbURL       string
	redisPrefix string
	signingKey  string
	cardKey     string
}

func newScaleCluster(t *testing.T, bin string, rdb *goredis.Client) *scaleCluster {
	t.Helper()
	dbURL := postgrestest.Schema(t)
	prefix := "kessai-test-" + randomHex(8) + ":"
	t.Cleanup(func() { deleteRedisPrefix(t, rdb, prefix) })
	return &scaleCluster{
		t: t, bin: bin, dir: t.TempDir(), dbURL: dbURL, redisPrefix: prefix,
		signingKey: randomHex(32), cardKey: randomHex(32),
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func deleteRedisPrefix(t *testing.T, rdb *goredis.Client, prefix string) {
	t.Helper()
	ctx := context.Background()
	var keys []string
	iter := rdb.Scan(ctx, 0, prefix+"*", 1000).Iterator()
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if err := iter.Err(); err != nil {
		t.Errorf("scan %s*: %v", prefix, err)
		return
	}
	for len(keys) > 0 {
		n := min(len(keys), 1000)
		if err := rdb.Del(ctx, keys[:n]...).Err(); err != nil {
			t.Errorf("delete %s*: %v", prefix, err)
			return
		}
		keys = keys[n:]
	}
}

// launch starts process name (its own data directory and port) on the
// cluster's schema and Redis without waiting for it; env adds settings.
func (sc *scaleCluster) launch(name string, env ...string) *crashGateway {
	sc.t.Helper()
	return sc.launchOn(name, gatewaytest.FreeTCPPort(sc.t), env...)
}

func (sc *scaleCluster) launchOn(name string, port int, env ...string) *crashGateway {
	sc.t.Helper()
	base := []string{
		"KESSAI_DATABASE_URL=" + sc.dbURL,
		"KESSAI_REDIS_URL=" + gatewaytest.RedisURL(),
		"KESSAI_REDIS_PREFIX=" + sc.redisPrefix,
		"KESSAI_SIGNING_KEY=" + sc.signingKey,
		"KESSAI_CARD_KEY=" + sc.cardKey,
	}
	return launchCrashGateway(sc.t, sc.bin, filepath.Join(sc.dir, name), port, name, append(base, env...)...)
}

// pair starts A and then B and returns a client of each, both with A's
// demo credentials, so that they spend the same buckets and quotas.
func (sc *scaleCluster) pair(env ...string) (a, b *crashGateway, ca, cb *gatewaytest.Client) {
	sc.t.Helper()
	a = sc.launch("A", env...)
	a.waitReady(sc.t)
	b = sc.launch("B", env...)
	b.waitReady(sc.t)
	creds := a.credentials(sc.t)
	auth := "Bearer " + creds.Secret + "." + creds.JWT
	ca = &gatewaytest.Client{T: sc.t, Base: "http://" + a.addr, Auth: auth, Store: creds.StoreID}
	cb = &gatewaytest.Client{T: sc.t, Base: "http://" + b.addr, Auth: auth, Store: creds.StoreID}
	return a, b, ca, cb
}

// atOnce runs n calls of f, alternating between the two clients, released
// together.
func atOnce(n int, a, b *gatewaytest.Client, f func(i int, c *gatewaytest.Client)) {
	var ready, done sync.WaitGroup
	gate := make(chan struct{})
	for i := range n {
		c := a
		if i%2 == 1 {
			c = b
		}
		ready.Add(1)
		done.Go(func() {
			ready.Done()
			<-gate
			f(i, c)
		})
	}
	ready.Wait()
	close(gate)
	done.Wait()
}

// errorCode is the code of an error envelope.
func errorCode(b []byte) string {
	var e struct {
		Code string `json:"code"`
	}
	json.Unmarshal(b, &e)
	return e.Code
}

// testScaleFirstStart: two processes starting at once on an empty schema
// seed one demo merchant between them, and each one's credentials work on
// the other. Left to chance, their seeding transactions overlap only now
// and then; so the test migrates the schema itself and holds the merchants
// table while both start, until both wait for it, and then lets them go
// together.
func testScaleFirstStart(t *testing.T, sc *scaleCluster) {
	db, err := postgres.Open(t.Context(), sc.dbURL)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	holder, err := pgx.Connect(t.Context(), sc.dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close(context.Background())
	hold, err := holder.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hold.Exec(t.Context(), `LOCK TABLE merchants IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}

	a, b := sc.launch("A"), sc.launch("B")
	kessaitest.WaitFor(t, 30*time.Second, "both processes to wait for the merchants table", func() bool {
		for _, g := range []*crashGateway{a, b} {
			select {
			case <-g.done:
				out, _ := os.ReadFile(g.stderr)
				t.Fatalf("%s exited while starting: %v\n%s", g.name, g.waitErr, out)
			default:
			}
		}
		var waiting int
		err := holder.QueryRow(t.Context(), `SELECT COUNT(*) FROM pg_locks WHERE relation = 'merchants'::regclass AND NOT granted`).Scan(&waiting)
		if err != nil {
			t.Fatal(err)
		}
		return waiting == 2
	})
	if err := hold.Rollback(t.Context()); err != nil {
		t.Fatal(err)
	}
	a.waitReady(t)
	b.waitReady(t)

	var merchants, stores int
	if err := holder.QueryRow(t.Context(), `SELECT (SELECT COUNT(*) FROM merchants), (SELECT COUNT(*) FROM stores)`).Scan(&merchants, &stores); err != nil {
		t.Fatal(err)
	}
	if merchants != 1 || stores != 1 {
		t.Fatalf("%d merchants and %d stores after two first starts at once, want 1 and 1", merchants, stores)
	}
	// The process that seeded holds the demo credentials; the other has
	// none (renewing them would reset the console password under the
	// first and spend an app token at every start of a fresh process).
	// They work on both.
	seeder, other := a, b
	if !hasCredentials(a) {
		seeder, other = b, a
	}
	if hasCredentials(other) {
		t.Fatalf("both processes wrote demo credentials")
	}
	creds := seeder.credentials(t)
	for _, gw := range []*crashGateway{a, b} {
		c := &gatewaytest.Client{T: t, Base: "http://" + gw.addr, Auth: "Bearer " + creds.Secret + "." + creds.JWT}
		c.Get("/stores/"+creds.StoreID, nil)
	}
	// A third process with a fresh data directory spends no app token.
	c := sc.launch("C")
	c.waitReady(t)
	var tokens int
	if err := holder.QueryRow(t.Context(), `SELECT COUNT(*) FROM app_tokens WHERE revoked_on IS NULL`).Scan(&tokens); err != nil {
		t.Fatal(err)
	}
	if tokens != 1 || hasCredentials(c) {
		t.Errorf("%d active app tokens after three processes started (C wrote credentials: %v), want the seeder's one", tokens, hasCredentials(c))
	}
	a.terminate(t)
	b.terminate(t)
	c.terminate(t)
}

// hasCredentials reports whether g wrote demo credentials.
func hasCredentials(g *crashGateway) bool {
	_, err := os.Stat(filepath.Join(g.dataDir, gateway.CredentialsFile))
	return err == nil
}

// testScaleRateBudget: the exact bucket (V12) is one budget in Redis, not
// one per process. Its refill is slowed to one a minute so that the burst
// alone decides.
func testScaleRateBudget(t *testing.T, sc *scaleCluster) {
	_, _, ca, cb := sc.pair("KESSAI_RATE_EXACT_REFILL_PER_MINUTE=1")
	const n, burst = 50, 10
	path := "/stores/" + ca.Store
	var mu sync.Mutex
	byStatus := map[int]int{}
	atOnce(n, ca, cb, func(_ int, c *gatewaytest.Client) {
		status, _ := c.SendOK(http.MethodGet, path, nil)
		mu.Lock()
		byStatus[status]++
		mu.Unlock()
	})
	if byStatus[http.StatusOK] != burst || byStatus[http.StatusTooManyRequests] != n-burst {
		t.Fatalf("%d identical GETs over two processes: %v, want %d × 200 and %d × 429", n, byStatus, burst, n-burst)
	}
}

// testScaleDuplicateCharges: of identical concurrent charges on one
// recurring token, split over the processes, exactly one is processed; the
// others are recorded failed with 311 and never reach the acquirer.
func testScaleDuplicateCharges(t *testing.T, sc *scaleCluster) {
	_, _, ca, cb := sc.pair()
	var tok struct {
		ID string `json:"id"`
	}
	ca.Must(http.MethodPost, "/tokens", map[string]any{
		"payment_type": "card", "type": "recurring", "email": "dup@example.com",
		"data": map[string]any{
			"cardholder": "TARO YAMADA", "card_number": "4000020000000000",
			"exp_month": 12, "exp_year": time.Now().Year() + 3, "cvv": "123",
		},
	}, &tok, http.StatusCreated)

	const n = 50
	type answer struct {
		status int
		id     string
		code   int
	}
	answers := make([]answer, n)
	atOnce(n, ca, cb, func(i int, c *gatewaytest.Client) {
		status, b := c.SendOK(http.MethodPost, "/charges", map[string]any{
			"transaction_token_id": tok.ID, "amount": 1500, "currency": "JPY", "capture": true,
		})
		var ch struct {
			ID    string `json:"id"`
			Error *struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		json.Unmarshal(b, &ch)
		answers[i] = answer{status: status, id: ch.ID}
		if ch.Error != nil {
			answers[i].code = ch.Error.Code
		}
	})
	var processed []string
	for i, a := range answers {
		switch {
		case a.status != http.StatusCreated:
			t.Errorf("charge %d: status %d, want 201", i, a.status)
		case a.code == 311:
		case a.code != 0:
			t.Errorf("charge %d: error %d, want none or 311", i, a.code)
		default:
			processed = append(processed, a.id)
		}
	}
	if len(processed) != 1 {
		t.Fatalf("%d of %d identical charges were processed, want 1", len(processed), n)
	}
	if st := ca.WaitCharge(processed[0], 20*time.Second, "successful"); st != "successful" {
		t.Errorf("the processed charge ended %q", st)
	}
	// The store holds the one charge and the refused ones, each failed
	// with 311.
	var listed, failed311 int
	ca.ListAll("/stores/"+ca.Store+"/charges", func(raw json.RawMessage) {
		var ch struct {
			ID     string `json:"id"`
			Status string `json:"status"`
			Error  *struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		gatewaytest.MustUnmarshal(t, raw, &ch)
		listed++
		if ch.ID != processed[0] && ch.Status == "failed" && ch.Error != nil && ch.Error.Code == 311 {
			failed311++
		}
	})
	if listed != n || failed311 != n-1 {
		t.Errorf("the store lists %d charges, %d of them failed with 311; want %d and %d", listed, failed311, n, n-1)
	}
}

// testScaleAppTokenQuota: concurrent app-token creations over both
// processes stop at one quota of 20 active tokens. The rate limits are
// raised so that only the quota refuses.
func testScaleAppTokenQuota(t *testing.T, sc *scaleCluster) {
	_, _, ca, cb := sc.pair("KESSAI_RATE_EXACT_BURST=1000", "KESSAI_RATE_ROUTE_BURST=1000")
	path := "/stores/" + ca.Store + "/app_jwts"
	active := func() int {
		n := 0
		ca.ListAll(path, func(json.RawMessage) { n++ })
		return n
	}
	const n, quota = 30, 20
	before := active() // each process's demo token
	var mu sync.Mutex
	byStatus := map[int]int{}
	atOnce(n, ca, cb, func(_ int, c *gatewaytest.Client) {
		status, b := c.SendOK(http.MethodPost, path, map[string]any{"mode": "test"})
		if status == http.StatusBadRequest && errorCode(b) != "RESOURCE_LIMIT_REACHED" {
			t.Errorf("POST %s: 400 %s, want RESOURCE_LIMIT_REACHED", path, b)
		}
		mu.Lock()
		byStatus[status]++
		mu.Unlock()
	})
	if byStatus[http.StatusCreated] != quota-before || byStatus[http.StatusBadRequest] != n-(quota-before) {
		t.Errorf("%d creations with %d active: %v, want %d × 201 and the rest 400", n, before, byStatus, quota-before)
	}
	if got := active(); got != quota {
		t.Errorf("%d active app tokens, want %d", got, quota)
	}
}

// testScaleLongPoll: a poll held by B answers as soon as A's worker
// finishes the charge, not at B's next re-read of it (every second). Each
// charge is polled on A too, whose own worker wakes its poll: B's answer
// must follow A's closely. B's polls start at four offsets a quarter of
// the re-read period apart, so that without the news from A at least one
// of them would wait the better part of a second.
func testScaleLongPoll(t *testing.T, sc *scaleCluster) {
	const latency = 1500 * time.Millisecond
	// Polls re-read only every 30 s, so that the process which did not
	// work a charge (either may) hears of it only through news.
	_, _, ca, cb := sc.pair("KESSAI_SANDBOX_LATENCY="+latency.String(), "KESSAI_POLL_WAIT=20s", "KESSAI_POLL_RECHECK=30s")
	type result struct {
		created, onA, onB time.Time
		statusA, statusB  string
	}
	const n = 4
	results := make([]result, n)
	var wg sync.WaitGroup
	for i := range n {
		tok := ca.Token("4000020000000000")
		id, status := ca.Charge(tok, true, 5000+i)
		if status != http.StatusCreated {
			t.Fatalf("POST /charges: %d", status)
		}
		results[i].created = time.Now()
		poll := func(c *gatewaytest.Client, status *string, at *time.Time, after time.Duration) {
			time.Sleep(after)
			var ch struct {
				Status string `json:"status"`
			}
			st, b := c.SendOK(http.MethodGet, "/stores/"+c.Store+"/charges/"+id+"?polling=true", nil)
			*at = time.Now()
			if st != http.StatusOK {
				t.Errorf("poll of %s: %d %s", id, st, b)
			}
			json.Unmarshal(b, &ch)
			*status = ch.Status
		}
		r := &results[i]
		wg.Go(func() { poll(ca, &r.statusA, &r.onA, 0) })
		wg.Go(func() { poll(cb, &r.statusB, &r.onB, time.Duration(i)*250*time.Millisecond) })
	}
	wg.Wait()
	const slack = 600 * time.Millisecond
	for i, r := range results {
		if r.statusA != "successful" || r.statusB != "successful" {
			t.Errorf("charge %d: polls answered %q on A and %q on B, want successful", i, r.statusA, r.statusB)
			continue
		}
		lag := r.onB.Sub(r.onA)
		t.Logf("charge %d: A's poll answered %v after creation, B's %v later", i,
			r.onA.Sub(r.created).Round(time.Millisecond), lag.Round(time.Millisecond))
		if lag.Abs() > slack {
			t.Errorf("charge %d: the polls on A and B answered %v apart, want within %v", i, lag.Abs().Round(time.Millisecond), slack)
		}
		if total := r.onB.Sub(r.created); total > 10*time.Second {
			t.Errorf("charge %d: B's poll answered %v after creation, far from the charge's end", i, total)
		}
	}
}

// testScaleOperationPoll: the shop plugins' $charge->cancel();
// $charge->awaitResult(5) on a cluster. A charge with a cancel (or a
// refund) under way is polled on both processes; whichever worker takes
// the operation, both polls answer once it is done, the other process's
// woken by the news of the charge, well before their next re-read.
func testScaleOperationPoll(t *testing.T, sc *scaleCluster) {
	const latency = 1500 * time.Millisecond
	_, _, ca, cb := sc.pair("KESSAI_SANDBOX_LATENCY="+latency.String(), "KESSAI_POLL_WAIT=20s", "KESSAI_POLL_RECHECK=30s")
	for _, op := range []struct {
		name    string
		capture bool
		path    string
		body    map[string]any
		want    string
	}{
		{"cancel", false, "/cancels", map[string]any{}, "canceled"},
		{"refund", true, "/refunds", map[string]any{"amount": 300, "currency": "JPY"}, "successful"},
	} {
		id, status := ca.Charge(ca.Token("4000020000000000"), op.capture, 6100)
		if status != http.StatusCreated {
			t.Fatalf("POST /charges: %d", status)
		}
		settled := "authorized"
		if op.capture {
			settled = "successful"
		}
		if got := ca.WaitCharge(id, 20*time.Second, "authorized"); got != settled {
			t.Fatalf("charge for the %s ended %s, want %s", op.name, got, settled)
		}
		ca.Must(http.MethodPost, "/stores/"+ca.Store+"/charges/"+id+op.path, op.body, nil, http.StatusCreated)
		asked := time.Now()
		var wg sync.WaitGroup
		for _, c := range []*gatewaytest.Client{ca, cb} {
			wg.Go(func() {
				var ch struct {
					Status string `json:"status"`
				}
				st, b := c.SendOK(http.MethodGet, "/stores/"+c.Store+"/charges/"+id+"?polling=true", nil)
				took := time.Since(asked)
				json.Unmarshal(b, &ch)
				switch {
				case st != http.StatusOK:
					t.Errorf("%s: poll on %s: %d %s", op.name, c.Base, st, b)
				case ch.Status != op.want || took < latency/2 || took > 10*time.Second:
					t.Errorf("%s: the poll on %s answered %q after %v, want %q once the %v acquirer call is done",
						op.name, c.Base, ch.Status, took.Round(time.Millisecond), op.want, latency)
				}
			})
		}
		wg.Wait()
	}
}

// testScaleRevocation: an app token revoked through A is refused by B at
// once, although B had just read it into its auth cache (2 s).
func testScaleRevocation(t *testing.T, sc *scaleCluster) {
	_, _, ca, cb := sc.pair()
	var issued struct {
		JTI    string `json:"jti"`
		JWT    string `json:"jwt"`
		Secret string `json:"secret"`
	}
	ca.Must(http.MethodPost, "/stores/"+ca.Store+"/app_jwts", map[string]any{"mode": "test"}, &issued, http.StatusCreated)
	tokenOnB := &gatewaytest.Client{T: t, Base: cb.Base, Auth: "Bearer " + issued.Secret + "." + issued.JWT, Store: cb.Store}
	tokenOnB.Get("/stores/"+cb.Store, nil) // now in B's cache
	ca.Must(http.MethodDelete, "/stores/"+ca.Store+"/app_jwts/"+issued.JTI, nil, nil, http.StatusNoContent)
	revoked := time.Now()

	const within = time.Second
	var refusedAfter time.Duration
	for i := 0; ; i++ {
		// A query of its own each time: the exact bucket must not refuse.
		status, b := tokenOnB.SendOK(http.MethodGet, fmt.Sprintf("/stores/%s?probe=%d", cb.Store, i), nil)
		if status == http.StatusUnauthorized || status == http.StatusForbidden {
			refusedAfter = time.Since(revoked)
			break
		}
		if status != http.StatusOK {
			t.Fatalf("GET on B with the revoked token: %d %s", status, b)
		}
		if time.Since(revoked) > 5*time.Second {
			t.Fatal("B still accepts the revoked token 5 s after its revocation")
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Logf("B refused the token %v after A revoked it", refusedAfter.Round(time.Millisecond))
	if refusedAfter > within {
		t.Errorf("B accepted the token revoked through A for %v, want less than %v (its cache keeps tokens 2 s)",
			refusedAfter.Round(time.Millisecond), within)
	}
	if status, _ := tokenOnB.SendOK(http.MethodGet, "/stores/"+cb.Store+"?probe=last", nil); status != http.StatusUnauthorized && status != http.StatusForbidden {
		t.Errorf("B accepted the revoked token again: %d", status)
	}
}

// testScaleKill: clients spread over A and B make charges (and a few
// refunds) with the acquirer slow, A is killed with SIGKILL in the middle,
// the load goes on on B; then everything acknowledged ends through B (A's
// claims once their lease runs out), once in the ledger, nothing pending;
// A restarts and both exit 0 on SIGTERM.
func testScaleKill(t *testing.T, sc *scaleCluster) {
	// The rate limits are raised so that only the processes' health
	// decides the answers.
	env := []string{
		"KESSAI_SANDBOX_LATENCY=300ms",
		"KESSAI_RATE_CHARGE_BURST=100000", "KESSAI_RATE_CHARGE_REFILL_PER_MINUTE=1000000", "KESSAI_RATE_CHARGE_PER_MINUTE=1000000",
		"KESSAI_RATE_ROUTE_BURST=100000", "KESSAI_RATE_ROUTE_REFILL_PER_MINUTE=1000000", "KESSAI_RATE_ROUTE_PER_MINUTE=1000000",
	}
	a, b, ca, cb := sc.pair(env...)
	aPort := a.addr[strings.LastIndexByte(a.addr, ':')+1:]
	const (
		cardOK       = "4000020000000000"
		cardDeclined = "4111111111111111"
	)

	// Charges to refund during the load: successful first.
	var refundable []string
	for i, c := range []*gatewaytest.Client{ca, cb, ca} {
		id, status := c.Charge(c.Token(cardOK), true, 1000+i)
		if status != http.StatusCreated {
			t.Fatalf("POST /charges: %d", status)
		}
		refundable = append(refundable, id)
	}
	for _, id := range refundable {
		if st := cb.WaitCharge(id, 20*time.Second, "successful"); st != "successful" {
			t.Fatalf("charge %s: %s before the load", id, st)
		}
	}

	var (
		mu      sync.Mutex
		want    = map[string]string{} // acknowledged charge → its final status
		asked   = map[string]bool{}   // every token a charge was asked on
		aDead   = make(chan struct{})
		stop    = make(chan struct{})
		clients sync.WaitGroup
	)
	for _, id := range refundable {
		want[id] = "successful"
	}
	for k := range 4 {
		clients.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				c := cb
				if (k+i)%2 == 0 {
					select {
					case <-aDead:
					default:
						c = ca
					}
				}
				card, capture, final := cardOK, true, "successful"
				switch i % 5 {
				case 3:
					capture, final = false, "authorized"
				case 4:
					card, final = cardDeclined, "failed"
				}
				tok, err := c.TryToken(card)
				if err != nil || tok == "" {
					continue // A died under it, or refused: nothing asked
				}
				mu.Lock()
				asked[tok] = true
				mu.Unlock()
				id, status, err := c.TryCharge(tok, capture, 2000+i)
				if err == nil && status == http.StatusCreated {
					mu.Lock()
					want[id] = final
					mu.Unlock()
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}

	time.Sleep(1500 * time.Millisecond)
	// Refunds through A, whose worker claims them at once; then A dies
	// with them (and its charges) in flight.
	refunds := map[string]string{} // refund id → charge id
	for _, id := range refundable {
		rid, status := ca.Refund(id, 300)
		if status != http.StatusCreated {
			t.Fatalf("POST refund of %s: %d", id, status)
		}
		refunds[rid] = id
	}
	pending := ca.PendingCharges()
	if pending == 0 {
		t.Fatal("no charge is pending right before the kill: the test would prove nothing")
	}
	a.kill(t)
	close(aDead)
	killedAt := time.Now()
	time.Sleep(2 * time.Second)
	close(stop)
	clients.Wait()
	mu.Lock()
	t.Logf("SIGKILL of A with %d charges pending; %d charges acknowledged, %d tokens charged or tried",
		pending, len(want), len(asked))
	mu.Unlock()

	// Everything ends through B: A's claims once their lease (10 s) ends.
	deadline := killedAt.Add(45 * time.Second)
	ids := make([]string, 0, len(want))
	for id := range want {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if st := cb.WaitCharge(id, time.Until(deadline), want[id]); st != want[id] {
			t.Errorf("charge %s: %q, want %q", id, st, want[id])
		}
	}
	for rid, chargeID := range refunds {
		if st := cb.WaitRefund(chargeID, rid, time.Until(deadline)); st != "successful" {
			t.Errorf("refund %s of %s: %q, want successful", rid, chargeID, st)
		}
	}
	t.Logf("everything acknowledged ended %v after the kill", time.Since(killedAt).Round(time.Millisecond))

	// Every charge exists once, on a token it was asked on, at most one
	// a token; one whose answer A's death swallowed must end too.
	type listed struct {
		ID      string `json:"id"`
		TokenID string `json:"transaction_token_id"`
		Status  string `json:"status"`
	}
	list := func() []listed {
		var all []listed
		cb.ListAll("/stores/"+cb.Store+"/charges", func(raw json.RawMessage) {
			var ch listed
			gatewaytest.MustUnmarshal(t, raw, &ch)
			all = append(all, ch)
		})
		return all
	}
	final := map[string]string{}
	for _, ch := range list() {
		if _, ok := want[ch.ID]; !ok {
			cb.WaitCharge(ch.ID, time.Until(deadline), "successful")
		}
	}
	perToken := map[string]int{}
	for _, ch := range list() {
		perToken[ch.TokenID]++
		if _, dup := final[ch.ID]; dup {
			t.Errorf("charge %s listed twice", ch.ID)
		}
		final[ch.ID] = ch.Status
		if ch.Status == "pending" {
			t.Errorf("charge %s is still pending", ch.ID)
		}
		if _, ok := want[ch.ID]; !ok && !asked[ch.TokenID] {
			t.Errorf("charge %s on token %s was never asked for", ch.ID, ch.TokenID)
		}
	}
	for tok, n := range perToken {
		if n != 1 {
			t.Errorf("token %s has %d charges", tok, n)
		}
	}
	for id := range want {
		if _, ok := final[id]; !ok {
			t.Errorf("acknowledged charge %s is not listed", id)
		}
	}

	// The ledger: each charge and refund once, with its final status; an
	// authorization done twice would show twice.
	lines := cb.Ledger()
	for id, st := range final {
		if l, ok := lines[id]; !ok || l.Type != "charge" || l.Status != st {
			t.Errorf("ledger line of charge %s: %+v (present %v), want charge/%s", id, l, ok, st)
		}
	}
	for rid, chargeID := range refunds {
		if l, ok := lines[rid]; !ok || l.Type != "refund" || l.Status != "successful" || l.ChargeID != chargeID {
			t.Errorf("ledger line of refund %s: %+v (present %v)", rid, l, ok)
		}
	}
	if len(lines) != len(final)+len(refunds) {
		t.Errorf("ledger has %d lines, want %d charges + %d refunds", len(lines), len(final), len(refunds))
	}

	// A comes back on its port and data directory; both stop cleanly.
	var port int
	fmt.Sscan(aPort, &port)
	a = sc.launchOn("A", port, env...)
	a.waitReady(t)
	ca.Get("/stores/"+ca.Store, nil)
	a.terminate(t)
	b.terminate(t)
}
