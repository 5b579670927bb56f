package payment_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
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

// The work queue seen from the domain: every test here runs services over a
// real SQLite file, with a hand-moved clock and an acquirer that records
// each call.

// acquirer is the sandbox acquirer with a record of every call per
// operation and the means to fail, hold or slow calls.
type acquirer struct {
	sandbox.Processor
	mu    sync.Mutex
	calls map[string]map[uuid.UUID]int // operation → operation id → calls
	// by counts the calls each worker made (see worker).
	by          map[string]int
	fail        map[string]int // operation → next calls that fail
	hold        map[uuid.UUID]chan struct{}
	entered     map[uuid.UUID]chan struct{}
	inFlight    int
	maxInFlight int
	latency     time.Duration
}

func newAcquirer() *acquirer {
	return &acquirer{
		calls: map[string]map[uuid.UUID]int{}, by: map[string]int{}, fail: map[string]int{},
		hold: map[uuid.UUID]chan struct{}{}, entered: map[uuid.UUID]chan struct{}{},
	}
}

// worker is the acquirer as one service sees it: the calls it makes are
// counted under its name.
type worker struct {
	*acquirer
	name string
}

func (w worker) Authorize(ctx context.Context, req payment.AuthorizeRequest) (payment.ProcessorResult, error) {
	if err := w.call(ctx, "authorize", req.ChargeID); err != nil {
		return payment.ProcessorResult{}, err
	}
	return w.Processor.Authorize(ctx, req)
}

func (w worker) Capture(ctx context.Context, id uuid.UUID, card payment.CardDetails, amount int64, currency string) (payment.ProcessorResult, error) {
	if err := w.call(ctx, "capture", id); err != nil {
		return payment.ProcessorResult{}, err
	}
	return w.Processor.Capture(ctx, id, card, amount, currency)
}

func (w worker) Refund(ctx context.Context, id uuid.UUID, card payment.CardDetails, amount int64, currency string) (payment.ProcessorResult, error) {
	if err := w.call(ctx, "refund", id); err != nil {
		return payment.ProcessorResult{}, err
	}
	return w.Processor.Refund(ctx, id, card, amount, currency)
}

func (w worker) Void(ctx context.Context, id uuid.UUID, card payment.CardDetails) (payment.ProcessorResult, error) {
	if err := w.call(ctx, "void", id); err != nil {
		return payment.ProcessorResult{}, err
	}
	return w.Processor.Void(ctx, id, card)
}

// call records a call and then fails it, holds it or lets it take the
// acquirer's latency, as the test arranged.
func (w worker) call(ctx context.Context, op string, id uuid.UUID) error {
	a := w.acquirer
	a.mu.Lock()
	if a.calls[op] == nil {
		a.calls[op] = map[uuid.UUID]int{}
	}
	a.calls[op][id]++
	a.by[w.name]++
	a.inFlight++
	a.maxInFlight = max(a.maxInFlight, a.inFlight)
	failing := a.fail[op] > 0
	if failing {
		a.fail[op]--
	}
	hold, entered, latency := a.hold[id], a.entered[id], a.latency
	delete(a.entered, id)
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		a.inFlight--
		a.mu.Unlock()
	}()
	if failing {
		return errors.New(op + ": acquirer unreachable")
	}
	if entered != nil {
		close(entered)
	}
	if hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if latency > 0 {
		select {
		case <-time.After(latency):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// holdCalls holds every call for id at the acquirer until the returned
// release is called; entered is closed when the first one arrives.
func (a *acquirer) holdCalls(id uuid.UUID) (entered <-chan struct{}, release func()) {
	gate, in := make(chan struct{}), make(chan struct{})
	a.mu.Lock()
	a.hold[id], a.entered[id] = gate, in
	a.mu.Unlock()
	var once sync.Once
	return in, func() { once.Do(func() { close(gate) }) }
}

func (a *acquirer) failNext(op string, n int) {
	a.mu.Lock()
	a.fail[op] = n
	a.mu.Unlock()
}

func (a *acquirer) callsOf(op string, id uuid.UUID) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.calls[op][id]
}

// queue is a SQLite file, the clock its services share, and the acquirer
// they all call; the services share the fixture's keys.
type queue struct {
	path string
	clk  *kessaitest.Clock
	acq  *acquirer
	// auth is the demo store's server credential.
	auth string
}

func newQueue(t *testing.T) *queue {
	t.Helper()
	return &queue{
		path: filepath.Join(t.TempDir(), sqlite.FileName),
		clk:  kessaitest.NewClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)),
		acq:  newAcquirer(),
	}
}

// instance is one gateway instance: a service over its own handle on the
// queue's database, as a separate process would have.
type instance struct {
	db     *sqlite.DB
	svc    *services.Set
	caller *payment.Caller
}

func (q *queue) instance(t *testing.T, name string, cfg payment.Config) *instance {
	t.Helper()
	cfg.Processor = worker{q.acq, name}
	st := servicetest.New(t, servicetest.Options{Path: q.path, Clock: q.clk, Config: cfg})
	in := &instance{db: st.DB, svc: st.Service}
	if q.auth == "" {
		demo := st.SeedDemo(t)
		q.auth, in.caller = demo.Auth, demo.Caller
		return in
	}
	var err error
	if in.caller, err = in.svc.Access.Authenticate(context.Background(), q.auth, ""); err != nil {
		t.Fatal(err)
	}
	return in
}

// run runs the instance's worker until the test ends. The interval is long:
// whatever the worker does in a test, it does because it was woken or
// because an item finished, not because it polled.
func (in *instance) run(t *testing.T, interval time.Duration) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		in.svc.Work.RunWorker(ctx, interval, slog.New(slog.DiscardHandler))
	}()
	stop = func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("RunWorker did not return within 10 s of its context ending")
		}
	}
	t.Cleanup(stop)
	return stop
}

func (in *instance) newCharge(t testing.TB, capture bool) *payment.Charge {
	t.Helper()
	ctx := context.Background()
	tok, err := in.svc.Tokens.CreateToken(ctx, in.caller, payment.NewToken{PaymentType: "card", Type: payment.OneTime, Email: "q@example.com",
		Card: &payment.CardInput{Cardholder: "TARO YAMADA", Number: "4000020000000000", ExpMonth: 12, ExpYear: 2030, CVV: "123"}})
	if err != nil {
		t.Fatal(err)
	}
	ch, err := in.svc.Charging.CreateCharge(ctx, in.caller, payment.NewCharge{TokenID: tok.ID, Amount: 1000, Currency: "JPY", Capture: &capture})
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

func (in *instance) charge(t testing.TB, id uuid.UUID) *payment.Charge {
	t.Helper()
	ch, err := in.svc.Charging.Charge(context.Background(), in.caller, uuid.Nil, id, 0)
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// item is the queued item of that kind for id, nil when there is none.
func (in *instance) item(t testing.TB, kind payment.WorkKind, id uuid.UUID) *payment.Work {
	t.Helper()
	var w *payment.Work
	err := in.db.View(context.Background(), func(tx payment.Tx) error {
		var err error
		w, err = tx.Work(context.Background(), kind, id)
		if payment.IsNotFound(err) {
			w, err = nil, nil
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func (in *instance) pass(t *testing.T, wantClaimed int) {
	t.Helper()
	n, _ := in.svc.Work.ProcessPending(context.Background(), 100)
	if n != wantClaimed {
		t.Fatalf("a worker pass claimed %d items, want %d", n, wantClaimed)
	}
}

// TestWorkRetriesPerKind: for every kind of work, a failed attempt is
// counted on the item itself with its error, and the item is held back for
// the kind's back-off (1 s, then 2 s), not tried again before, tried again
// after, and removed once the acquirer answers. A capture counts from zero
// whatever its authorisation went through.
func TestWorkRetriesPerKind(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		kind payment.WorkKind
		op   string // the acquirer call that fails
		// start leaves an item of the kind queued and returns the id it
		// is for and a check of the object's final state.
		start func(t *testing.T, in *instance, q *queue) (uuid.UUID, func() bool)
	}{
		{payment.WorkAuthorize, "authorize", func(t *testing.T, in *instance, q *queue) (uuid.UUID, func() bool) {
			ch := in.newCharge(t, true)
			return ch.ID, func() bool { return in.charge(t, ch.ID).Status == payment.ChargeSuccessful }
		}},
		{payment.WorkCapture, "capture", func(t *testing.T, in *instance, q *queue) (uuid.UUID, func() bool) {
			// The authorisation fails three times first.
			q.acq.failNext("authorize", 3)
			ch := in.newCharge(t, false)
			for range 3 {
				in.pass(t, 1)
				q.clk.Advance(10 * time.Second)
			}
			in.pass(t, 1)
			if got := in.charge(t, ch.ID); got.Status != payment.ChargeAuthorized {
				t.Fatalf("charge %s, want authorized", got.Status)
			}
			if err := in.svc.Charging.CaptureCharge(ctx, in.caller, ch.StoreID, ch.ID, payment.ChargeCapture{}); err != nil {
				t.Fatal(err)
			}
			return ch.ID, func() bool { return in.charge(t, ch.ID).Status == payment.ChargeSuccessful }
		}},
		{payment.WorkRefund, "refund", func(t *testing.T, in *instance, q *queue) (uuid.UUID, func() bool) {
			ch := in.newCharge(t, true)
			in.pass(t, 1)
			r, err := in.svc.Refunds.CreateRefund(ctx, in.caller, ch.StoreID, ch.ID, payment.NewRefund{Amount: 300, Currency: "JPY"})
			if err != nil {
				t.Fatal(err)
			}
			return r.ID, func() bool {
				got, err := in.svc.Refunds.Refund(ctx, in.caller, ch.StoreID, ch.ID, r.ID, 0)
				return err == nil && got.Status == payment.OperationSuccessful
			}
		}},
		{payment.WorkCancel, "void", func(t *testing.T, in *instance, q *queue) (uuid.UUID, func() bool) {
			ch := in.newCharge(t, false)
			in.pass(t, 1)
			cn, err := in.svc.Refunds.CreateCancel(ctx, in.caller, ch.StoreID, ch.ID, payment.NewCancel{})
			if err != nil {
				t.Fatal(err)
			}
			return cn.ID, func() bool {
				got, err := in.svc.Refunds.Cancel(ctx, in.caller, ch.StoreID, ch.ID, cn.ID, 0)
				return err == nil && got.Status == payment.OperationSuccessful &&
					in.charge(t, ch.ID).Status == payment.ChargeCanceled
			}
		}},
	}
	for _, tc := range cases {
		t.Run(string(tc.kind), func(t *testing.T) {
			q := newQueue(t)
			in := q.instance(t, "w", payment.Config{})
			id, done := tc.start(t, in, q)
			start := q.clk.Now()
			if w := in.item(t, tc.kind, id); w == nil || w.Attempts != 0 || w.LastError != "" {
				t.Fatalf("queued %s item: %+v, want one with no attempts", tc.kind, w)
			}
			q.acq.failNext(tc.op, 2)
			steps := []struct {
				at       time.Duration // since start
				claimed  int
				attempts int // of the item afterwards; -1: gone
				due      time.Duration
			}{
				{0, 1, 1, time.Second},                                    // fails: next in 1 s
				{999 * time.Millisecond, 0, 1, time.Second},               // not before its time
				{time.Second, 1, 2, 3 * time.Second},                      // fails: next in 2 s
				{3*time.Second - time.Millisecond, 0, 2, 3 * time.Second}, //
				{3 * time.Second, 1, -1, 0},                               // answered: done
			}
			for _, st := range steps {
				q.clk.Set(start.Add(st.at))
				in.pass(t, st.claimed)
				w := in.item(t, tc.kind, id)
				switch {
				case st.attempts < 0 && w != nil:
					t.Fatalf("at +%v the item is still queued: %+v", st.at, *w)
				case st.attempts < 0:
				case w == nil:
					t.Fatalf("at +%v the item is gone, want %d attempts", st.at, st.attempts)
				case w.Attempts != st.attempts || !w.Due.Equal(start.Add(st.due)) || w.ClaimedBy != "":
					t.Fatalf("at +%v the item is %+v, want %d attempts, due at +%v, unclaimed", st.at, *w, st.attempts, st.due)
				case w.LastError != tc.op+": acquirer unreachable":
					t.Fatalf("at +%v the item's last error is %q", st.at, w.LastError)
				}
			}
			if !done() {
				t.Error("the operation did not reach its final state")
			}
			if n := q.acq.callsOf(tc.op, id); n != 3 {
				t.Errorf("the acquirer was asked %d times, want 3", n)
			}
		})
	}
}

// TestWorkForFinishedObject: an item whose object no longer waits for it (a
// second run of an item another worker finished) is removed without asking
// the acquirer.
func TestWorkForFinishedObject(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		kind payment.WorkKind
		// finished returns the id of an object the kind's work is done for.
		finished func(t *testing.T, in *instance) uuid.UUID
	}{
		{payment.WorkAuthorize, func(t *testing.T, in *instance) uuid.UUID {
			ch := in.newCharge(t, true)
			in.pass(t, 1)
			return ch.ID
		}},
		{payment.WorkCapture, func(t *testing.T, in *instance) uuid.UUID {
			ch := in.newCharge(t, false)
			in.pass(t, 1)
			if err := in.svc.Charging.CaptureCharge(ctx, in.caller, ch.StoreID, ch.ID, payment.ChargeCapture{}); err != nil {
				t.Fatal(err)
			}
			in.pass(t, 1)
			return ch.ID
		}},
		{payment.WorkRefund, func(t *testing.T, in *instance) uuid.UUID {
			ch := in.newCharge(t, true)
			in.pass(t, 1)
			r, err := in.svc.Refunds.CreateRefund(ctx, in.caller, ch.StoreID, ch.ID, payment.NewRefund{Amount: 100, Currency: "JPY"})
			if err != nil {
				t.Fatal(err)
			}
			in.pass(t, 1)
			return r.ID
		}},
		{payment.WorkCancel, func(t *testing.T, in *instance) uuid.UUID {
			ch := in.newCharge(t, false)
			in.pass(t, 1)
			cn, err := in.svc.Refunds.CreateCancel(ctx, in.caller, ch.StoreID, ch.ID, payment.NewCancel{})
			if err != nil {
				t.Fatal(err)
			}
			in.pass(t, 1)
			return cn.ID
		}},
	}
	ops := map[payment.WorkKind]string{payment.WorkAuthorize: "authorize", payment.WorkCapture: "capture",
		payment.WorkRefund: "refund", payment.WorkCancel: "void"}
	for _, tc := range cases {
		t.Run(string(tc.kind), func(t *testing.T) {
			q := newQueue(t)
			in := q.instance(t, "w", payment.Config{})
			id := tc.finished(t, in)
			calls := q.acq.callsOf(ops[tc.kind], id)
			err := in.db.Update(ctx, func(tx payment.Tx) error { return tx.InsertWork(ctx, tc.kind, id, q.clk.Now()) })
			if err != nil {
				t.Fatal(err)
			}
			in.pass(t, 1)
			if w := in.item(t, tc.kind, id); w != nil {
				t.Errorf("the item is still queued: %+v", *w)
			}
			if n := q.acq.callsOf(ops[tc.kind], id); n != calls {
				t.Errorf("the acquirer was asked %d more times, want none", n-calls)
			}
		})
	}
}

// TestWorkLeaseExpiry: the items a crashed instance had claimed wait for
// their lease to end and are then carried out by another instance, once.
func TestWorkLeaseExpiry(t *testing.T) {
	q := newQueue(t)
	a := q.instance(t, "a", payment.Config{WorkLease: 30 * time.Second})
	ch := a.newCharge(t, true)
	// The crashed instance: it claimed the item and was never heard of
	// again (not completed, not retried, not given back).
	now := q.clk.Now()
	err := a.db.Update(context.Background(), func(tx payment.Tx) error {
		got, err := tx.ClaimWork(context.Background(), "crashed", now, now.Add(30*time.Second), 10)
		if err == nil && len(got) != 1 {
			err = fmt.Errorf("claimed %d items, want 1", len(got))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	b := q.instance(t, "b", payment.Config{WorkLease: 30 * time.Second})
	b.pass(t, 0)
	q.clk.Advance(30*time.Second - time.Millisecond)
	b.pass(t, 0)
	q.clk.Advance(time.Millisecond)
	b.pass(t, 1)
	if got := b.charge(t, ch.ID); got.Status != payment.ChargeSuccessful {
		t.Errorf("charge %s after the lease ended, want successful", got.Status)
	}
	if w := b.item(t, payment.WorkAuthorize, ch.ID); w != nil {
		t.Errorf("the item is still queued: %+v", *w)
	}
	if n := q.acq.callsOf("authorize", ch.ID); n != 1 {
		t.Errorf("the acquirer was asked %d times, want 1", n)
	}
}

// TestWorkLeaseRenewed: a live worker renews the lease of a call that takes
// longer than the lease, so another instance does not take it over (and ask
// the acquirer a second time) while it is under way.
func TestWorkLeaseRenewed(t *testing.T) {
	q := newQueue(t)
	const lease = 60 * time.Millisecond // renewed every 20 ms
	a := q.instance(t, "a", payment.Config{WorkLease: lease})
	b := q.instance(t, "b", payment.Config{WorkLease: lease})
	ch := a.newCharge(t, true)
	entered, release := q.acq.holdCalls(ch.ID)
	defer release()
	a.run(t, time.Hour)
	<-entered
	// Far past the lease the claim gave; a's renewals move it on. Twice:
	// a claim of a's own, woken by the charge's creation late, would also
	// move it once (and not start the item again), never twice.
	for range 2 {
		q.clk.Advance(time.Hour)
		renewed := q.clk.Now().Add(lease)
		kessaitest.WaitFor(t, 5*time.Second, "the lease renewed", func() bool {
			w := a.item(t, payment.WorkAuthorize, ch.ID)
			return w != nil && !w.LeaseUntil.Before(renewed)
		})
	}
	b.pass(t, 0)
	release()
	kessaitest.WaitFor(t, 5*time.Second, "the charge done", func() bool {
		return a.charge(t, ch.ID).Status == payment.ChargeSuccessful
	})
	if n := q.acq.callsOf("authorize", ch.ID); n != 1 {
		t.Errorf("the acquirer was asked %d times, want 1", n)
	}
}

// TestWorkerRunsItsOwnItemOnce: an item whose lease lapsed while its call
// was still under way (the renewals did not come in time) and that the same
// worker then claims again is not started a second time beside the first.
func TestWorkerRunsItsOwnItemOnce(t *testing.T) {
	q := newQueue(t)
	// An hour of lease is renewed every 20 minutes: not within this test.
	in := q.instance(t, "w", payment.Config{WorkLease: time.Hour})
	ch := in.newCharge(t, true)
	entered, release := q.acq.holdCalls(ch.ID)
	defer release()
	in.run(t, time.Hour)
	<-entered
	q.clk.Advance(2 * time.Hour)
	// Another charge wakes the worker, whose claim takes both.
	other := in.newCharge(t, true)
	kessaitest.WaitFor(t, 10*time.Second, "the other charge done", func() bool {
		return in.charge(t, other.ID).Status == payment.ChargeSuccessful
	})
	if w := in.item(t, payment.WorkAuthorize, ch.ID); w == nil || !w.LeaseUntil.After(q.clk.Now()) {
		t.Fatalf("the held item after the worker's claim: %+v, want it claimed again", w)
	}
	release()
	kessaitest.WaitFor(t, 10*time.Second, "the held charge done", func() bool {
		return in.charge(t, ch.ID).Status == payment.ChargeSuccessful
	})
	if n := q.acq.callsOf("authorize", ch.ID); n != 1 {
		t.Errorf("the acquirer was asked %d times, want once", n)
	}
}

// TestWorkerStopsCleanly: when its context ends, a worker with a call in
// flight abandons the call, gives its item back unchanged (no attempt
// counted) so that another instance takes it at once rather than when the
// lease ends, and returns leaving no goroutine behind.
func TestWorkerStopsCleanly(t *testing.T) {
	kessaitest.CheckGoroutines(t)
	q := newQueue(t)
	a := q.instance(t, "a", payment.Config{})
	ch := a.newCharge(t, true)
	entered, release := q.acq.holdCalls(ch.ID)
	defer release()
	stop := a.run(t, time.Hour)
	<-entered
	stop()
	w := a.item(t, payment.WorkAuthorize, ch.ID)
	if w == nil || w.ClaimedBy != "" || w.Attempts != 0 || w.LastError != "" {
		t.Fatalf("the item after the worker stopped: %+v, want it given back with no attempt", w)
	}
	b := q.instance(t, "b", payment.Config{})
	release()
	b.pass(t, 1) // at the same instant: the lease did not have to end
	if got := b.charge(t, ch.ID); got.Status != payment.ChargeSuccessful {
		t.Errorf("charge %s, want successful", got.Status)
	}
}

// TestTwoWorkersOneDatabase: two instances, each with its own handle on one
// database file and its own worker, drain a queue of a few hundred charges
// made through both, claiming from it at the same time; then more charges
// arrive while they run. Every charge reaches the acquirer exactly once,
// both workers take part, and neither has more calls in flight than it may.
func TestTwoWorkersOneDatabase(t *testing.T) {
	const queued, arriving, slots = 300, 60, 8
	q := newQueue(t)
	q.acq.latency = 2 * time.Millisecond
	cfg := payment.Config{WorkConcurrency: slots}
	instances := []*instance{q.instance(t, "a", cfg), q.instance(t, "b", cfg)}
	var ids []uuid.UUID
	for i := range queued {
		ids = append(ids, instances[i%2].newCharge(t, true).ID)
	}
	for _, in := range instances {
		in.run(t, time.Hour)
	}
	for i := range arriving {
		ids = append(ids, instances[i%2].newCharge(t, true).ID)
	}
	next := 0
	kessaitest.WaitFor(t, 60*time.Second, "every charge done", func() bool {
		for ; next < len(ids); next++ {
			if instances[0].charge(t, ids[next]).Status != payment.ChargeSuccessful {
				return false
			}
		}
		return true
	})
	q.acq.mu.Lock()
	defer q.acq.mu.Unlock()
	for _, id := range ids {
		if n := q.acq.calls["authorize"][id]; n != 1 {
			t.Errorf("charge %s reached the acquirer %d times, want once", id, n)
		}
	}
	if n := len(q.acq.calls["authorize"]); n != len(ids) {
		t.Errorf("the acquirer authorised %d charges, want %d", n, len(ids))
	}
	if q.acq.by["a"] == 0 || q.acq.by["b"] == 0 {
		t.Errorf("calls per worker: %v; want both to take part, or the test proves nothing", q.acq.by)
	}
	if q.acq.maxInFlight > 2*slots {
		t.Errorf("%d calls in flight at once, want at most %d per worker", q.acq.maxInFlight, slots)
	}
	for _, id := range ids {
		if w := instances[1].item(t, payment.WorkAuthorize, id); w != nil {
			t.Errorf("charge %s is done but its item is still queued: %+v", id, *w)
		}
	}
}

// TestSlowCallDoesNotStallOthers: while one acquirer call hangs, the worker
// keeps its other slots busy: charges made after it started all finish
// meanwhile, and never are more calls in flight than the worker's slots.
func TestSlowCallDoesNotStallOthers(t *testing.T) {
	const slots, others = 4, 40
	q := newQueue(t)
	// Slower than charges are made, so that work queues up behind the
	// three free slots.
	q.acq.latency = 50 * time.Millisecond
	in := q.instance(t, "w", payment.Config{WorkConcurrency: slots})
	slow := in.newCharge(t, true)
	entered, release := q.acq.holdCalls(slow.ID)
	defer release()
	in.run(t, time.Hour)
	<-entered
	var ids []uuid.UUID
	for range others {
		ids = append(ids, in.newCharge(t, true).ID)
	}
	next := 0
	kessaitest.WaitFor(t, 30*time.Second, "the other charges done while one call hangs", func() bool {
		for ; next < len(ids); next++ {
			if in.charge(t, ids[next]).Status != payment.ChargeSuccessful {
				return false
			}
		}
		return true
	})
	if got := in.charge(t, slow.ID); got.Status != payment.ChargePending {
		t.Fatalf("the held charge is %s, want still pending", got.Status)
	}
	release()
	kessaitest.WaitFor(t, 10*time.Second, "the held charge done", func() bool {
		return in.charge(t, slow.ID).Status == payment.ChargeSuccessful
	})
	q.acq.mu.Lock()
	defer q.acq.mu.Unlock()
	if q.acq.maxInFlight > slots {
		t.Errorf("%d calls in flight at once, want at most %d", q.acq.maxInFlight, slots)
	}
	if q.acq.maxInFlight < 2 {
		t.Errorf("at most %d call in flight: the worker ran one at a time", q.acq.maxInFlight)
	}
}
