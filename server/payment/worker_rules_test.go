package payment_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/kessaitest"
	"github.com/kessai/kessai/server/kessaitest/servicetest"
	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/payment/services"
	"github.com/kessai/kessai/server/sandbox"
	"github.com/kessai/kessai/server/sqlite"
)

// Rules of the worker, the long poll and the auth cache that each test here
// guards: every one of them fails when its rule is taken out of the code
// (server/devtools/mutate/mutations.txt names the deletions).

// scripted is the sandbox acquirer with a script: the next fail[op] calls of
// an operation fail as if the acquirer were unreachable, and a Void can be
// held at the acquirer until the test lets it answer.
type scripted struct {
	sandbox.Processor
	mu    sync.Mutex
	fail  map[string]int
	calls map[string]int
	// voidGate, when set, holds the next Void until it is closed;
	// voidEntered is closed once that Void has reached the acquirer.
	voidGate, voidEntered chan struct{}
}

func (p *scripted) begin(op string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls[op]++
	if p.fail[op] > 0 {
		p.fail[op]--
		return errors.New(op + ": acquirer unreachable")
	}
	return nil
}

func (p *scripted) failNext(op string, n int) {
	p.mu.Lock()
	p.fail[op] = n
	p.mu.Unlock()
}

func (p *scripted) callsOf(op string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls[op]
}

func (p *scripted) Authorize(ctx context.Context, req payment.AuthorizeRequest) (payment.ProcessorResult, error) {
	if err := p.begin("authorize"); err != nil {
		return payment.ProcessorResult{}, err
	}
	return p.Processor.Authorize(ctx, req)
}

func (p *scripted) Capture(ctx context.Context, id uuid.UUID, card payment.CardDetails, amount int64, currency string) (payment.ProcessorResult, error) {
	if err := p.begin("capture"); err != nil {
		return payment.ProcessorResult{}, err
	}
	return p.Processor.Capture(ctx, id, card, amount, currency)
}

func (p *scripted) Refund(ctx context.Context, id uuid.UUID, card payment.CardDetails, amount int64, currency string) (payment.ProcessorResult, error) {
	if err := p.begin("refund"); err != nil {
		return payment.ProcessorResult{}, err
	}
	return p.Processor.Refund(ctx, id, card, amount, currency)
}

func (p *scripted) Void(ctx context.Context, id uuid.UUID, card payment.CardDetails) (payment.ProcessorResult, error) {
	if err := p.begin("void"); err != nil {
		return payment.ProcessorResult{}, err
	}
	p.mu.Lock()
	gate, entered := p.voidGate, p.voidEntered
	p.voidGate, p.voidEntered = nil, nil
	p.mu.Unlock()
	if gate != nil {
		close(entered)
		select {
		case <-gate:
		case <-ctx.Done():
			return payment.ProcessorResult{}, ctx.Err()
		}
	}
	return p.Processor.Void(ctx, id, card)
}

// hookStorage is the SQLite store with two hooks a test can set: a channel
// closed after the next read transaction, and a function run inside read
// transactions right after an app token was read (to stop a lookup there).
type hookStorage struct {
	payment.Storage
	mu         sync.Mutex
	afterView  chan struct{}
	onAppToken func(id uuid.UUID)
}

func (h *hookStorage) View(ctx context.Context, fn func(payment.Tx) error) error {
	h.mu.Lock()
	onAppToken := h.onAppToken
	h.mu.Unlock()
	err := h.Storage.View(ctx, func(tx payment.Tx) error {
		if onAppToken != nil {
			tx = hookTx{Tx: tx, onAppToken: onAppToken}
		}
		return fn(tx)
	})
	h.mu.Lock()
	done := h.afterView
	h.afterView = nil
	h.mu.Unlock()
	if done != nil {
		close(done)
	}
	return err
}

// viewed returns a channel closed when the next read transaction ends.
func (h *hookStorage) viewed() <-chan struct{} {
	ch := make(chan struct{})
	h.mu.Lock()
	h.afterView = ch
	h.mu.Unlock()
	return ch
}

type hookTx struct {
	payment.Tx
	onAppToken func(id uuid.UUID)
}

func (t hookTx) AppToken(ctx context.Context, id uuid.UUID) (*payment.AppToken, error) {
	tok, err := t.Tx.AppToken(ctx, id)
	if err == nil {
		t.onAppToken(id)
	}
	return tok, err
}

// rulesFixture is a service over a real SQLite file, with a hand-moved
// clock, the scripted acquirer and the demo store's server caller.
type rulesFixture struct {
	store  *hookStorage
	clk    *kessaitest.Clock
	acq    *scripted
	svc    *services.Set
	demo   *payment.DemoAccount
	caller *payment.Caller
	// codec and cfg build another service over the same store.
	codec payment.TokenCodec
	cfg   payment.Config
}

func newRulesFixture(t *testing.T, cfg payment.Config) *rulesFixture {
	t.Helper()
	f := &rulesFixture{
		clk: kessaitest.NewClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)),
		acq: &scripted{fail: map[string]int{}, calls: map[string]int{}},
	}
	st := servicetest.New(t, servicetest.Options{Clock: f.clk, Processor: f.acq, Config: cfg,
		Storage: func(db *sqlite.DB) payment.Storage {
			f.store = &hookStorage{Storage: db}
			return f.store
		}})
	f.svc, f.codec, f.cfg = st.Service, st.Codec, st.Config
	demo := st.SeedDemo(t)
	f.demo, f.caller = demo.DemoAccount, demo.Caller
	return f
}

// newCharge makes a card token and a pending charge on it.
func (f *rulesFixture) newCharge(t *testing.T, amount int64, capture bool) *payment.Charge {
	t.Helper()
	ctx := context.Background()
	tok, err := f.svc.Tokens.CreateToken(ctx, f.caller, payment.NewToken{PaymentType: "card", Type: payment.OneTime, Email: "a@example.com",
		Card: &payment.CardInput{Cardholder: "TARO YAMADA", Number: "4000020000000000", ExpMonth: 12, ExpYear: 2030, CVV: "123"}})
	if err != nil {
		t.Fatal(err)
	}
	ch, err := f.svc.Charging.CreateCharge(ctx, f.caller, payment.NewCharge{TokenID: tok.ID, Amount: amount, Currency: "JPY", Capture: &capture})
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// settle runs the worker until it finds nothing to do.
func (f *rulesFixture) settle(t *testing.T) {
	t.Helper()
	for range 10 {
		n, err := f.svc.Work.ProcessPending(context.Background(), 100)
		if err != nil {
			t.Fatalf("ProcessPending: %v", err)
		}
		if n == 0 {
			return
		}
	}
	t.Fatal("the worker still finds work after 10 passes")
}

// pass runs one worker pass and checks how many operations were due.
func (f *rulesFixture) pass(t *testing.T, wantFound int) {
	t.Helper()
	n, _ := f.svc.Work.ProcessPending(context.Background(), 100)
	if n != wantFound {
		t.Fatalf("worker pass at %s found %d operations, want %d", f.clk.Now().Format(time.TimeOnly), n, wantFound)
	}
}

func (f *rulesFixture) charge(t *testing.T, id uuid.UUID) *payment.Charge {
	t.Helper()
	ch, err := f.svc.Charging.Charge(context.Background(), f.caller, uuid.Nil, id, 0)
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// charged is a charge's charged amount, -1 when it has none.
func charged(ch *payment.Charge) int64 {
	if ch.ChargedAmount == nil {
		return -1
	}
	return *ch.ChargedAmount
}

// authorized is a charge authorised without capture.
func (f *rulesFixture) authorized(t *testing.T, amount int64) *payment.Charge {
	t.Helper()
	ch := f.newCharge(t, amount, false)
	f.settle(t)
	if got := f.charge(t, ch.ID); got.Status != payment.ChargeAuthorized {
		t.Fatalf("charge %s, want authorized", got.Status)
	}
	return ch
}

// TestLongPollWokenByWorker: a long poll of an object being processed
// answers as soon as the worker on this instance finishes it, not at its
// next re-read. The re-read interval is set to a minute and the poll's
// deadline to a few seconds, so a poll that is not woken answers at its
// deadline, still unfinished, and the test fails.
func TestLongPollWokenByWorker(t *testing.T) {
	const wait = 5 * time.Second
	cases := []struct {
		name string
		// start leaves an operation for the worker and returns the poll
		// of the object that waits on it and the status it should end in.
		start func(t *testing.T, f *rulesFixture) (poll func(context.Context) (string, error), want string)
	}{
		{"authorisation", func(t *testing.T, f *rulesFixture) (func(context.Context) (string, error), string) {
			ch := f.newCharge(t, 1000, true)
			return func(ctx context.Context) (string, error) {
				got, err := f.svc.Charging.Charge(ctx, f.caller, uuid.Nil, ch.ID, wait)
				if err != nil {
					return "", err
				}
				return string(got.Status), nil
			}, "successful"
		}},
		{"capture", func(t *testing.T, f *rulesFixture) (func(context.Context) (string, error), string) {
			ch := f.authorized(t, 1000)
			if err := f.svc.Charging.CaptureCharge(context.Background(), f.caller, ch.StoreID, ch.ID, payment.ChargeCapture{}); err != nil {
				t.Fatal(err)
			}
			return func(ctx context.Context) (string, error) {
				got, err := f.svc.Charging.Charge(ctx, f.caller, ch.StoreID, ch.ID, wait)
				if err != nil {
					return "", err
				}
				return string(got.Status), nil
			}, "successful"
		}},
		{"refund", func(t *testing.T, f *rulesFixture) (func(context.Context) (string, error), string) {
			ch := f.newCharge(t, 1000, true)
			f.settle(t)
			r, err := f.svc.Refunds.CreateRefund(context.Background(), f.caller, ch.StoreID, ch.ID, payment.NewRefund{Amount: 400, Currency: "JPY"})
			if err != nil {
				t.Fatal(err)
			}
			return func(ctx context.Context) (string, error) {
				got, err := f.svc.Refunds.Refund(ctx, f.caller, ch.StoreID, ch.ID, r.ID, wait)
				if err != nil {
					return "", err
				}
				return string(got.Status), nil
			}, "successful"
		}},
		{"cancel", func(t *testing.T, f *rulesFixture) (func(context.Context) (string, error), string) {
			ch := f.authorized(t, 1000)
			cn, err := f.svc.Refunds.CreateCancel(context.Background(), f.caller, ch.StoreID, ch.ID, payment.NewCancel{})
			if err != nil {
				t.Fatal(err)
			}
			return func(ctx context.Context) (string, error) {
				got, err := f.svc.Refunds.Cancel(ctx, f.caller, ch.StoreID, ch.ID, cn.ID, wait)
				if err != nil {
					return "", err
				}
				return string(got.Status), nil
			}, "successful"
		}},
		// The shop plugins' $charge->cancel(); $charge->awaitResult(5):
		// the charge, not the cancel, is polled, and must end canceled.
		{"charge being canceled", func(t *testing.T, f *rulesFixture) (func(context.Context) (string, error), string) {
			ch := f.authorized(t, 1000)
			if _, err := f.svc.Refunds.CreateCancel(context.Background(), f.caller, ch.StoreID, ch.ID, payment.NewCancel{}); err != nil {
				t.Fatal(err)
			}
			return func(ctx context.Context) (string, error) {
				got, err := f.svc.Charging.Charge(ctx, f.caller, ch.StoreID, ch.ID, wait)
				if err != nil {
					return "", err
				}
				return string(got.Status), nil
			}, "canceled"
		}},
		// A refund leaves its charge successful; the charge's poll
		// answers once the refund is done, with the refund counted.
		{"charge being refunded", func(t *testing.T, f *rulesFixture) (func(context.Context) (string, error), string) {
			ch := f.newCharge(t, 1000, true)
			f.settle(t)
			r, err := f.svc.Refunds.CreateRefund(context.Background(), f.caller, ch.StoreID, ch.ID, payment.NewRefund{Amount: 400, Currency: "JPY"})
			if err != nil {
				t.Fatal(err)
			}
			return func(ctx context.Context) (string, error) {
				got, err := f.svc.Charging.Charge(ctx, f.caller, ch.StoreID, ch.ID, wait)
				if err != nil {
					return "", err
				}
				rf, err := f.svc.Refunds.Refund(ctx, f.caller, ch.StoreID, ch.ID, r.ID, 0)
				if err != nil {
					return "", err
				}
				return string(got.Status) + " after a refund " + string(rf.Status), nil
			}, "successful after a refund successful"
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newRulesFixture(t, payment.Config{LongPollRecheck: time.Minute})
			poll, want := tc.start(t, f)
			type answer struct {
				status  string
				err     error
				elapsed time.Duration
			}
			answered := make(chan answer, 1)
			// The poll's first read (made after it subscribed to changes)
			// finds the operation unfinished; only then does the worker run.
			read := f.store.viewed()
			go func() {
				start := time.Now()
				status, err := poll(context.Background())
				answered <- answer{status, err, time.Since(start)}
			}()
			<-read
			// The operation is still waiting for the worker: the poll
			// must not answer yet.
			select {
			case a := <-answered:
				t.Fatalf("long poll answered %q (error %v) after %v, before the worker ran", a.status, a.err, a.elapsed.Round(time.Millisecond))
			case <-time.After(100 * time.Millisecond):
			}
			f.settle(t)
			a := <-answered
			if a.err != nil {
				t.Fatal(a.err)
			}
			if a.status != want || a.elapsed >= wait/2 {
				t.Errorf("long poll answered %q after %v, want %q well before its %v deadline: the worker did not wake it",
					a.status, a.elapsed.Round(time.Millisecond), want, wait)
			}
		})
	}
}

// TestCaptureUpdatesLedger: after a partial capture of an authorisation, the
// transaction history shows the charge successful for the captured amount.
func TestCaptureUpdatesLedger(t *testing.T) {
	ctx := context.Background()
	f := newRulesFixture(t, payment.Config{})
	ch := f.authorized(t, 1000)
	line := func() *payment.LedgerEntry {
		t.Helper()
		page, err := f.svc.Merchants.Transactions(ctx, f.caller, uuid.Nil, payment.LedgerFilter{}, payment.ListParams{Limit: 100, Direction: payment.Desc})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Items {
			if e.ResourceID == ch.ID {
				return e
			}
		}
		t.Fatalf("charge %s not in the transaction history", ch.ID)
		return nil
	}
	if e := line(); e.Status != string(payment.ChargeAuthorized) || e.Amount != 1000 {
		t.Fatalf("history before capture: %s %d, want authorized 1000", e.Status, e.Amount)
	}
	part := int64(600)
	if err := f.svc.Charging.CaptureCharge(ctx, f.caller, ch.StoreID, ch.ID, payment.ChargeCapture{Amount: &part, Currency: "JPY"}); err != nil {
		t.Fatal(err)
	}
	f.settle(t)
	if got := f.charge(t, ch.ID); got.Status != payment.ChargeSuccessful || charged(got) != 600 {
		t.Fatalf("charge after capture: %s %d, want successful 600", got.Status, charged(got))
	}
	if e := line(); e.Status != string(payment.ChargeSuccessful) || e.Amount != 600 {
		t.Errorf("history after a capture of 600: %s %d, want successful 600", e.Status, e.Amount)
	}
}

// TestVoidAfterCaptureFails: a cancel whose void reaches the acquirer while
// the charge is being captured, and is answered after the capture was
// recorded, comes too late: the cancel fails with 312 CANCEL_UNAVAILABLE and
// the charge stays captured.
func TestVoidAfterCaptureFails(t *testing.T) {
	ctx := context.Background()
	f := newRulesFixture(t, payment.Config{})
	ch := f.authorized(t, 1000)
	cn, err := f.svc.Refunds.CreateCancel(ctx, f.caller, ch.StoreID, ch.ID, payment.NewCancel{})
	if err != nil {
		t.Fatal(err)
	}
	gate, entered := make(chan struct{}), make(chan struct{})
	f.acq.mu.Lock()
	f.acq.voidGate, f.acq.voidEntered = gate, entered
	f.acq.mu.Unlock()

	voided := make(chan error, 1)
	go func() {
		_, err := f.svc.Work.ProcessPending(ctx, 10) // finds the cancel; its void waits at the acquirer
		voided <- err
	}()
	<-entered
	// Meanwhile the merchant captures, and the capture completes: the
	// charge's id is older than the cancel's, so a pass of one takes it.
	if err := f.svc.Charging.CaptureCharge(ctx, f.caller, ch.StoreID, ch.ID, payment.ChargeCapture{}); err != nil {
		t.Fatal(err)
	}
	if n, err := f.svc.Work.ProcessPending(ctx, 1); n != 1 || err != nil {
		t.Fatalf("capture pass: %d, %v", n, err)
	}
	if got := f.charge(t, ch.ID); got.Status != payment.ChargeSuccessful {
		t.Fatalf("charge after capture: %s, want successful", got.Status)
	}
	close(gate)
	if err := <-voided; err != nil {
		t.Fatal(err)
	}

	got, err := f.svc.Refunds.Cancel(ctx, f.caller, ch.StoreID, ch.ID, cn.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != payment.OperationFailed || got.Error == nil || got.Error.Code != payment.ErrCancelUnavailable {
		t.Errorf("cancel after a capture: %s %+v, want failed with %d", got.Status, got.Error, payment.ErrCancelUnavailable)
	}
	if c := f.charge(t, ch.ID); c.Status != payment.ChargeSuccessful || charged(c) != 1000 {
		t.Errorf("charge after the late void: %s %d, want successful 1000", c.Status, charged(c))
	}
	f.pass(t, 0)
}

// TestOperationRetries: a refund or a cancel whose acquirer call fails is
// not tried again before its retry time (1 s, then 2 s), is tried again
// after it, and succeeds once the acquirer answers.
func TestOperationRetries(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name string
		op   string // the acquirer call that fails
		// start leaves the operation pending and returns its status.
		start func(t *testing.T, f *rulesFixture) (status func() payment.OperationStatus)
		after func(t *testing.T, f *rulesFixture)
	}{
		{name: "refund", op: "refund", start: func(t *testing.T, f *rulesFixture) func() payment.OperationStatus {
			ch := f.newCharge(t, 1000, true)
			f.settle(t)
			r, err := f.svc.Refunds.CreateRefund(ctx, f.caller, ch.StoreID, ch.ID, payment.NewRefund{Amount: 300, Currency: "JPY"})
			if err != nil {
				t.Fatal(err)
			}
			return func() payment.OperationStatus {
				got, err := f.svc.Refunds.Refund(ctx, f.caller, ch.StoreID, ch.ID, r.ID, 0)
				if err != nil {
					t.Fatal(err)
				}
				return got.Status
			}
		}},
		{name: "cancel", op: "void", start: func(t *testing.T, f *rulesFixture) func() payment.OperationStatus {
			ch := f.authorized(t, 1000)
			cn, err := f.svc.Refunds.CreateCancel(ctx, f.caller, ch.StoreID, ch.ID, payment.NewCancel{})
			if err != nil {
				t.Fatal(err)
			}
			return func() payment.OperationStatus {
				got, err := f.svc.Refunds.Cancel(ctx, f.caller, ch.StoreID, ch.ID, cn.ID, 0)
				if err != nil {
					t.Fatal(err)
				}
				if got.Status == payment.OperationSuccessful {
					if c := f.charge(t, ch.ID); c.Status != payment.ChargeCanceled {
						t.Errorf("charge %s after its cancel, want canceled", c.Status)
					}
				}
				return got.Status
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newRulesFixture(t, payment.Config{})
			status := tc.start(t, f)
			f.acq.failNext(tc.op, 2)
			step := func(advance time.Duration, wantFound int, want payment.OperationStatus) {
				t.Helper()
				f.clk.Advance(advance)
				f.pass(t, wantFound)
				if got := status(); got != want {
					t.Fatalf("%s at +%v: %s, want %s", tc.name, advance, got, want)
				}
			}
			step(0, 1, payment.OperationPending)                                // attempt 1 fails: next in 1 s
			step(0, 0, payment.OperationPending)                                // not before its time
			step(999*time.Millisecond, 0, payment.OperationPending)             //
			step(time.Millisecond, 1, payment.OperationPending)                 // attempt 2 fails: next in 2 s
			step(time.Second+999*time.Millisecond, 0, payment.OperationPending) //
			step(time.Millisecond, 1, payment.OperationSuccessful)              // attempt 3 answered
			step(time.Hour, 0, payment.OperationSuccessful)
			if n := f.acq.callsOf(tc.op); n != 3 {
				t.Errorf("acquirer asked %d times, want 3", n)
			}
		})
	}
}

// TestCaptureRetryStartsAfresh: a capture's retry delay counts the
// capture's own failed attempts. An authorisation that failed five times
// (so its next delay would have been 32 s) and then succeeded leaves a
// capture that, failing once, is retried after 1 s.
func TestCaptureRetryStartsAfresh(t *testing.T) {
	ctx := context.Background()
	f := newRulesFixture(t, payment.Config{})
	f.acq.failNext("authorize", 5)
	ch := f.newCharge(t, 1000, false)
	// Attempts at 0, 1, 3, 7 and 15 s fail; the one at 31 s succeeds.
	for i := 0; f.charge(t, ch.ID).Status == payment.ChargePending; i++ {
		if i > 100 {
			t.Fatal("the authorisation never completed")
		}
		_, _ = f.svc.Work.ProcessPending(ctx, 10)
		f.clk.Advance(time.Second)
	}
	if got := f.charge(t, ch.ID); got.Status != payment.ChargeAuthorized || f.acq.callsOf("authorize") != 6 {
		t.Fatalf("charge %s after %d authorisation calls, want authorized after 6", got.Status, f.acq.callsOf("authorize"))
	}

	f.acq.failNext("capture", 1)
	if err := f.svc.Charging.CaptureCharge(ctx, f.caller, ch.StoreID, ch.ID, payment.ChargeCapture{}); err != nil {
		t.Fatal(err)
	}
	f.pass(t, 1) // the capture's first attempt fails
	f.pass(t, 0)
	f.clk.Advance(time.Second)
	f.pass(t, 1) // retried 1 s later, and answered
	if got := f.charge(t, ch.ID); got.Status != payment.ChargeSuccessful {
		t.Errorf("charge %s, want successful", got.Status)
	}
	if n := f.acq.callsOf("capture"); n != 2 {
		t.Errorf("capture asked %d times, want 2", n)
	}
}

// TestRevocationBeatsRacingLookup: a token revoked through this instance
// fails here at once, both when its cache entry was fresh and when a lookup
// that read it just before the revocation stores its (stale) answer after
// it.
func TestRevocationBeatsRacingLookup(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name string
		// revoke revokes the token, racing it with whatever the case
		// arranges.
		revoke func(t *testing.T, f *rulesFixture, auth string, id uuid.UUID)
	}{
		{"cached entry", func(t *testing.T, f *rulesFixture, auth string, id uuid.UUID) {
			if _, err := f.svc.Access.Authenticate(ctx, auth, ""); err != nil {
				t.Fatal(err)
			}
			if err := f.svc.Access.RevokeAppToken(ctx, f.caller, f.demo.StoreID, id); err != nil {
				t.Fatal(err)
			}
		}},
		{"racing lookup", func(t *testing.T, f *rulesFixture, auth string, id uuid.UUID) {
			read, release := make(chan struct{}), make(chan struct{})
			var once sync.Once
			f.store.mu.Lock()
			f.store.onAppToken = func(got uuid.UUID) {
				if got != id {
					return
				}
				once.Do(func() {
					close(read)
					<-release
				})
			}
			f.store.mu.Unlock()
			looked := make(chan struct{})
			go func() {
				defer close(looked)
				// Started before the revocation: either answer is fine
				// for this request itself.
				_, _ = f.svc.Access.Authenticate(ctx, auth, "")
			}()
			<-read // the lookup has read the token, still active
			if err := f.svc.Access.RevokeAppToken(ctx, f.caller, f.demo.StoreID, id); err != nil {
				t.Fatal(err)
			}
			close(release) // now it stores what it read
			<-looked
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newRulesFixture(t, payment.Config{AuthCacheTTL: time.Minute})
			tok, err := f.svc.Access.IssueStoreAppToken(ctx, f.demo.StoreID, payment.NewAppToken{Mode: payment.ModeTest})
			if err != nil {
				t.Fatal(err)
			}
			auth := "Bearer " + tok.Secret + "." + tok.JWT
			tc.revoke(t, f, auth, tok.ID)
			_, err = f.svc.Access.Authenticate(ctx, auth, "")
			var perr *payment.Error
			if !errors.As(err, &perr) || perr.Code != payment.CodeInvalidAppToken {
				t.Errorf("a token revoked on this instance authenticates: %v, want INVALID_APP_TOKEN", err)
			}
		})
	}
}
