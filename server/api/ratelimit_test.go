package api_test

// Rate limits, the duplicate-charge rule and resource limits
// (README, "Rate limits and other limits") over real HTTP: an httptest server in front of the real
// router, real SQLite, and a limiter and service driven by one fake clock.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"golang.org/x/crypto/bcrypt"

	"github.com/kessai/kessai/server/aesgcm"
	"github.com/kessai/kessai/server/api"
	"github.com/kessai/kessai/server/kessaitest"
	"github.com/kessai/kessai/server/limit"
	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/payment/services"
	"github.com/kessai/kessai/server/sandbox"
)

// ---------------------------------------------------------------------------
// The gateway under test

const (
	rlHdrRemaining      = "X-Remaining-Requests"
	rlHdrPerMinute      = "X-Requests-Per-Minute"
	rlHdrRemainingRoute = "X-Remaining-Requests-Route"
	rlHdrPerMinuteRoute = "X-Requests-Per-Minute-Route"
	rlHdrRemainingExact = "X-Remaining-Requests-Exact"
	rlHdrPerMinuteExact = "X-Requests-Per-Minute-Exact"

	rlTooManyRequestsBody = `{"status":"error","code":"TOO_MANY_REQUESTS","errors":[]}`

	// rlCard succeeds in the sandbox.
	rlCard = "4000020000000000"
)

var (
	rlChargeHeaders   = []string{rlHdrRemaining, rlHdrPerMinute}
	rlStandardHeaders = []string{rlHdrRemainingRoute, rlHdrPerMinuteRoute, rlHdrRemainingExact, rlHdrPerMinuteExact}
	// rlLocalProxy makes the test client (127.0.0.1) a trusted proxy, so
	// that X-Forwarded-For names the client.
	rlLocalProxy = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	// rlGenerousRules refuse nothing a test sends.
	rlGenerousRules = limit.Rules{
		Charge: limit.Rule{Burst: 100_000, BurstRefillPerMinute: 100_000, PerMinute: 100_000},
		Route:  limit.Rule{Burst: 100_000, BurstRefillPerMinute: 100_000, PerMinute: 100_000},
		Exact:  limit.Rule{Burst: 100_000, BurstRefillPerMinute: 100_000, PerMinute: 100_000},
	}
)

// rlCountingProcessor is the sandbox acquirer, counting authorisations per
// charge: the duplicate-charge rule must never reach it.
type rlCountingProcessor struct {
	sandbox.Processor
	mu         sync.Mutex
	authorized map[uuid.UUID]int
}

func (p *rlCountingProcessor) Authorize(ctx context.Context, req payment.AuthorizeRequest) (payment.ProcessorResult, error) {
	p.mu.Lock()
	p.authorized[req.ChargeID]++
	p.mu.Unlock()
	return p.Processor.Authorize(ctx, req)
}

func (p *rlCountingProcessor) calls(id string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.authorized[uuid.MustParse(id)]
}

func (p *rlCountingProcessor) total() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, c := range p.authorized {
		n += c
	}
	return n
}

// rlSwapLimiter lets a test start over with an empty limiter without
// rebuilding the server.
type rlSwapLimiter struct {
	clock limit.Clock
	cur   atomic.Pointer[limit.Memory]
}

func (s *rlSwapLimiter) Admit(ctx context.Context, b []limit.Bucket) (limit.Result, error) {
	return s.cur.Load().Admit(ctx, b)
}

func (s *rlSwapLimiter) reset() { s.cur.Store(limit.NewMemory(limit.MemoryConfig{Clock: s.clock})) }

type rlOptions struct {
	rules       *limit.Rules // default limit.DefaultRules()
	trusted     []netip.Prefix
	resources   payment.ResourceLimits // zero: the defaults
	idempotency bool
	noLimiter   bool
}

// rlGateway is a whole gateway on the api_test fixture's database (two
// merchants, three stores, their tokens), served over real HTTP.
type rlGateway struct {
	base    *fixture
	clock   *kessaitest.Clock
	svc     *services.Set
	srv     *api.Server
	proc    *rlCountingProcessor
	limiter *rlSwapLimiter
	rules   limit.Rules
	ts      *httptest.Server
	client  *http.Client
}

func newRLGateway(tb testing.TB, o rlOptions) *rlGateway {
	tb.Helper()
	base := newFixture(tb)
	vault, err := aesgcm.New(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		tb.Fatal(err)
	}
	g := &rlGateway{
		base:  base,
		clock: base.clock,
		proc:  &rlCountingProcessor{authorized: map[uuid.UUID]int{}},
		rules: limit.DefaultRules(),
	}
	if o.rules != nil {
		g.rules = *o.rules
	}
	g.svc = services.New(base.db, g.clock, base.codec, payment.Config{
		SecretKey: secretKey, PublicOrigin: publicOrigin, Vault: vault, Processor: g.proc, Limits: o.resources,
		PasswordCost: bcrypt.MinCost,
	})
	cfg := api.Config{
		Service: g.svc, Logger: slog.New(slog.DiscardHandler), PublicOrigin: publicOrigin,
		PollWait: 20 * time.Millisecond,
	}
	if !o.noLimiter {
		g.limiter = &rlSwapLimiter{clock: g.clock}
		g.limiter.reset()
		cfg.RateLimits = api.RateLimits{Limiter: g.limiter, Rules: g.rules, TrustedProxies: o.trusted}
	}
	if o.idempotency {
		cfg.Idempotency = payment.NewIdempotency(base.db, g.clock, payment.IdempotencyConfig{})
	}
	g.srv = api.New(cfg)
	g.ts = httptest.NewServer(g.srv)
	transport := &http.Transport{MaxIdleConns: 200, MaxIdleConnsPerHost: 200}
	g.client = &http.Client{Transport: transport, Timeout: 30 * time.Second}
	tb.Cleanup(func() {
		transport.CloseIdleConnections()
		g.ts.Close()
	})
	return g
}

// settle empties the limiter, so that what a test counts is only what it
// sends afterwards.
func (g *rlGateway) settle() { g.limiter.reset() }

// secretA1 is store A1's server credential; browserA1 its browser one.
func (g *rlGateway) secretA1() string  { return server(g.base.tokA1) }
func (g *rlGateway) browserA1() string { return browser(g.base.tokA1) }

func rlFromIP(ip string) reqOpt { return header("X-Forwarded-For", ip) }

type rlResp struct {
	status int
	header http.Header
	body   []byte
}

func (r *rlResp) String() string { return fmt.Sprintf("%d %s", r.status, bytes.TrimSpace(r.body)) }

// try sends one request; it is safe from any goroutine.
func (g *rlGateway) try(method, path, auth, body string, opts ...reqOpt) (*rlResp, error) {
	var rb io.Reader
	if body != "" {
		rb = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, g.ts.URL+path, rb)
	if err != nil {
		return nil, err
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	req.Header.Set("Accept", "application/json")
	for _, o := range opts {
		o(req)
	}
	res, err := g.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	return &rlResp{status: res.StatusCode, header: res.Header, body: b}, nil
}

func (g *rlGateway) do(tb testing.TB, method, path, auth, body string, opts ...reqOpt) *rlResp {
	tb.Helper()
	r, err := g.try(method, path, auth, body, opts...)
	if err != nil {
		tb.Fatalf("%s %s: %v", method, path, err)
	}
	return r
}

func (g *rlGateway) get(tb testing.TB, path, auth string, opts ...reqOpt) *rlResp {
	tb.Helper()
	return g.do(tb, http.MethodGet, path, auth, "", opts...)
}

func rlHeaderInt(tb testing.TB, r *rlResp, name string) int {
	tb.Helper()
	v := r.header.Values(name)
	if len(v) != 1 {
		tb.Errorf("response %s: header %s = %q, want one value", r, name, v)
		return -1
	}
	n, err := strconv.Atoi(v[0])
	if err != nil {
		tb.Errorf("response %s: header %s = %q, not an integer", r, name, v[0])
		return -1
	}
	return n
}

// standard checks that r carries the standard class's four headers with
// the configured per-minute limits and none of the charge class's, and
// returns the remaining route and exact bursts.
func (g *rlGateway) standard(tb testing.TB, r *rlResp) (route, exact int) {
	tb.Helper()
	for _, h := range rlChargeHeaders {
		if v, ok := r.header[h]; ok {
			tb.Errorf("standard-class response %s carries %s: %q", r, h, v)
		}
	}
	if got := rlHeaderInt(tb, r, rlHdrPerMinuteRoute); got != g.rules.Route.PerMinute {
		tb.Errorf("%s = %d, want %d", rlHdrPerMinuteRoute, got, g.rules.Route.PerMinute)
	}
	if got := rlHeaderInt(tb, r, rlHdrPerMinuteExact); got != g.rules.Exact.PerMinute {
		tb.Errorf("%s = %d, want %d", rlHdrPerMinuteExact, got, g.rules.Exact.PerMinute)
	}
	return rlHeaderInt(tb, r, rlHdrRemainingRoute), rlHeaderInt(tb, r, rlHdrRemainingExact)
}

// wantStandard checks the class and both remaining values.
func (g *rlGateway) wantStandard(tb testing.TB, r *rlResp, route, exact int) {
	tb.Helper()
	gotRoute, gotExact := g.standard(tb, r)
	if gotRoute != route || gotExact != exact {
		tb.Errorf("response %s: route %d exact %d, want route %d exact %d", r, gotRoute, gotExact, route, exact)
	}
}

// charge checks that r carries the charge class's two headers and none of
// the standard class's, and returns the remaining charge burst.
func (g *rlGateway) charge(tb testing.TB, r *rlResp) int {
	tb.Helper()
	for _, h := range rlStandardHeaders {
		if v, ok := r.header[h]; ok {
			tb.Errorf("charge-class response %s carries %s: %q", r, h, v)
		}
	}
	if got := rlHeaderInt(tb, r, rlHdrPerMinute); got != g.rules.Charge.PerMinute {
		tb.Errorf("%s = %d, want %d", rlHdrPerMinute, got, g.rules.Charge.PerMinute)
	}
	return rlHeaderInt(tb, r, rlHdrRemaining)
}

// rlWant429 checks a refusal and returns its Retry-After.
func rlWant429(tb testing.TB, r *rlResp) int {
	tb.Helper()
	if r.status != http.StatusTooManyRequests {
		tb.Fatalf("response %s, want 429", r)
	}
	if got := string(bytes.TrimRight(r.body, "\n")); got != rlTooManyRequestsBody {
		tb.Errorf("429 body %q, want %q", got, rlTooManyRequestsBody)
	}
	if mt, _, err := mime.ParseMediaType(r.header.Get("Content-Type")); err != nil || mt != "application/json" {
		tb.Errorf("429 Content-Type %q, want application/json", r.header.Get("Content-Type"))
	}
	secs := rlHeaderInt(tb, r, "Retry-After")
	if secs < 1 {
		tb.Errorf("Retry-After %d, want at least 1", secs)
	}
	return secs
}

func rlWantStatus(tb testing.TB, r *rlResp, status int) {
	tb.Helper()
	if r.status != status {
		tb.Fatalf("response %s, want %d", r, status)
	}
}

// rlCharge is a charge as the wire shows it.
type rlCharge struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Detail  string `json:"detail"`
	} `json:"error"`
}

func rlDecodeCharge(tb testing.TB, r *rlResp) rlCharge {
	tb.Helper()
	var ch rlCharge
	if err := json.Unmarshal(r.body, &ch); err != nil || ch.ID == "" {
		tb.Fatalf("not a charge: %s (%v)", r, err)
	}
	return ch
}

func rlTokenBody(typ string) string {
	return fmt.Sprintf(`{"payment_type":"card","type":%q,"email":"buyer@example.com",`+
		`"data":{"cardholder":"TARO YAMADA","card_number":%q,"exp_month":12,"exp_year":2030,"cvv":"123"}}`, typ, rlCard)
}

func rlChargeBody(tokenID string, amount int64, currency string) string {
	return fmt.Sprintf(`{"transaction_token_id":%q,"amount":%d,"currency":%q}`, tokenID, amount, currency)
}

// newToken makes a card transaction token of store A1 through POST /tokens.
func (g *rlGateway) newToken(tb testing.TB, typ string) string {
	tb.Helper()
	r := g.do(tb, http.MethodPost, "/tokens", g.secretA1(), rlTokenBody(typ))
	rlWantStatus(tb, r, http.StatusCreated)
	var tok struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(r.body, &tok); err != nil || tok.ID == "" {
		tb.Fatalf("not a token: %s", r)
	}
	return tok.ID
}

func (g *rlGateway) postCharge(tb testing.TB, tokenID string, amount int64, currency string, opts ...reqOpt) *rlResp {
	tb.Helper()
	return g.do(tb, http.MethodPost, "/charges", g.secretA1(), rlChargeBody(tokenID, amount, currency), opts...)
}

// newCharge charges a fresh one-time token and returns the charge's id.
func (g *rlGateway) newCharge(tb testing.TB, amount int64) string {
	tb.Helper()
	r := g.postCharge(tb, g.newToken(tb, "one_time"), amount, "JPY")
	rlWantStatus(tb, r, http.StatusCreated)
	return rlDecodeCharge(tb, r).ID
}

// callerA1 is store A1's server caller, for counting through the service
// without spending rate limits.
func (g *rlGateway) callerA1(tb testing.TB) *payment.Caller {
	tb.Helper()
	c, err := g.svc.Access.Authenticate(context.Background(), g.secretA1(), "")
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

func rlHits[T any](p payment.Page[T]) int {
	if p.TotalHits != nil {
		return *p.TotalHits
	}
	return len(p.Items)
}

func (g *rlGateway) countCharges(tb testing.TB) int {
	tb.Helper()
	p, err := g.svc.Charging.Charges(context.Background(), g.callerA1(tb), uuid.Nil, payment.ChargeFilter{}, payment.ListParams{Limit: 100})
	if err != nil {
		tb.Fatal(err)
	}
	return rlHits(p)
}

func (g *rlGateway) countTokens(tb testing.TB) int {
	tb.Helper()
	p, err := g.svc.Tokens.Tokens(context.Background(), g.callerA1(tb), g.base.storeA1, payment.TokenFilter{}, payment.ListParams{Limit: 100})
	if err != nil {
		tb.Fatal(err)
	}
	return rlHits(p)
}

// process runs the worker's pending work, as the background worker would.
func (g *rlGateway) process(tb testing.TB) {
	tb.Helper()
	for {
		n, err := g.svc.Work.ProcessPending(context.Background(), 100)
		if err != nil {
			tb.Fatal(err)
		}
		if n == 0 {
			return
		}
	}
}

// ---------------------------------------------------------------------------
// Test vectors V1–V11 of the rate-limit contract

func TestRateLimitVectors(t *testing.T) {
	type env struct {
		g       *rlGateway
		a, b    string // charges of store A1
		spare   string // a one-time token nobody charged
		auth    string
		charges int
	}
	getA := func(t *testing.T, e *env) *rlResp { t.Helper(); return e.g.get(t, "/charges/"+e.a, e.auth) }
	// v2 is V2: ten requests at t=0 take the exact burst, the eleventh is
	// refused.
	v2 := func(t *testing.T, e *env) {
		t.Helper()
		for i := range 10 {
			r := getA(t, e)
			rlWantStatus(t, r, http.StatusOK)
			e.g.wantStandard(t, r, 29-i, 9-i)
		}
		r := getA(t, e)
		if secs := rlWant429(t, r); secs != 1 {
			t.Errorf("Retry-After %d, want 1", secs)
		}
		// The refused request took nothing from the route bucket either.
		e.g.wantStandard(t, r, 20, 0)
	}
	vectors := []struct {
		name string
		run  func(t *testing.T, e *env)
	}{
		{"V1", func(t *testing.T, e *env) {
			r := getA(t, e)
			rlWantStatus(t, r, http.StatusOK)
			e.g.wantStandard(t, r, 29, 9)
			for h, want := range map[string]string{rlHdrPerMinuteExact: "120", rlHdrPerMinuteRoute: "1200", rlHdrRemainingExact: "9", rlHdrRemainingRoute: "29"} {
				if got := r.header.Get(h); got != want {
					t.Errorf("%s = %q, want %q", h, got, want)
				}
			}
			if _, ok := r.header[rlHdrRemaining]; ok {
				t.Errorf("a read carries %s", rlHdrRemaining)
			}
		}},
		{"V2", v2},
		{"V3", func(t *testing.T, e *env) {
			v2(t, e)
			e.g.clock.Advance(50 * time.Millisecond)
			r := getA(t, e)
			rlWantStatus(t, r, http.StatusOK)
			e.g.wantStandard(t, r, 20, 0) // route: 20 + 1 refilled - 1
		}},
		{"V4", func(t *testing.T, e *env) {
			v2(t, e)
			e.g.clock.Advance(500 * time.Millisecond)
			for i := range 10 {
				r := getA(t, e)
				rlWantStatus(t, r, http.StatusOK)
				e.g.wantStandard(t, r, 29-i, 9-i) // route back at 30 too
			}
			rlWant429(t, getA(t, e))
		}},
		{"V5", func(t *testing.T, e *env) {
			v2(t, e)
			e.g.clock.Advance(time.Hour)
			// The balance reads 10 and not more: the next request shows
			// 9, and exactly ten are admitted before a refusal.
			for i := range 10 {
				r := getA(t, e)
				rlWantStatus(t, r, http.StatusOK)
				e.g.wantStandard(t, r, 29-i, 9-i)
			}
			rlWant429(t, getA(t, e))
		}},
		{"V6", func(t *testing.T, e *env) {
			for range 10 {
				rlWantStatus(t, getA(t, e), http.StatusOK)
			}
			r := e.g.get(t, "/charges/"+e.b, e.auth)
			rlWantStatus(t, r, http.StatusOK)
			e.g.wantStandard(t, r, 19, 9)
		}},
		{"V7", func(t *testing.T, e *env) {
			xs := make([]string, 31)
			for i := range xs {
				xs[i] = "/charges/" + uuid.NewString()
			}
			for i, x := range xs[:30] {
				r := e.g.get(t, x, e.auth)
				rlWantStatus(t, r, http.StatusNotFound) // no such charge: still counted
				e.g.wantStandard(t, r, 29-i, 9)
			}
			r := e.g.get(t, xs[30], e.auth)
			rlWant429(t, r)
			e.g.wantStandard(t, r, 0, 10)
			// Its exact bucket is still full: once the route has one
			// request back, the same path shows 9.
			e.g.clock.Advance(50 * time.Millisecond)
			r = e.g.get(t, xs[30], e.auth)
			rlWantStatus(t, r, http.StatusNotFound)
			e.g.wantStandard(t, r, 0, 9)
		}},
		{"V8", func(t *testing.T, e *env) {
			r := e.g.postCharge(t, e.spare, 1000, "JPY")
			rlWantStatus(t, r, http.StatusCreated)
			if got := e.g.charge(t, r); got != 99 {
				t.Errorf("%s = %d, want 99", rlHdrRemaining, got)
			}
			if got := r.header.Get(rlHdrPerMinute); got != "3000" {
				t.Errorf("%s = %q, want 3000", rlHdrPerMinute, got)
			}
		}},
		{"V9", func(t *testing.T, e *env) {
			for i := range 100 {
				r := e.g.do(t, http.MethodPost, "/tokens", e.auth, rlTokenBody("one_time"))
				rlWantStatus(t, r, http.StatusCreated)
				if got := e.g.charge(t, r); got != 99-i {
					t.Fatalf("token %d: %s = %d, want %d", i+1, rlHdrRemaining, got, 99-i)
				}
			}
			r := e.g.postCharge(t, e.spare, 1000, "JPY")
			if secs := rlWant429(t, r); secs != 1 {
				t.Errorf("Retry-After %d, want 1", secs)
			}
			if got := e.g.charge(t, r); got != 0 {
				t.Errorf("%s = %d, want 0", rlHdrRemaining, got)
			}
			if n := e.g.countCharges(t); n != e.charges {
				t.Errorf("%d charges after a refused POST /charges, want %d", n, e.charges)
			}
		}},
	}
	for _, v := range vectors {
		t.Run(v.name, func(t *testing.T) {
			g := newRLGateway(t, rlOptions{})
			e := &env{g: g, auth: g.secretA1()}
			e.a, e.b = g.newCharge(t, 1000), g.newCharge(t, 2000)
			e.spare = g.newToken(t, "one_time")
			e.charges = 2
			g.settle() // one subject, nothing else counted
			v.run(t, e)
		})
	}
}

// V10: 50 concurrent requests on one exact key at t=0 admit exactly 10,
// every time.
func TestRateLimitV10Concurrent(t *testing.T) {
	g := newRLGateway(t, rlOptions{})
	path, auth := "/charges/"+g.newCharge(t, 1000), g.secretA1()
	const rounds, workers = 100, 50
	for round := range rounds {
		g.settle()
		resps := make([]*rlResp, workers)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range workers {
			wg.Go(func() {
				<-start
				r, err := g.try(http.MethodGet, path, auth, "")
				if err != nil {
					t.Errorf("round %d: %v", round, err)
					return
				}
				resps[i] = r
			})
		}
		close(start)
		wg.Wait()
		if t.Failed() {
			t.FailNow()
		}
		var exacts, routes []int
		refused := 0
		for _, r := range resps {
			route, exact := g.standard(t, r)
			switch r.status {
			case http.StatusOK:
				exacts, routes = append(exacts, exact), append(routes, route)
			case http.StatusTooManyRequests:
				refused++
				if exact != 0 {
					t.Errorf("round %d: a refusal shows exact %d, want 0", round, exact)
				}
			default:
				t.Fatalf("round %d: %s", round, r)
			}
		}
		if len(exacts) != 10 || refused != 40 {
			t.Fatalf("round %d: %d admitted and %d refused, want 10 and 40", round, len(exacts), refused)
		}
		// Each admitted request took its own unit: the balances they saw
		// are 0..9 and 20..29, each once.
		slices.Sort(exacts)
		slices.Sort(routes)
		if !slices.Equal(exacts, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}) ||
			!slices.Equal(routes, []int{20, 21, 22, 23, 24, 25, 26, 27, 28, 29}) {
			t.Fatalf("round %d: admitted requests saw exact %v, route %v", round, exacts, routes)
		}
	}
}

// V11: one request every 50 ms for 70 s on one exact key.
func TestRateLimitV11Sustained(t *testing.T) {
	g := newRLGateway(t, rlOptions{})
	path, auth := "/charges/"+g.newCharge(t, 1000), g.secretA1()
	g.settle()
	const step, total = 50 * time.Millisecond, 70 * time.Second
	var admitted []time.Duration
	firstRefusal := time.Duration(-1)
	for at := time.Duration(0); at < total; at += step {
		r := g.get(t, path, auth)
		switch r.status {
		case http.StatusOK:
			admitted = append(admitted, at)
		case http.StatusTooManyRequests:
			if firstRefusal < 0 {
				firstRefusal = at
			}
		default:
			t.Fatalf("at %v: %s", at, r)
		}
		g.clock.Advance(step)
	}
	// The first 120 and more are admitted; then the minute allowance binds.
	if firstRefusal < 0 || firstRefusal < 120*step {
		t.Fatalf("first refusal at %v (request %d), want after the first 120", firstRefusal, firstRefusal/step)
	}
	// Over any 60 s, no more than 120 + 120.
	most := 0
	for i, from := range admitted {
		j, _ := slices.BinarySearch(admitted, from+time.Minute)
		most = max(most, j-i)
	}
	if most > 240 {
		t.Errorf("%d admitted within 60 s, want at most 240", most)
	}
	// The sustained rate is one per 500 ms: after the burst, admitted
	// requests are exactly 500 ms apart.
	i, _ := slices.BinarySearch(admitted, firstRefusal)
	tail := admitted[i:]
	if len(tail) < 100 {
		t.Fatalf("only %d admitted after the first refusal at %v", len(tail), firstRefusal)
	}
	for k := 1; k < len(tail); k++ {
		if gap := tail[k] - tail[k-1]; gap != 500*time.Millisecond {
			t.Fatalf("admitted at %v and %v: gap %v, want 500ms", tail[k-1], tail[k], gap)
		}
	}
	t.Logf("first refusal at request %d; %d admitted in 70 s; at most %d in any 60 s", firstRefusal/step, len(admitted), most)
}

// ---------------------------------------------------------------------------
// Classes, headers and keys

func TestRateLimitClasses(t *testing.T) {
	g := newRLGateway(t, rlOptions{})
	a := g.newCharge(t, 1000)
	tok := g.newToken(t, "recurring")
	secret := g.secretA1()
	chargePath := storePath(g.base.storeA1, "/charges/"+a)
	cases := []struct {
		name         string
		method, path string
		auth, body   string
		status       int
		charge       bool
	}{
		{"POST /charges 201", "POST", "/charges", secret, rlChargeBody(tok, 1000, "JPY"), 201, true},
		{"POST /charges 400", "POST", "/charges", secret, `{}`, 400, true},
		{"POST /charges 401", "POST", "/charges", "", rlChargeBody(tok, 1000, "JPY"), 401, true},
		{"POST /tokens 201", "POST", "/tokens", secret, rlTokenBody("one_time"), 201, true},
		{"POST /tokens 400", "POST", "/tokens", secret, `{"type":"one_time"}`, 400, true},
		{"POST /tokens 401", "POST", "/tokens", "Bearer nonsense", rlTokenBody("one_time"), 401, true},
		{"POST /subscriptions", "POST", "/subscriptions", secret, `{}`, 0, true},
		{"GET /charges/{id} 200", "GET", "/charges/" + a, secret, "", 200, false},
		{"GET /charges/{id} 401", "GET", "/charges/" + a, "", "", 401, false},
		{"GET /charges/{id} bad token 401", "GET", "/charges/" + a, "Bearer nonsense", "", 401, false},
		{"GET /charges", "GET", "/charges", secret, "", 200, false},
		{"GET /tokens", "GET", "/tokens", secret, "", 200, false},
		{"GET unknown path 404", "GET", "/no/such/path", secret, "", 404, false},
		{"GET unknown path 404 without auth", "GET", "/nope", "", "", 404, false},
		{"POST unknown path", "POST", "/charges/" + a + "/nope", secret, `{}`, 404, false},
		{"DELETE /charges/{id} 405", "DELETE", "/charges/" + a, secret, "", 405, false},
		{"PATCH charge", "PATCH", chargePath, secret, `{"metadata":{"order":"1"}}`, 200, false},
		{"POST refund (a POST, not charge class)", "POST", chargePath + "/refunds", secret, `{}`, 0, false},
		{"GET heartbeat", "GET", "/heartbeat", "", "", 200, false},
		{"GET /me", "GET", "/me", secret, "", 200, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g.settle()
			r := g.do(t, c.method, c.path, c.auth, c.body)
			if c.status != 0 && r.status != c.status {
				t.Fatalf("response %s, want %d", r, c.status)
			}
			if c.charge {
				if got := g.charge(t, r); got != 99 {
					t.Errorf("%s = %d, want 99", rlHdrRemaining, got)
				}
			} else {
				g.wantStandard(t, r, 29, 9)
			}
		})
	}
	t.Run("the classes share no bucket", func(t *testing.T) {
		g.settle()
		for range 3 {
			g.newCharge(t, 1000) // a token and a charge each
		}
		r := g.get(t, "/charges/"+a, secret)
		g.wantStandard(t, r, 29, 9)
		r = g.do(t, "POST", "/tokens", secret, rlTokenBody("one_time"))
		if got := g.charge(t, r); got != 93 {
			t.Errorf("%s = %d after seven charge-class requests, want 93", rlHdrRemaining, got)
		}
	})
	t.Run("429 of each class", func(t *testing.T) {
		g := newRLGateway(t, rlOptions{rules: &limit.Rules{
			Charge: limit.Rule{Burst: 1, BurstRefillPerMinute: 3000, PerMinute: 3000},
			Route:  limit.RouteRule(),
			Exact:  limit.Rule{Burst: 1, BurstRefillPerMinute: 1200, PerMinute: 120},
		}})
		g.do(t, "POST", "/tokens", g.secretA1(), `{}`)
		r := g.do(t, "POST", "/tokens", g.secretA1(), `{}`)
		rlWant429(t, r)
		if got := g.charge(t, r); got != 0 {
			t.Errorf("%s = %d, want 0", rlHdrRemaining, got)
		}
		g.get(t, "/nope", "")
		r = g.get(t, "/nope", "")
		rlWant429(t, r)
		g.wantStandard(t, r, 29, 0) // the refusal took nothing from the route
	})
	t.Run("no limiter, no headers", func(t *testing.T) {
		g := newRLGateway(t, rlOptions{noLimiter: true})
		for _, r := range []*rlResp{g.get(t, "/heartbeat", ""), g.do(t, "POST", "/tokens", g.secretA1(), `{}`)} {
			for _, h := range append(slices.Clone(rlChargeHeaders), rlStandardHeaders...) {
				if v, ok := r.header[h]; ok {
					t.Errorf("response %s without a limiter carries %s: %q", r, h, v)
				}
			}
		}
	})
}

func TestRateLimitKeys(t *testing.T) {
	g := newRLGateway(t, rlOptions{})
	a, b := g.newCharge(t, 1000), g.newCharge(t, 2000)
	auth := g.secretA1()
	t.Run("unmatched paths collapse id-like segments", func(t *testing.T) {
		g.settle()
		g.wantStandard(t, g.get(t, "/foo/abc1", auth), 29, 9)
		g.wantStandard(t, g.get(t, "/foo/xyz2", auth), 28, 9) // same route /foo/{id}
		g.wantStandard(t, g.get(t, "/foo/"+uuid.NewString(), auth), 27, 9)
		g.wantStandard(t, g.get(t, "/foo/abc", auth), 29, 9) // no digit: its own route
		g.wantStandard(t, g.get(t, "/foo/abc1/bar", auth), 29, 9)
		g.wantStandard(t, g.get(t, "/foo/q9/bar", auth), 28, 9)
	})
	t.Run("matched routes use the template", func(t *testing.T) {
		g.settle()
		g.wantStandard(t, g.get(t, "/charges/"+a, auth), 29, 9)
		g.wantStandard(t, g.get(t, "/charges/"+b, auth), 28, 9)
		refunds := func(ch string) string { return storePath(g.base.storeA1, "/charges/"+ch+"/refunds") }
		g.wantStandard(t, g.get(t, refunds(a), auth), 29, 9)
		g.wantStandard(t, g.get(t, refunds(b), auth), 28, 9)
		// Another store's path is the same template.
		g.wantStandard(t, g.get(t, storePath(g.base.storeA2, "/charges/"+a+"/refunds"), auth), 27, 9)
	})
	t.Run("the query string is part of the exact key only", func(t *testing.T) {
		g.settle()
		g.wantStandard(t, g.get(t, "/charges/"+a+"?polling=true", auth), 29, 9)
		g.wantStandard(t, g.get(t, "/charges/"+a, auth), 28, 9)
		g.wantStandard(t, g.get(t, "/charges/"+a+"?polling=true", auth), 27, 8)
		g.wantStandard(t, g.get(t, "/charges/"+a+"?polling=false", auth), 26, 9)
	})
	t.Run("the method is ignored", func(t *testing.T) {
		g.settle()
		p := storePath(g.base.storeA1, "/charges/"+a)
		r := g.get(t, p, auth)
		rlWantStatus(t, r, http.StatusOK)
		g.wantStandard(t, r, 29, 9)
		r = g.do(t, http.MethodPatch, p, auth, `{"metadata":{"k":"v"}}`)
		rlWantStatus(t, r, http.StatusOK)
		g.wantStandard(t, r, 28, 8)
		r = g.do(t, http.MethodDelete, p, auth, "") // 405, same buckets
		rlWantStatus(t, r, http.StatusMethodNotAllowed)
		g.wantStandard(t, r, 27, 7)
		r = g.do(t, http.MethodPost, "/charges/"+a, auth, `{}`)
		g.wantStandard(t, r, 29, 9) // another path: /charges/{id}
		r = g.get(t, "/charges/"+a, auth)
		g.wantStandard(t, r, 28, 8)
	})
}

// ---------------------------------------------------------------------------
// Refusals and Retry-After

func TestRateLimitRefusalsTakeNothing(t *testing.T) {
	t.Run("standard", func(t *testing.T) {
		g := newRLGateway(t, rlOptions{})
		a, b := g.newCharge(t, 1000), g.newCharge(t, 2000)
		auth := g.secretA1()
		g.settle()
		for range 10 {
			g.get(t, "/charges/"+a, auth)
		}
		for range 5 { // refused on the exact bucket: the route keeps 20
			r := g.get(t, "/charges/"+a, auth)
			rlWant429(t, r)
			g.wantStandard(t, r, 20, 0)
		}
		r := g.get(t, "/charges/"+b, auth)
		rlWantStatus(t, r, http.StatusOK)
		g.wantStandard(t, r, 19, 9)
		// The charge bucket was not touched by any of it.
		r = g.postCharge(t, g.newToken(t, "one_time"), 1000, "JPY")
		if got := g.charge(t, r); got != 98 {
			t.Errorf("%s = %d after one token and one charge, want 98", rlHdrRemaining, got)
		}
	})
	t.Run("charge", func(t *testing.T) {
		rules := limit.DefaultRules()
		rules.Charge = limit.Rule{Burst: 2, BurstRefillPerMinute: 3000, PerMinute: 3000}
		g := newRLGateway(t, rlOptions{rules: &rules, idempotency: true})
		tok := g.newToken(t, "one_time")
		g.newToken(t, "one_time")
		charges, tokens := g.countCharges(t), g.countTokens(t)
		r := g.postCharge(t, tok, 1000, "JPY", header("Idempotency-Key", "refused-1"))
		rlWant429(t, r)
		r = g.do(t, http.MethodPost, "/tokens", g.secretA1(), rlTokenBody("recurring"))
		rlWant429(t, r)
		if n := g.countCharges(t); n != charges {
			t.Errorf("%d charges after a refused POST /charges, want %d", n, charges)
		}
		if n := g.countTokens(t); n != tokens {
			t.Errorf("%d tokens after a refused POST /tokens, want %d", n, tokens)
		}
		// The refused request used neither the token nor the key.
		g.clock.Advance(time.Second)
		r = g.postCharge(t, tok, 1000, "JPY", header("Idempotency-Key", "refused-1"))
		rlWantStatus(t, r, http.StatusCreated)
		if got := r.header.Get("Idempotency-Status"); got != "successfully_stored" {
			t.Errorf("Idempotency-Status %q after the refusal, want successfully_stored", got)
		}
	})
}

func TestRateLimitRetryAfter(t *testing.T) {
	rules := limit.DefaultRules()
	rules.Exact = limit.Rule{Burst: 1, BurstRefillPerMinute: 1, PerMinute: 1} // one request a minute
	g := newRLGateway(t, rlOptions{rules: &rules})
	rlWantStatus(t, g.get(t, "/heartbeat", ""), http.StatusOK)
	for _, step := range []struct {
		advance time.Duration
		want    int
	}{
		{0, 60},
		{500 * time.Millisecond, 60}, // 59.5 s rounds up
		{29 * time.Second, 31},       // 30.5 s
		{29*time.Second + 499*time.Millisecond, 2},
		{2 * time.Millisecond, 1}, // 999 ms
		{998 * time.Millisecond, 1},
	} {
		g.clock.Advance(step.advance)
		if got := rlWant429(t, g.get(t, "/heartbeat", "")); got != step.want {
			t.Errorf("Retry-After %d, want %d", got, step.want)
		}
	}
	g.clock.Advance(time.Millisecond) // a minute after the first
	rlWantStatus(t, g.get(t, "/heartbeat", ""), http.StatusOK)
}

// ---------------------------------------------------------------------------
// Subjects

func TestRateLimitSubjects(t *testing.T) {
	const ip1, ip2 = "203.0.113.1", "203.0.113.2"
	g := newRLGateway(t, rlOptions{trusted: rlLocalProxy})
	a := g.newCharge(t, 1000)
	charge := "/charges/" + a
	live, err := g.base.svc.Access.IssueStoreAppToken(context.Background(), g.base.storeA1, payment.NewAppToken{Mode: payment.ModeLive})
	if err != nil {
		t.Fatal(err)
	}
	// exhaust spends the exact burst of path for one subject and checks
	// that the next request of that subject is refused.
	exhaust := func(t *testing.T, path, auth string, opts ...reqOpt) {
		t.Helper()
		for i := range 10 {
			r := g.get(t, path, auth, opts...)
			if r.status == http.StatusTooManyRequests {
				t.Fatalf("request %d refused: %s", i+1, r)
			}
		}
		rlWant429(t, g.get(t, path, auth, opts...))
	}
	fresh := func(t *testing.T, r *rlResp) {
		t.Helper()
		if r.status == http.StatusTooManyRequests {
			t.Fatalf("refused, want a budget of its own: %s", r)
		}
		g.wantStandard(t, r, 29, 9)
	}
	browserFrom := func(ip string) []reqOpt { return []reqOpt{origin(shopOrigin), rlFromIP(ip)} }

	t.Run("two stores do not share", func(t *testing.T) {
		g.settle()
		exhaust(t, "/me", g.secretA1())
		fresh(t, g.get(t, "/me", server(g.base.tokB1)))
	})
	t.Run("a merchant token is its own subject", func(t *testing.T) {
		g.settle()
		exhaust(t, "/me", g.secretA1())
		fresh(t, g.get(t, "/me", server(g.base.tokA)))
	})
	t.Run("test and live tokens of one store do not share", func(t *testing.T) {
		g.settle()
		exhaust(t, "/me", g.secretA1())
		fresh(t, g.get(t, "/me", server(live)))
	})
	t.Run("two browser IPs of one store do not share", func(t *testing.T) {
		g.settle()
		exhaust(t, charge, g.browserA1(), browserFrom(ip1)...)
		r := g.get(t, charge, g.browserA1(), browserFrom(ip2)...)
		rlWantStatus(t, r, http.StatusOK)
		fresh(t, r)
		// Nor with the store's server, from the same IP.
		fresh(t, g.get(t, charge, g.secretA1(), rlFromIP(ip1)))
	})
	t.Run("secret-bearing calls share the store's budget whatever the IP", func(t *testing.T) {
		g.settle()
		exhaust(t, charge, g.secretA1(), rlFromIP(ip1))
		rlWant429(t, g.get(t, charge, g.secretA1(), rlFromIP(ip2)))
		rlWant429(t, g.get(t, charge, g.secretA1()))
	})
	t.Run("unauthenticated requests are per IP", func(t *testing.T) {
		g.settle()
		exhaust(t, "/heartbeat", "", rlFromIP(ip1))
		fresh(t, g.get(t, "/heartbeat", "", rlFromIP(ip2)))
		// A failed authentication counts on the IP too.
		rlWant429(t, g.get(t, "/heartbeat", "Bearer nonsense", rlFromIP(ip1)))
		rlWant429(t, g.get(t, "/heartbeat", g.browserA1(), origin(evilOrigin), rlFromIP(ip1)))
	})
	t.Run("the rightmost untrusted X-Forwarded-For address is the client", func(t *testing.T) {
		g.settle()
		exhaust(t, "/heartbeat", "", rlFromIP("198.51.100.1, "+ip1))
		rlWant429(t, g.get(t, "/heartbeat", "", rlFromIP("198.51.100.2, "+ip1)))
		rlWant429(t, g.get(t, "/heartbeat", "", rlFromIP(ip1+", 127.0.0.1")))
		fresh(t, g.get(t, "/heartbeat", "", rlFromIP(ip1+", "+ip2)))
	})
	// A chain that names no readable client is one unknown client: it
	// neither spends the proxy's own budget (shared with everyone the
	// proxy forwards for) nor gets a fresh one by writing other garbage.
	t.Run("an unreadable X-Forwarded-For is one unknown client, not the proxy", func(t *testing.T) {
		g.settle()
		exhaust(t, "/heartbeat", "", rlFromIP("garbage"))
		rlWant429(t, g.get(t, "/heartbeat", "", rlFromIP("unknown")))
		rlWant429(t, g.get(t, "/heartbeat", "", rlFromIP(ip1+", garbage")))
		rlWant429(t, g.get(t, "/heartbeat", "", header("Forwarded", "for="+ip1)))
		fresh(t, g.get(t, "/heartbeat", ""))
		fresh(t, g.get(t, "/heartbeat", "", rlFromIP(ip1)))
	})
	t.Run("X-Forwarded-For is ignored without trusted proxies", func(t *testing.T) {
		g := newRLGateway(t, rlOptions{})
		for i := range 10 {
			rlWantStatus(t, g.get(t, "/heartbeat", "", rlFromIP(fmt.Sprintf("198.51.100.%d", i+1))), http.StatusOK)
		}
		rlWant429(t, g.get(t, "/heartbeat", "", rlFromIP(ip2)))
		rlWant429(t, g.get(t, "/heartbeat", ""))
	})
}

// ---------------------------------------------------------------------------
// The duplicate-charge rule

func rlWantAccepted(tb testing.TB, r *rlResp) rlCharge {
	tb.Helper()
	rlWantStatus(tb, r, http.StatusCreated)
	ch := rlDecodeCharge(tb, r)
	if ch.Status == "failed" || ch.Error != nil {
		tb.Fatalf("charge %s, want it accepted", r)
	}
	return ch
}

func rlWantDuplicate(tb testing.TB, r *rlResp) rlCharge {
	tb.Helper()
	rlWantStatus(tb, r, http.StatusCreated)
	ch := rlDecodeCharge(tb, r)
	if ch.Status != "failed" || ch.Error == nil || ch.Error.Code != 311 || ch.Error.Message != "TOO_MANY_CHARGE_REQUESTS" {
		tb.Fatalf("charge %s, want failed with error 311 TOO_MANY_CHARGE_REQUESTS", r)
	}
	return ch
}

func TestDuplicateCharge(t *testing.T) {
	t.Run("same amount within 30 s fails with 311", func(t *testing.T) {
		g := newRLGateway(t, rlOptions{})
		tok := g.newToken(t, "recurring")
		g.settle()
		r := g.postCharge(t, tok, 1000, "JPY")
		first := rlWantAccepted(t, r)
		if got := g.charge(t, r); got != 99 {
			t.Errorf("%s = %d, want 99", rlHdrRemaining, got)
		}
		r = g.postCharge(t, tok, 1000, "JPY")
		early := rlWantDuplicate(t, r)
		if got := g.charge(t, r); got != 98 { // a duplicate still counts
			t.Errorf("%s = %d after a duplicate, want 98", rlHdrRemaining, got)
		}
		g.clock.Advance(29 * time.Second)
		dup := rlWantDuplicate(t, g.postCharge(t, tok, 1000, "JPY"))
		g.process(t)
		if n := g.proc.calls(first.ID); n != 1 {
			t.Errorf("the accepted charge reached the processor %d times, want 1", n)
		}
		if n := g.proc.calls(dup.ID) + g.proc.calls(early.ID); n != 0 {
			t.Errorf("the duplicates reached the processor %d times", n)
		}
		if n := g.proc.total(); n != 1 {
			t.Errorf("the processor was called %d times, want once", n)
		}
		// It is recorded like any charge.
		got := rlDecodeCharge(t, g.get(t, "/charges/"+dup.ID, g.secretA1()))
		if got.Status != "failed" || got.Error == nil || got.Error.Code != 311 {
			t.Errorf("GET the duplicate: %+v", got)
		}
		var list struct {
			Items []rlCharge `json:"items"`
		}
		r = g.get(t, "/charges?limit=100", g.secretA1())
		rlWantStatus(t, r, http.StatusOK)
		if err := json.Unmarshal(r.body, &list); err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(list.Items, func(c rlCharge) bool {
			return c.ID == dup.ID && c.Status == "failed" && c.Error != nil && c.Error.Code == 311
		}) {
			t.Errorf("the duplicate is not in the charge list: %s", r)
		}
		var history struct {
			Items []struct {
				ResourceID string `json:"resource_id"`
				Status     string `json:"status"`
			} `json:"items"`
		}
		r = g.get(t, "/transaction_history?limit=100", g.secretA1())
		rlWantStatus(t, r, http.StatusOK)
		if err := json.Unmarshal(r.body, &history); err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(history.Items, func(e struct {
			ResourceID string `json:"resource_id"`
			Status     string `json:"status"`
		}) bool {
			return e.ResourceID == dup.ID && e.Status == "failed"
		}) {
			t.Errorf("the duplicate is not in the transaction history: %s", r)
		}
	})
	t.Run("another amount or currency is not a duplicate", func(t *testing.T) {
		g := newRLGateway(t, rlOptions{})
		tok := g.newToken(t, "recurring")
		rlWantAccepted(t, g.postCharge(t, tok, 1000, "JPY"))
		rlWantAccepted(t, g.postCharge(t, tok, 1001, "JPY"))
		rlWantAccepted(t, g.postCharge(t, tok, 1000, "USD"))
		// Another recurring token of the same card is another token.
		rlWantAccepted(t, g.postCharge(t, g.newToken(t, "recurring"), 1000, "JPY"))
		rlWantDuplicate(t, g.postCharge(t, tok, 1001, "JPY"))
	})
	t.Run("after 31 s it is accepted", func(t *testing.T) {
		g := newRLGateway(t, rlOptions{})
		tok := g.newToken(t, "recurring")
		rlWantAccepted(t, g.postCharge(t, tok, 1000, "JPY"))
		g.clock.Advance(31 * time.Second)
		rlWantAccepted(t, g.postCharge(t, tok, 1000, "JPY"))
	})
	// The window's edges (README, duplicate charges: a charge "accepted
	// within the last 30 seconds", the bound included): a charge 30 s old, to the microsecond the
	// database keeps, is within them; a microsecond later it is not.
	t.Run("the window's edges", func(t *testing.T) {
		g := newRLGateway(t, rlOptions{})
		tok := g.newToken(t, "recurring")
		rlWantAccepted(t, g.postCharge(t, tok, 1000, "JPY")) // t=0
		g.clock.Advance(30*time.Second - time.Microsecond)
		rlWantDuplicate(t, g.postCharge(t, tok, 1000, "JPY")) // t=29.999999 s
		g.clock.Advance(time.Microsecond)
		rlWantDuplicate(t, g.postCharge(t, tok, 1000, "JPY")) // t=30 s
		g.clock.Advance(time.Microsecond)
		rlWantAccepted(t, g.postCharge(t, tok, 1000, "JPY")) // t=30.000001 s
		g.clock.Advance(30 * time.Second)
		rlWantDuplicate(t, g.postCharge(t, tok, 1000, "JPY")) // 30 s after that one
	})
	t.Run("rejected retries do not extend the window", func(t *testing.T) {
		g := newRLGateway(t, rlOptions{})
		tok := g.newToken(t, "recurring")
		rlWantAccepted(t, g.postCharge(t, tok, 1000, "JPY")) // t=0
		for range 2 {
			g.clock.Advance(10 * time.Second)
			rlWantDuplicate(t, g.postCharge(t, tok, 1000, "JPY")) // t=10, t=20
		}
		g.clock.Advance(11 * time.Second)
		rlWantAccepted(t, g.postCharge(t, tok, 1000, "JPY")) // t=31: 31 s after the last accepted one
		g.clock.Advance(10 * time.Second)
		rlWantDuplicate(t, g.postCharge(t, tok, 1000, "JPY")) // t=41: the window runs from t=31
	})
	t.Run("one-time tokens are exempt", func(t *testing.T) {
		g := newRLGateway(t, rlOptions{})
		tok := g.newToken(t, "one_time")
		rlWantAccepted(t, g.postCharge(t, tok, 1000, "JPY"))
		// A second charge is refused as a used token, not recorded as a
		// duplicate.
		r := g.postCharge(t, tok, 1000, "JPY")
		rlWantStatus(t, r, http.StatusBadRequest)
		if !bytes.Contains(r.body, []byte(`"TRANSACTION_ALREADY_PROCESSED"`)) {
			t.Errorf("second charge of a one-time token: %s", r)
		}
		if n := g.countCharges(t); n != 1 {
			t.Errorf("%d charges, want 1", n)
		}
	})
	t.Run("an idempotent retry replays, it is not a duplicate", func(t *testing.T) {
		g := newRLGateway(t, rlOptions{idempotency: true})
		tok := g.newToken(t, "recurring")
		key := header("Idempotency-Key", "order-1")
		r := g.postCharge(t, tok, 1000, "JPY", key)
		first := rlWantAccepted(t, r)
		if got := r.header.Get("Idempotency-Status"); got != "successfully_stored" {
			t.Errorf("Idempotency-Status %q, want successfully_stored", got)
		}
		g.clock.Advance(5 * time.Second)
		r = g.postCharge(t, tok, 1000, "JPY", key)
		replay := rlWantAccepted(t, r)
		if replay.ID != first.ID {
			t.Errorf("the retry answered charge %s, want the first, %s", replay.ID, first.ID)
		}
		if got := r.header.Get("Idempotency-Status"); got != "retrieved_idempotent_response" {
			t.Errorf("Idempotency-Status %q, want retrieved_idempotent_response", got)
		}
		g.charge(t, r) // a replay is still a charge-class response
		if n := g.countCharges(t); n != 1 {
			t.Errorf("%d charges after a replay, want 1", n)
		}
		rlWantDuplicate(t, g.postCharge(t, tok, 1000, "JPY", header("Idempotency-Key", "order-2")))
	})
}

func TestDuplicateChargeConcurrent(t *testing.T) {
	g := newRLGateway(t, rlOptions{})
	tok := g.newToken(t, "recurring")
	const workers = 50
	resps := make([]*rlResp, workers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range workers {
		wg.Go(func() {
			<-start
			r, err := g.try(http.MethodPost, "/charges", g.secretA1(), rlChargeBody(tok, 1000, "JPY"))
			if err != nil {
				t.Error(err)
				return
			}
			resps[i] = r
		})
	}
	close(start)
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	var accepted []string
	duplicates := 0
	for _, r := range resps {
		rlWantStatus(t, r, http.StatusCreated)
		ch := rlDecodeCharge(t, r)
		switch {
		case ch.Error == nil && (ch.Status == "pending" || ch.Status == "successful"):
			accepted = append(accepted, ch.ID)
		case ch.Status == "failed" && ch.Error != nil && ch.Error.Code == 311:
			duplicates++
		default:
			t.Errorf("unexpected charge %s", r)
		}
	}
	if len(accepted) != 1 || duplicates != workers-1 {
		t.Fatalf("%d accepted and %d duplicates, want 1 and %d", len(accepted), duplicates, workers-1)
	}
	g.process(t)
	if n := g.proc.total(); n != 1 || g.proc.calls(accepted[0]) != 1 {
		t.Errorf("the processor was called %d times (%d for the accepted charge), want once", n, g.proc.calls(accepted[0]))
	}
	if n := g.countCharges(t); n != workers {
		t.Errorf("%d charges recorded, want %d", n, workers)
	}
}

// ---------------------------------------------------------------------------
// Resource limits

func TestResourceLimitAppTokensConcurrent(t *testing.T) {
	g := newRLGateway(t, rlOptions{rules: &rlGenerousRules})
	for range 18 { // with the fixture's own token: 19 active
		if _, err := g.svc.Access.IssueStoreAppToken(context.Background(), g.base.storeA1, payment.NewAppToken{}); err != nil {
			t.Fatal(err)
		}
	}
	path := storePath(g.base.storeA1, "/app_jwts")
	const workers = 50
	resps := make([]*rlResp, workers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range workers {
		wg.Go(func() {
			<-start
			r, err := g.try(http.MethodPost, path, g.secretA1(), `{}`)
			if err != nil {
				t.Error(err)
				return
			}
			resps[i] = r
		})
	}
	close(start)
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	created := 0
	for _, r := range resps {
		switch r.status {
		case http.StatusCreated:
			created++
		case http.StatusBadRequest:
			rlWantResourceLimit(t, r, "app_token")
		default:
			t.Errorf("unexpected answer %s", r)
		}
	}
	if created != 1 {
		t.Errorf("%d created, want exactly 1", created)
	}
	p, err := g.svc.Access.AppTokens(context.Background(), g.callerA1(t), g.base.storeA1, payment.ListParams{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if n := rlHits(p); n != 20 {
		t.Errorf("%d app tokens, want 20", n)
	}
}

func rlWantResourceLimit(tb testing.TB, r *rlResp, field string) {
	tb.Helper()
	if r.status != http.StatusBadRequest {
		tb.Fatalf("response %s, want 400", r)
	}
	want := fmt.Sprintf(`{"status":"error","code":"RESOURCE_LIMIT_REACHED","errors":[{"field":%q,"reason":"RESOURCE_LIMIT_REACHED"}]}`, field)
	if got := string(bytes.TrimRight(r.body, "\n")); got != want {
		tb.Errorf("body %s, want %s", got, want)
	}
}

func TestResourceLimitTestChargesPerDay(t *testing.T) {
	limits := payment.DefaultResourceLimits()
	limits.TestChargesPerDay = 3
	g := newRLGateway(t, rlOptions{resources: limits})
	var tokens []string
	for range 2 {
		tokens = append(tokens, g.newToken(t, "one_time"))
	}
	recurring := g.newToken(t, "recurring")
	rlWantAccepted(t, g.postCharge(t, tokens[0], 1000, "JPY"))
	rlWantAccepted(t, g.postCharge(t, recurring, 1000, "JPY"))
	rlWantDuplicate(t, g.postCharge(t, recurring, 1000, "JPY")) // counts: whatever the outcome
	r := g.postCharge(t, tokens[1], 1000, "JPY")
	rlWantResourceLimit(t, r, "test_charge")
	g.charge(t, r)
	if n := g.countCharges(t); n != 3 {
		t.Errorf("%d charges, want 3", n)
	}
	// The next UTC day starts a new count; the refused charge left the
	// one-time token unused.
	now := g.clock.Now().UTC()
	next := time.Date(now.Year(), now.Month(), now.Day()+1, 0, 0, 1, 0, time.UTC)
	g.clock.Advance(next.Sub(now) - 2*time.Second) // 23:59:59 of the same day
	rlWantResourceLimit(t, g.postCharge(t, tokens[1], 1000, "JPY"), "test_charge")
	g.clock.Advance(2 * time.Second)
	rlWantAccepted(t, g.postCharge(t, tokens[1], 1000, "JPY"))
	rlWantAccepted(t, g.postCharge(t, recurring, 1000, "JPY"))
	rlWantAccepted(t, g.postCharge(t, recurring, 1001, "JPY"))
	rlWantResourceLimit(t, g.postCharge(t, recurring, 1002, "JPY"), "test_charge")
}
