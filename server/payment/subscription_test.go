package payment_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/kessaitest"
	"github.com/kessai/kessai/server/kessaitest/servicetest"
	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/payment/services"
	"github.com/kessai/kessai/server/sqlite"
	"github.com/kessai/kessai/server/univapay"
)

// The scheduler's tests run years of subscriptions on a fake clock, a day
// at a time, with the real worker (ProcessPending), storage and sandbox
// acquirer: every expected charge must exist once, on its due date.

// subWorld is a gateway of one or more instances sharing one database.
type subWorld struct {
	t      *testing.T
	clock  *kessaitest.Clock
	stacks []*servicetest.Stack
	svc    *services.Set
	demo   *servicetest.Demo
}

func newSubWorld(t *testing.T, start time.Time, instances int, opts servicetest.Options) *subWorld {
	t.Helper()
	w := &subWorld{t: t, clock: kessaitest.NewClock(start)}
	opts.Clock, opts.Path, opts.EncodeEvent = w.clock, filepath.Join(t.TempDir(), sqlite.FileName), univapay.EncodeEvent
	for range instances {
		w.stacks = append(w.stacks, servicetest.New(t, opts))
	}
	w.svc = w.stacks[0].Service
	w.demo = w.stacks[0].SeedDemo(t)
	return w
}

// token makes a subscription card token with the e-mail given.
func (w *subWorld) token(card, email string) *payment.TransactionToken {
	w.t.Helper()
	tok, err := w.svc.Tokens.CreateToken(context.Background(), w.demo.Caller, payment.NewToken{
		PaymentType: payment.PaymentTypeCard, Type: payment.SubscriptionToken, Email: email,
		Card: &payment.CardInput{Cardholder: "TARO YAMADA", Number: card, ExpMonth: 12, ExpYear: 2039, CVV: "123"},
	})
	if err != nil {
		w.t.Fatal(err)
	}
	return tok
}

func (w *subWorld) subscribe(p payment.NewSubscription) *payment.Subscription {
	w.t.Helper()
	if p.TokenID == uuid.Nil {
		p.TokenID = w.token("4000020000000000", "shopper@example.com").ID
	}
	if p.Currency == "" {
		p.Currency = "JPY"
	}
	if p.Amount == 0 {
		p.Amount = 1000
	}
	sub, err := w.svc.Subscriptions.CreateSubscription(context.Background(), w.demo.Caller, p)
	if err != nil {
		w.t.Fatal(err)
	}
	w.run()
	return sub
}

// run carries out every item due now, on every instance at once, until
// none is left.
func (w *subWorld) run() {
	w.t.Helper()
	for range 100 {
		var mu sync.Mutex
		claimed := 0
		var wg sync.WaitGroup
		for _, st := range w.stacks {
			wg.Go(func() {
				n, err := st.Service.Work.ProcessPending(context.Background(), 100)
				if err != nil {
					w.t.Error(err)
				}
				mu.Lock()
				claimed += n
				mu.Unlock()
			})
		}
		wg.Wait()
		if claimed == 0 {
			return
		}
	}
	w.t.Fatal("work still due after 100 passes")
}

// days moves the clock a day at a time, running what falls due.
func (w *subWorld) days(n int) {
	w.t.Helper()
	for range n {
		w.clock.Advance(24 * time.Hour)
		w.run()
	}
}

func (w *subWorld) get(id uuid.UUID) *payment.Subscription {
	w.t.Helper()
	sub, err := w.svc.Subscriptions.Subscription(context.Background(), w.demo.Caller, uuid.Nil, id, 0)
	if err != nil {
		w.t.Fatal(err)
	}
	return sub
}

// everyPage reads a whole list, oldest first, a page at a time.
func everyPage[T any](tb testing.TB, id func(T) uuid.UUID, list func(payment.ListParams) (payment.Page[T], error)) []T {
	tb.Helper()
	var all []T
	p := payment.ListParams{Limit: payment.MaxLimit, Direction: payment.Asc}
	for {
		page, err := list(p)
		if err != nil {
			tb.Fatal(err)
		}
		all = append(all, page.Items...)
		if !page.HasMore {
			return all
		}
		p.Cursor = id(page.Items[len(page.Items)-1])
	}
}

// charges are a subscription's charges, oldest first.
func (w *subWorld) charges(id uuid.UUID) []*payment.Charge {
	w.t.Helper()
	return everyPage(w.t, func(ch *payment.Charge) uuid.UUID { return ch.ID }, func(p payment.ListParams) (payment.Page[*payment.Charge], error) {
		return w.svc.Subscriptions.SubscriptionCharges(context.Background(), w.demo.Caller, uuid.Nil, id, uuid.Nil, p)
	})
}

// payments are a subscription's payments, oldest first.
func (w *subWorld) payments(id uuid.UUID) []*payment.ScheduledPayment {
	w.t.Helper()
	return everyPage(w.t, func(p *payment.ScheduledPayment) uuid.UUID { return p.ID }, func(p payment.ListParams) (payment.Page[*payment.ScheduledPayment], error) {
		return w.svc.Subscriptions.SubscriptionPayments(context.Background(), w.demo.Caller, uuid.Nil, id, p)
	})
}

// events counts the events of each name about a subscription.
func (w *subWorld) events(id uuid.UUID) map[string]int {
	w.t.Helper()
	counts := map[string]int{}
	after := uuid.Nil
	for {
		evs, err := w.svc.Notify.Events(context.Background(), w.demo.Caller, after, 500)
		if err != nil {
			w.t.Fatal(err)
		}
		if len(evs) == 0 {
			return counts
		}
		for _, ev := range evs {
			if about(ev.Data, id) {
				counts[ev.Name]++
			}
			after = ev.ID
		}
	}
}

// about reports whether an event's data is the subscription id.
func about(data []byte, id uuid.UUID) bool {
	var v struct {
		ID uuid.UUID `json:"id"`
	}
	return json.Unmarshal(data, &v) == nil && v.ID == id
}

func zone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// checkOnSchedule: each payment paid by exactly one successful charge,
// made on the payment's due date in the subscription's zone, the due
// dates those of the schedule.
func checkOnSchedule(t *testing.T, w *subWorld, sub *payment.Subscription, sched payment.Schedule, loc *time.Location) int {
	t.Helper()
	pays := w.payments(sub.ID)
	byPayment := map[uuid.UUID][]*payment.Charge{}
	for _, ch := range w.charges(sub.ID) {
		byPayment[ch.PaymentID] = append(byPayment[ch.PaymentID], ch)
	}
	paid := 0
	for i, p := range pays {
		if want := sched.Due(i); p.DueDate != want {
			t.Errorf("payment %d due %s, want %s", i, p.DueDate, want)
		}
		chs := byPayment[p.ID]
		if !p.IsPaid {
			if i != len(pays)-1 || len(chs) != 0 {
				t.Errorf("payment %d (%s) unpaid with %d charges, %d payments in all", i, p.DueDate, len(chs), len(pays))
			}
			continue
		}
		paid++
		if len(chs) != 1 {
			t.Errorf("payment %d (%s) has %d charges, want 1", i, p.DueDate, len(chs))
			continue
		}
		ch := chs[0]
		if ch.Status != payment.ChargeSuccessful || ch.RequestedAmount != p.Amount || ch.SubscriptionID != sub.ID {
			t.Errorf("payment %d: charge %s %d for %s", i, ch.Status, ch.RequestedAmount, ch.SubscriptionID)
		}
		if got := payment.DateOf(ch.CreatedOn, loc); got != p.DueDate {
			t.Errorf("payment %d due %s was charged on %s", i, p.DueDate, got)
		}
	}
	return paid
}

func TestSubscriptionsRunForTwoYears(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name     string
		start    string // the local time the subscription is made
		zone     string
		period   string
		cyclical string
		preserve bool
		wantPaid int
	}{
		// Made on Jan 31: due on every month's last day.
		{"monthly from a month end, in Tokyo", "2027-01-31T10:00:00", "Asia/Tokyo", "monthly", "", true, 24},
		// Made late in the evening in New York, when it is already the
		// next day in UTC and in Tokyo: due dates are New York's days.
		{"weekly, in New York", "2027-03-10T23:30:00", "America/New_York", "weekly", "", false, 105},
		{"every ten days, in London", "2027-10-30T12:00:00", "Europe/London", "", "P10D", false, 74},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			loc := zone(t, tt.zone)
			start, err := time.ParseInLocation("2006-01-02T15:04:05", tt.start, loc)
			if err != nil {
				t.Fatal(err)
			}
			w := newSubWorld(t, start.UTC(), 1, servicetest.Options{})
			sub := w.subscribe(payment.NewSubscription{
				Amount: 980, Period: tt.period, CyclicalPeriod: tt.cyclical,
				Schedule: payment.ScheduleSettings{ZoneID: tt.zone, PreserveEndOfMonth: tt.preserve},
			})
			if sub.Status != payment.SubscriptionUnverified {
				t.Errorf("a new subscription charging at once is %s, want unverified", sub.Status)
			}
			if got := w.get(sub.ID).Status; got != payment.SubscriptionCurrent {
				t.Fatalf("after its first charge the subscription is %s, want current", got)
			}
			w.days(730)
			cycle, ok := payment.PeriodCycle(tt.period)
			if !ok {
				cycle, _ = payment.ParseCycle(tt.cyclical)
			}
			sched := payment.Schedule{Anchor: payment.DateOf(start, loc), Cycle: cycle, PreserveEndOfMonth: tt.preserve}
			paid := checkOnSchedule(t, w, sub, sched, loc)
			if paid != tt.wantPaid {
				t.Errorf("%d payments paid in two years, want %d", paid, tt.wantPaid)
			}
			got := w.get(sub.ID)
			if got.Status != payment.SubscriptionCurrent || got.PaymentsMade != paid || got.NextPayment == nil || got.NextPayment.IsPaid {
				t.Errorf("after two years: %s, %d made, next %+v", got.Status, got.PaymentsMade, got.NextPayment)
			}
			ev := w.events(sub.ID)
			if ev[payment.EventSubscriptionCreated] != 1 || ev[payment.EventSubscriptionPayment] != paid || ev[payment.EventSubscriptionFailure] != 0 {
				t.Errorf("events %v, want one created and %d payments", ev, paid)
			}
		})
	}
}

func TestSubscriptionFailuresAndRetries(t *testing.T) {
	w := newSubWorld(t, time.Date(2027, 1, 10, 1, 0, 0, 0, time.UTC), 1, servicetest.Options{})
	tok := w.token("4000020000000000", "shopper@example.com")
	sub := w.subscribe(payment.NewSubscription{
		TokenID: tok.ID, Period: "monthly",
		Schedule: payment.ScheduleSettings{ZoneID: "Asia/Tokyo", RetryInterval: "P1D"},
	})
	ctx := context.Background()
	setEmail := func(email string) {
		t.Helper()
		if _, err := w.svc.Tokens.UpdateToken(ctx, w.demo.Caller, w.demo.StoreID, tok.ID, payment.TokenUpdate{Email: &email}); err != nil {
			t.Fatal(err)
		}
	}
	w.days(60) // two more payments: Feb 10, Mar 10
	// The card starts failing (the sandbox's forced outcome by e-mail).
	setEmail("test+charge-failure-306@example.com")
	w.days(31) // Apr 10 fails, retried Apr 11 (fails)
	if got := w.get(sub.ID); got.Status != payment.SubscriptionUnpaid || got.NextPayment.RetryDate == nil {
		t.Fatalf("after failures: %s, next %+v", got.Status, got.NextPayment)
	}
	w.days(1) // Apr 12: a third failure
	setEmail("shopper@example.com")
	w.days(1) // Apr 13: the retry succeeds
	if got := w.get(sub.ID); got.Status != payment.SubscriptionCurrent {
		t.Fatalf("after a successful retry the subscription is %s", got.Status)
	}
	w.days(30) // May 10 on time
	pays := w.payments(sub.ID)
	counts := map[uuid.UUID][]payment.ChargeStatus{}
	for _, ch := range w.charges(sub.ID) {
		counts[ch.PaymentID] = append(counts[ch.PaymentID], ch.Status)
	}
	wantDue := []string{"2027-01-10", "2027-02-10", "2027-03-10", "2027-04-10", "2027-05-10", "2027-06-10"}
	if len(pays) != len(wantDue) {
		t.Fatalf("%d payments, want %d", len(pays), len(wantDue))
	}
	for i, p := range pays {
		if p.DueDate.String() != wantDue[i] {
			t.Errorf("payment %d due %s, want %s", i, p.DueDate, wantDue[i])
		}
		want := 1
		if i == 3 {
			want = 4 // three failures and the success
		}
		if i == 5 {
			want = 0
		}
		if len(counts[p.ID]) != want {
			t.Errorf("payment %d (%s): charges %v, want %d", i, p.DueDate, counts[p.ID], want)
		}
	}
	if st := counts[pays[3].ID]; len(st) == 4 && (st[0] != payment.ChargeFailed || st[3] != payment.ChargeSuccessful) {
		t.Errorf("April's charges %v", st)
	}
	if d := pays[3].SuccessfulPaymentDate; d == nil || d.String() != "2027-04-13" {
		t.Errorf("April paid on %v, want 2027-04-13", d)
	}
	ev := w.events(sub.ID)
	if ev[payment.EventSubscriptionFailure] != 3 || ev[payment.EventSubscriptionPayment] != 5 {
		t.Errorf("events %v, want 3 failures and 5 payments", ev)
	}

	// A card that keeps failing is tried on its interval, five times
	// after the first, then left to the merchant, who gives a new card:
	// it is charged at once.
	setEmail("test+charge-failure-306@example.com")
	w.days(40) // Jun 10 fails; retried Jun 11…15; nothing after
	june := w.payments(sub.ID)[5]
	if n := len(w.chargesOf(sub.ID, june.ID)); n != 6 {
		t.Fatalf("June was tried %d times, want 6", n)
	}
	if june.IsPaid || june.RetryDate != nil {
		t.Errorf("June after its last retry: paid %v, retry %v", june.IsPaid, june.RetryDate)
	}
	fresh := w.token("4000020000000000", "new-card@example.com")
	if _, err := w.svc.Subscriptions.ChangeSubscriptionToken(ctx, w.demo.Caller, uuid.Nil, sub.ID, fresh.ID); err != nil {
		t.Fatal(err)
	}
	w.run()
	got := w.get(sub.ID)
	if got.Status != payment.SubscriptionCurrent || got.TokenID != fresh.ID {
		t.Errorf("after a new card: %s on %s", got.Status, got.TokenID)
	}
	if n := len(w.chargesOf(sub.ID, june.ID)); n != 7 {
		t.Errorf("June has %d charges after the new card, want 7", n)
	}
	// July is due on its day, not moved by June's lateness.
	if got.NextPayment == nil || got.NextPayment.DueDate.String() != "2027-07-10" {
		t.Errorf("next payment %+v, want July 10", got.NextPayment)
	}
}

func (w *subWorld) chargesOf(subID, paymentID uuid.UUID) []*payment.Charge {
	w.t.Helper()
	page, err := w.svc.Subscriptions.SubscriptionCharges(context.Background(), w.demo.Caller, uuid.Nil, subID, paymentID, payment.ListParams{Limit: payment.MaxLimit})
	if err != nil {
		w.t.Fatal(err)
	}
	return page.Items
}
