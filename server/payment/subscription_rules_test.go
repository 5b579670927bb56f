package payment_test

import (
	"context"
	"errors"
	"path"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/kessaitest/servicetest"
	"github.com/kessai/kessai/server/payment"
)

func ptr[T any](v T) *T { return &v }

func dueDates(pays []*payment.ScheduledPayment) []string {
	out := make([]string, len(pays))
	for i, p := range pays {
		out[i] = p.DueDate.String()
	}
	return out
}

func sameStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestSubscriptionSuspendAndResume(t *testing.T) {
	ctx := context.Background()
	// Monday 2027-03-01, 10:00 in Tokyo.
	w := newSubWorld(t, time.Date(2027, 3, 1, 1, 0, 0, 0, time.UTC), 1, servicetest.Options{})
	sub := w.subscribe(payment.NewSubscription{Period: "weekly"})
	w.days(14) // Mar 8, Mar 15 paid
	got, err := w.svc.Subscriptions.SuspendSubscription(ctx, w.demo.Caller, uuid.Nil, sub.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != payment.SubscriptionSuspended {
		t.Fatalf("suspended subscription is %s", got.Status)
	}
	w.days(20) // Mar 22, 29, Apr 5 pass uncharged; now Apr 4… Apr 4 + 0
	if n := len(w.charges(sub.ID)); n != 3 {
		t.Fatalf("%d charges while suspended, want the 3 from before", n)
	}
	// Apr 4 (a Sunday): resumes on the next due date from today, Apr 5.
	got, err = w.svc.Subscriptions.UnsuspendSubscription(ctx, w.demo.Caller, uuid.Nil, sub.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != payment.SubscriptionCurrent || got.NextPayment == nil || got.NextPayment.DueDate.String() != "2027-04-05" {
		t.Fatalf("resumed: %s, next %+v", got.Status, got.NextPayment)
	}
	w.days(8) // Apr 5, Apr 12
	want := []string{"2027-03-01", "2027-03-08", "2027-03-15", "2027-04-05", "2027-04-12", "2027-04-19"}
	if got := dueDates(w.payments(sub.ID)); !sameStrings(got, want) {
		t.Errorf("payments %v, want %v", got, want)
	}
	if n := len(w.charges(sub.ID)); n != 5 {
		t.Errorf("%d charges, want 5", n)
	}
	if ev := w.events(sub.ID); ev[payment.EventSubscriptionSuspended] != 1 {
		t.Errorf("events %v, want one suspension", ev)
	}

	// Suspended on the next payment: current until its day, which is not
	// charged.
	if _, err := w.svc.Subscriptions.SuspendSubscription(ctx, w.demo.Caller, uuid.Nil, sub.ID, payment.TerminateNextPayment); err != nil {
		t.Fatal(err)
	}
	if got := w.get(sub.ID); got.Status != payment.SubscriptionCurrent || got.NextPayment.TerminateWithStatus != payment.SubscriptionSuspended {
		t.Fatalf("after a suspension on the next payment: %s, next %+v", got.Status, got.NextPayment)
	}
	w.days(7) // Apr 19 arrives
	if got := w.get(sub.ID); got.Status != payment.SubscriptionSuspended {
		t.Errorf("on the due date the subscription is %s, want suspended", got.Status)
	}
	if n := len(w.charges(sub.ID)); n != 5 {
		t.Errorf("%d charges, want 5: the suspending payment is not charged", n)
	}
	// Resuming through PATCH status (the reference's way) works too.
	if _, err := w.svc.Subscriptions.UpdateSubscription(ctx, w.demo.Caller, uuid.Nil, sub.ID, payment.SubscriptionUpdate{Status: ptr(payment.SubscriptionUnpaid)}); err != nil {
		t.Fatal(err)
	}
	if got := w.get(sub.ID); got.Status != payment.SubscriptionCurrent || got.NextPayment.DueDate.String() != "2027-04-26" {
		t.Errorf("resumed by PATCH: %s, next %s", got.Status, got.NextPayment.DueDate)
	}
}

func TestSubscriptionPlansComplete(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		plan    payment.SubscriptionPlan
		initial *int64
		amounts []int64
	}{
		{"six cycles with an initial amount", payment.SubscriptionPlan{PlanType: payment.PlanFixedCycles, FixedCycles: 6}, ptr[int64](3000),
			[]int64{3000, 1000, 1000, 1000, 1000, 1000}},
		{"a total of 3,500 in payments of 1,000", payment.SubscriptionPlan{PlanType: payment.PlanFixedCycleAmount, FixedCycleAmount: 3500}, nil,
			[]int64{1000, 1000, 1000, 500}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newSubWorld(t, time.Date(2027, 1, 31, 1, 0, 0, 0, time.UTC), 1, servicetest.Options{})
			plan := tt.plan
			sub := w.subscribe(payment.NewSubscription{
				Period: "monthly", InitialAmount: tt.initial, Plan: &plan,
				Schedule: payment.ScheduleSettings{PreserveEndOfMonth: true},
			})
			if left, ok := w.get(sub.ID).CyclesLeft(); !ok || left != len(tt.amounts)-1 {
				t.Errorf("after the first payment %d cycles left (%v), want %d", left, ok, len(tt.amounts)-1)
			}
			w.days(400)
			var got []int64
			for _, ch := range w.charges(sub.ID) {
				if ch.Status == payment.ChargeSuccessful {
					got = append(got, ch.RequestedAmount)
				}
			}
			if len(got) != len(tt.amounts) {
				t.Fatalf("charged %v, want %v", got, tt.amounts)
			}
			for i := range got {
				if got[i] != tt.amounts[i] {
					t.Errorf("charged %v, want %v", got, tt.amounts)
				}
			}
			end := w.get(sub.ID)
			if end.Status != payment.SubscriptionCompleted || end.NextPayment != nil {
				t.Errorf("after the plan: %s, next %+v", end.Status, end.NextPayment)
			}
			if left, _ := end.CyclesLeft(); left != 0 {
				t.Errorf("cycles left %d after completion", left)
			}
			if amount, _ := end.AmountLeft(); amount != 0 {
				t.Errorf("amount left %d after completion", amount)
			}
			pays := w.payments(sub.ID)
			if last := pays[len(pays)-1]; !last.IsLastPayment || !last.IsPaid {
				t.Errorf("last payment %+v", last)
			}
			if ev := w.events(sub.ID); ev[payment.EventSubscriptionCompleted] != 1 || ev[payment.EventSubscriptionPayment] != len(tt.amounts) {
				t.Errorf("events %v", ev)
			}
		})
	}
}

func TestSubscriptionCancel(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, mode := range []string{payment.TerminateImmediately, payment.TerminateNextPayment} {
		t.Run(mode, func(t *testing.T) {
			w := newSubWorld(t, time.Date(2027, 5, 1, 1, 0, 0, 0, time.UTC), 1, servicetest.Options{})
			sub := w.subscribe(payment.NewSubscription{Period: "monthly"})
			w.days(40) // Jun 1 paid; now Jun 10
			if err := w.svc.Subscriptions.CancelSubscription(ctx, w.demo.Caller, uuid.Nil, sub.ID, mode); err != nil {
				t.Fatal(err)
			}
			want := payment.SubscriptionCanceled
			if mode == payment.TerminateNextPayment {
				want = payment.SubscriptionCurrent
			}
			if got := w.get(sub.ID).Status; got != want {
				t.Errorf("after the cancel: %s, want %s", got, want)
			}
			w.days(90)
			if got := w.get(sub.ID).Status; got != payment.SubscriptionCanceled {
				t.Errorf("90 days later: %s", got)
			}
			if n := len(w.charges(sub.ID)); n != 2 {
				t.Errorf("%d charges, want the 2 before the cancel", n)
			}
			if ev := w.events(sub.ID); ev[payment.EventSubscriptionCanceled] != 1 {
				t.Errorf("events %v, want one cancellation", ev)
			}
			err := w.svc.Subscriptions.CancelSubscription(ctx, w.demo.Caller, uuid.Nil, sub.ID, "")
			if payment.ErrorCode(err) != payment.CodeCannotChangeCanceled {
				t.Errorf("canceling again: %v", err)
			}
		})
	}
}

// TestSubscriptionTwoSchedulers: two gateway instances on one database,
// both running their workers at every step, charge every payment once.
func TestSubscriptionTwoSchedulers(t *testing.T) {
	t.Parallel()
	w := newSubWorld(t, time.Date(2027, 1, 1, 1, 0, 0, 0, time.UTC), 2, servicetest.Options{})
	var subs []*payment.Subscription
	for i := range 12 {
		period := []string{"daily", "weekly", "monthly"}[i%3]
		subs = append(subs, w.subscribe(payment.NewSubscription{Period: period}))
	}
	w.days(45)
	for _, sub := range subs {
		seen := map[uuid.UUID]int{}
		for _, ch := range w.charges(sub.ID) {
			seen[ch.PaymentID]++
		}
		for id, n := range seen {
			if n != 1 {
				t.Errorf("%s payment %s charged %d times", sub.Period, id, n)
			}
		}
		want := map[string]int{"daily": 46, "weekly": 7, "monthly": 2}[sub.Period]
		if len(seen) != want {
			t.Errorf("%s: %d payments charged, want %d", sub.Period, len(seen), want)
		}
	}
}

// TestSubscriptionPaymentChargedOnceAfterACrash: a worker that claimed a
// due payment and died holds it only until its lease ends; another then
// charges it. An item run again for a payment already charged, or whose
// charge is still under way, charges nothing.
func TestSubscriptionPaymentChargedOnceAfterACrash(t *testing.T) {
	ctx := context.Background()
	w := newSubWorld(t, time.Date(2027, 1, 1, 1, 0, 0, 0, time.UTC), 1, servicetest.Options{})
	start := payment.Date{Year: 2027, Month: 1, Day: 3}
	sub := w.subscribe(payment.NewSubscription{Period: "monthly", Schedule: payment.ScheduleSettings{StartOn: &start}})
	if got := w.get(sub.ID); got.Status != payment.SubscriptionCurrent || len(w.charges(sub.ID)) != 0 {
		t.Fatalf("a subscription starting later: %s with %d charges", got.Status, len(w.charges(sub.ID)))
	}
	w.days(2)                            // Jan 3, 10:00 in Tokyo: January is charged
	w.clock.Advance(30 * 24 * time.Hour) // Feb 2: nothing due yet
	w.run()
	// Feb 3: due, and claimed by a worker that then dies.
	w.clock.Advance(24 * time.Hour)
	now := w.clock.Now()
	err := w.stacks[0].DB.Update(ctx, func(tx payment.Tx) error {
		claimed, err := tx.ClaimWork(ctx, "crashed-worker", now, now.Add(10*time.Second), 10)
		if len(claimed) != 1 || claimed[0].Kind != payment.WorkSubscriptionPayment {
			return errors.Join(err, errors.New("the due payment was not claimed"))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	w.run()
	if n := len(w.charges(sub.ID)); n != 1 {
		t.Fatalf("%d charges while the dead worker's lease holds, want 1 (January's)", n)
	}
	w.clock.Advance(11 * time.Second)
	w.run()
	if n := len(w.charges(sub.ID)); n != 2 {
		t.Fatalf("%d charges after the lease ended, want 2", n)
	}
	feb := w.payments(sub.ID)[1]
	if !feb.IsPaid {
		t.Fatalf("February not paid: %+v", feb)
	}
	// The same item queued again (a duplicate delivery of work) finds it
	// paid.
	if err := w.stacks[0].DB.Update(ctx, func(tx payment.Tx) error {
		return tx.InsertWork(ctx, payment.WorkSubscriptionPayment, feb.ID, now)
	}); err != nil {
		t.Fatal(err)
	}
	w.run()
	if n := len(w.charges(sub.ID)); n != 2 {
		t.Errorf("%d charges after the item ran again, want 2", n)
	}
}

// TestSubscriptionItemDuringACharge: the item of a payment whose charge is
// still with the acquirer makes no second charge.
func TestSubscriptionItemDuringACharge(t *testing.T) {
	ctx := context.Background()
	proc := &scripted{fail: map[string]int{}, calls: map[string]int{}}
	w := newSubWorld(t, time.Date(2027, 1, 1, 1, 0, 0, 0, time.UTC), 1, servicetest.Options{Processor: proc})
	proc.failNext("authorize", 1000)
	sub, err := w.svc.Subscriptions.CreateSubscription(ctx, w.demo.Caller, payment.NewSubscription{
		TokenID: w.token("4000020000000000", "a@example.com").ID, Amount: 1000, Currency: "JPY", Period: "monthly",
	})
	if err != nil {
		t.Fatal(err)
	}
	first := w.payments(sub.ID)[0]
	if err := w.stacks[0].DB.Update(ctx, func(tx payment.Tx) error {
		return tx.InsertWork(ctx, payment.WorkSubscriptionPayment, first.ID, w.clock.Now())
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.svc.Work.ProcessPending(ctx, 10); err == nil {
		t.Log("(the failing authorisation is retried later)")
	}
	if n := len(w.charges(sub.ID)); n != 1 {
		t.Errorf("%d charges, want 1: the first is still under way", n)
	}
	proc.failNext("authorize", 0)
	w.clock.Advance(time.Minute)
	w.run()
	if got := w.get(sub.ID); got.Status != payment.SubscriptionCurrent || len(w.charges(sub.ID)) != 1 {
		t.Errorf("after the acquirer answered: %s with %d charges", got.Status, len(w.charges(sub.ID)))
	}
}

func TestSubscriptionFirstCharge(t *testing.T) {
	ctx := context.Background()
	t.Run("declined: unpaid, with its failure", func(t *testing.T) {
		w := newSubWorld(t, time.Date(2027, 1, 1, 1, 0, 0, 0, time.UTC), 1, servicetest.Options{})
		sub := w.subscribe(payment.NewSubscription{TokenID: w.token("4000000000000002", "a@example.com").ID, Period: "monthly"})
		if got := w.get(sub.ID); got.Status != payment.SubscriptionUnpaid {
			t.Errorf("after a declined first charge: %s", got.Status)
		}
		if ev := w.events(sub.ID); ev[payment.EventSubscriptionFailure] != 1 || ev[payment.EventSubscriptionCreated] != 1 {
			t.Errorf("events %v", ev)
		}
	})
	t.Run("3-D Secure challenge, then current", func(t *testing.T) {
		w := newSubWorld(t, time.Date(2027, 1, 1, 1, 0, 0, 0, time.UTC), 1, servicetest.Options{PublicOrigin: "http://gateway.test"})
		sub := w.subscribe(payment.NewSubscription{
			// A card whose issuer always asks for 3-D Secure unless the
			// charge is exempt (skip).
			TokenID: w.token("4000000000003220", "a@example.com").ID, Period: "monthly",
			Charge: payment.NewCharge{ThreeDS: &payment.ThreeDSSettings{Mode: "normal"}},
		})
		charges := w.charges(sub.ID)
		if len(charges) != 1 || charges[0].Status != payment.ChargeAwaiting {
			t.Fatalf("first charge %+v", charges)
		}
		if got := w.get(sub.ID); got.Status != payment.SubscriptionUnverified {
			t.Errorf("while the shopper authenticates: %s", got.Status)
		}
		it, err := w.svc.Charging.ChargeThreeDSIssuerToken(ctx, w.demo.Caller, uuid.Nil, charges[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.svc.Charging.ActOnApproval(ctx, path.Base(it.IssuerToken), payment.ActionAnswer, "123456"); err != nil {
			t.Fatal(err)
		}
		w.run()
		if got := w.get(sub.ID); got.Status != payment.SubscriptionCurrent {
			t.Errorf("after the challenge: %s", got.Status)
		}
		// The next payments are the merchant's: no challenge, though the
		// card asks for one.
		w.days(31)
		charges = w.charges(sub.ID)
		if len(charges) != 2 || charges[1].Status != payment.ChargeSuccessful {
			t.Errorf("second charge %+v", charges[len(charges)-1])
		}
	})
}

// TestSubscriptionFirstScheduledPaymentNotExempt: a subscription that
// starts later charges its first payment with its own 3-D Secure: only
// payments after a paid one are exempt as the merchant's.
func TestSubscriptionFirstScheduledPaymentNotExempt(t *testing.T) {
	w := newSubWorld(t, time.Date(2027, 1, 1, 1, 0, 0, 0, time.UTC), 1, servicetest.Options{PublicOrigin: "http://gateway.test"})
	start := payment.Date{Year: 2027, Month: 1, Day: 2}
	sub := w.subscribe(payment.NewSubscription{
		TokenID: w.token("4000000000003220", "a@example.com").ID, Period: "monthly",
		Schedule: payment.ScheduleSettings{StartOn: &start},
	})
	w.days(1)
	charges := w.charges(sub.ID)
	if len(charges) != 1 || charges[0].Status != payment.ChargeAwaiting {
		t.Fatalf("the first payment of a card that needs 3-D Secure: %+v", charges)
	}
}

// TestSubscriptionLongPollWokenByItsCharge: a long poll on a new
// subscription answers as soon as its first charge ends, not at its next
// re-read.
func TestSubscriptionLongPollWokenByItsCharge(t *testing.T) {
	ctx := context.Background()
	w := newSubWorld(t, time.Now().UTC(), 1, servicetest.Options{Config: payment.Config{LongPollRecheck: time.Hour}})
	sub, err := w.svc.Subscriptions.CreateSubscription(ctx, w.demo.Caller, payment.NewSubscription{
		TokenID: w.token("4000020000000000", "a@example.com").ID, Amount: 1000, Currency: "JPY", Period: "monthly",
	})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan *payment.Subscription, 1)
	go func() {
		got, err := w.svc.Subscriptions.Subscription(ctx, w.demo.Caller, uuid.Nil, sub.ID, 30*time.Second)
		if err != nil {
			t.Error(err)
		}
		done <- got
	}()
	time.Sleep(50 * time.Millisecond)
	began := time.Now()
	w.run()
	select {
	case got := <-done:
		if got.Status != payment.SubscriptionCurrent {
			t.Errorf("long poll answered %s", got.Status)
		}
		if d := time.Since(began); d > 5*time.Second {
			t.Errorf("long poll answered after %v", d)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the long poll was not woken by the first charge's end")
	}
}

// TestSubscriptionAccess: who may make and see subscriptions.
func TestSubscriptionAccess(t *testing.T) {
	ctx := context.Background()
	w := newSubWorld(t, time.Date(2027, 1, 1, 1, 0, 0, 0, time.UTC), 1, servicetest.Options{PublicOrigin: "http://gateway.test"})
	browser, err := w.svc.Access.Authenticate(ctx, "Bearer "+w.demo.Token.JWT, "http://gateway.test")
	if err != nil {
		t.Fatal(err)
	}
	newToken := func(c *payment.Caller, typ payment.TokenType) *payment.TransactionToken {
		t.Helper()
		tok, err := w.svc.Tokens.CreateToken(ctx, c, payment.NewToken{
			PaymentType: payment.PaymentTypeCard, Type: typ, Email: "a@example.com",
			Card: &payment.CardInput{Cardholder: "TARO YAMADA", Number: "4000020000000000", ExpMonth: 12, ExpYear: 2039, CVV: "123"},
		})
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	create := func(c *payment.Caller, tok uuid.UUID) (*payment.Subscription, error) {
		return w.svc.Subscriptions.CreateSubscription(ctx, c, payment.NewSubscription{TokenID: tok, Amount: 1000, Currency: "JPY", Period: "monthly"})
	}
	if _, err := create(w.demo.Caller, newToken(w.demo.Caller, payment.OneTime).ID); payment.ErrorCode(err) != payment.CodeNotSubscriptionToken {
		t.Errorf("a one-time token: %v", err)
	}
	if _, err := create(w.demo.Caller, newToken(w.demo.Caller, payment.Recurring).ID); payment.ErrorCode(err) != payment.CodeNotSubscriptionToken {
		t.Errorf("a recurring token: %v", err)
	}
	// The widget: a browser makes a token and its subscription, and may
	// read it back while the shopper waits.
	sub, err := create(browser, newToken(browser, payment.SubscriptionToken).ID)
	if err != nil {
		t.Fatalf("the widget's subscription: %v", err)
	}
	if _, err := w.svc.Subscriptions.Subscription(ctx, browser, uuid.Nil, sub.ID, 0); err != nil {
		t.Errorf("the widget reading its subscription: %v", err)
	}
	if _, err := w.svc.Subscriptions.SubscriptionCharges(ctx, browser, uuid.Nil, sub.ID, uuid.Nil, payment.ListParams{Limit: 10}); err != nil {
		t.Errorf("the widget reading its charges: %v", err)
	}
	// …but may not change it, list subscriptions, or use it again.
	if err := w.svc.Subscriptions.CancelSubscription(ctx, browser, uuid.Nil, sub.ID, ""); payment.ErrorCode(err) != payment.CodeInvalidPermissions {
		t.Errorf("a browser canceling: %v", err)
	}
	if _, err := w.svc.Subscriptions.Subscriptions(ctx, browser, uuid.Nil, payment.SubscriptionFilter{}, payment.ListParams{Limit: 10}); payment.ErrorCode(err) != payment.CodeInvalidPermissions {
		t.Errorf("a browser listing: %v", err)
	}
	if _, err := create(w.demo.Caller, sub.TokenID); payment.ErrorCode(err) != payment.CodeTransactionAlreadyDone {
		t.Errorf("a second subscription on one token: %v", err)
	}
	// Also when the first charged nothing (a free first period, a later
	// start).
	for _, p := range []payment.NewSubscription{
		{InitialAmount: ptr[int64](0)},
		{Schedule: payment.ScheduleSettings{StartOn: &payment.Date{Year: 2027, Month: 2, Day: 1}}},
	} {
		p.TokenID, p.Amount, p.Currency, p.Period = newToken(w.demo.Caller, payment.SubscriptionToken).ID, 1000, "JPY", "monthly"
		if _, err := w.svc.Subscriptions.CreateSubscription(ctx, w.demo.Caller, p); err != nil {
			t.Fatal(err)
		}
		if _, err := w.svc.Subscriptions.CreateSubscription(ctx, w.demo.Caller, p); payment.ErrorCode(err) != payment.CodeTransactionAlreadyDone {
			t.Errorf("a second subscription on one token (%+v): %v", p.Schedule, err)
		}
	}
	// A token the server made, or one made long ago, is not the browser's.
	if _, err := create(browser, newToken(w.demo.Caller, payment.SubscriptionToken).ID); payment.ErrorCode(err) != payment.CodeInvalidPermissions {
		t.Errorf("a browser subscribing a server's token: %v", err)
	}
	old := newToken(browser, payment.SubscriptionToken)
	w.clock.Advance(6 * time.Minute)
	if _, err := create(browser, old.ID); payment.ErrorCode(err) != payment.CodeInvalidPermissions {
		t.Errorf("a browser subscribing an old token: %v", err)
	}
	if _, err := w.svc.Subscriptions.Subscription(ctx, browser, uuid.Nil, sub.ID, 0); payment.ErrorCode(err) != payment.CodeInvalidPermissions {
		t.Errorf("the widget reading its subscription later: %v", err)
	}
	// Another merchant's (the other mode's) subscription is not found.
	live, err := w.svc.Access.CreateAppToken(ctx, w.demo.Caller, w.demo.StoreID, payment.NewAppToken{Mode: payment.ModeLive})
	if err == nil {
		lc, err := w.svc.Access.Authenticate(ctx, "Bearer "+live.Secret+"."+live.JWT, "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.svc.Subscriptions.Subscription(ctx, lc, uuid.Nil, sub.ID, 0); !payment.IsNotFound(err) {
			t.Errorf("the live token reading a test subscription: %v", err)
		}
	}
}

// TestSubscriptionTokenDeleted: a payment whose charge cannot even be made
// (its token deleted) fails like a declined one and is retried; a new
// token pays it.
func TestSubscriptionTokenDeleted(t *testing.T) {
	ctx := context.Background()
	w := newSubWorld(t, time.Date(2027, 1, 1, 1, 0, 0, 0, time.UTC), 1, servicetest.Options{})
	tok := w.token("4000020000000000", "a@example.com")
	sub := w.subscribe(payment.NewSubscription{TokenID: tok.ID, Period: "monthly", Schedule: payment.ScheduleSettings{RetryInterval: "P1D"}})
	if err := w.svc.Tokens.DeleteToken(ctx, w.demo.Caller, w.demo.StoreID, tok.ID); err != nil {
		t.Fatal(err)
	}
	w.days(32) // Feb 1 and its retry on Feb 2
	got := w.get(sub.ID)
	if got.Status != payment.SubscriptionUnpaid || got.NextPayment.Attempts != 2 || got.NextPayment.RetryDate == nil {
		t.Fatalf("after two attempts on a deleted token: %s, next %+v", got.Status, got.NextPayment)
	}
	if n := len(w.charges(sub.ID)); n != 1 {
		t.Errorf("%d charges, want only January's", n)
	}
	if ev := w.events(sub.ID); ev[payment.EventSubscriptionFailure] != 2 {
		t.Errorf("events %v, want two failures", ev)
	}
	if _, err := w.svc.Subscriptions.ChangeSubscriptionToken(ctx, w.demo.Caller, uuid.Nil, sub.ID, w.token("4000020000000000", "b@example.com").ID); err != nil {
		t.Fatal(err)
	}
	w.run()
	if got := w.get(sub.ID); got.Status != payment.SubscriptionCurrent || len(w.charges(sub.ID)) != 2 {
		t.Errorf("after a new token: %s with %d charges", got.Status, len(w.charges(sub.ID)))
	}
}
