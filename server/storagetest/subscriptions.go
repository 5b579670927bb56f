package storagetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
)

// Subscriptions and their scheduled payments, as package payment relies
// on them:
//
//   - Subscription(id) and ScheduledPayment(id) give back every field as
//     written: a nil pointer as nil and a pointer to a zero value (an
//     initial amount of 0, a plan with no type) as that; days (a due date,
//     2028-02-29, 9999-12-31) as the same day; times to the microsecond,
//     in UTC; metadata numbers as their text. A subscription's NextPayment
//     is not stored (the service fills it in): it reads back nil. Unknown
//     ids, and the ids of other objects, are NOT_FOUND.
//     UpdateSubscription and UpdateScheduledPayment write every field but
//     subscriptionFixed and paymentFixed.
//   - ListSubscriptions lists one merchant's subscriptions, of one store
//     when StoreID is set, of one mode when Mode is, of any of Statuses
//     when there are some. Search finds a subscription whose id or token id
//     is the term, whose e-mail contains it (ASCII letters in any case, no
//     other letters folded, and no character of the term a wildcard: % and
//     _ are themselves), whose card's last four are the term, or one of
//     whose metadata values is it (payment.Metadata.Matches, for any key:
//     a string whole, a number's text as written, true/false; never an
//     array, never a key). Lists page as the others do.
//   - ListScheduledPayments lists one subscription's payments, newest
//     first by default (by id: the order they were made in).
//   - A charge's PaymentID is stored (uuid.Nil: none); ListCharges with
//     SubscriptionID or PaymentID set keeps the charges of that
//     subscription or payment, uuid.Nil being no condition.
//   - RescheduleWork(kind, id, due) queues an item that is not queued, due
//     at due and as EnqueueWork would; one that is, it moves to due,
//     earlier or later, keeping its attempts, last error and claim (a
//     claimant still holds it, and no one else claims it while its lease
//     holds). ClaimWork then goes by the new due time.
//   - All of it runs in the caller's transaction: rolled back, it leaves
//     nothing.

// ---- fixtures

func datep(y int, m time.Month, d int) *payment.Date { return &payment.Date{Year: y, Month: m, Day: d} }

// newSubscription is a subscription of tok's store with every stored field
// set (both periods, which the domain never does at once: the engine stores
// what it is given). NextPayment is left nil: it is not stored, the service
// fills it in.
func newSubscription(tok *payment.TransactionToken, i int) *payment.Subscription {
	return &payment.Subscription{
		ID: payment.NewID(), StoreID: tok.StoreID, MerchantID: tok.MerchantID, TokenID: tok.ID, Mode: tok.Mode,
		Amount: 3_000 + int64(i), Currency: "JPY", InitialAmount: int64p(500 + int64(i)),
		Period: "monthly", CyclicalPeriod: "P1M",
		Schedule: payment.ScheduleSettings{
			// A leap day, and a zone half an hour off the hour.
			StartOn: datep(2028, time.February, 29), ZoneID: "America/St_Johns", PreserveEndOfMonth: true,
			RetryInterval: "P1DT12H", TerminationMode: payment.TerminateNextPayment,
		},
		Anchor: payment.Date{Year: 9999, Month: time.December, Day: 31},
		// An engine stores both numbers whatever the type says.
		Plan:   &payment.SubscriptionPlan{PlanType: payment.PlanFixedCycleAmount, FixedCycles: 12, FixedCycleAmount: 36_001},
		Status: payment.SubscriptionUnpaid, NextPaymentID: payment.NewID(), PaymentsMade: 3, AmountPaid: 6_500 + int64(i),
		ThreeDS: payment.ThreeDSSettings{
			Enabled: true, Mode: "require", RedirectEndpoint: "https://shop.example/3ds?sub=1&x=\"y\"",
			RedirectID: fmt.Sprintf("sub-3ds-%d", i), Status: payment.ThreeDSFailed, Exempted: true,
			External: externalThreeDS(i),
			Error:    &payment.PaymentError{Code: payment.ErrThreeDSNotCompleted, Message: "THREE_DS_COULD_NOT_BE_COMPLETED", Detail: "不明"},
		},
		Descriptor: "KESSAI 定期便 %_", OnlyDirectCurrency: true, FirstChargeAuthorizationOnly: true,
		FirstChargeCaptureAfter: "P3D", Metadata: subscriptionMetadata(i), FromBrowser: true,
		Email: fmt.Sprintf("subscriber%d@example.jp", i), CardLastFour: "4242",
		CreatedOn: at(i), UpdatedOn: at(i + 1),
	}
}

// subscriptionMetadata is fullMetadata with a unicode key and value and an
// empty string.
func subscriptionMetadata(i int) payment.Metadata {
	md := fullMetadata(i)
	md["顧客番号"] = "お客様-🍵"
	md["empty"] = ""
	return md
}

// newScheduledPayment is a payment of sub with every field set.
func newScheduledPayment(sub *payment.Subscription, i int) *payment.ScheduledPayment {
	retryAt := at(i + 86_400)
	return &payment.ScheduledPayment{
		ID: payment.NewID(), SubscriptionID: sub.ID, StoreID: sub.StoreID, MerchantID: sub.MerchantID, Mode: sub.Mode,
		Cycle: 4 + i, DueDate: payment.Date{Year: 2028, Month: time.February, Day: 29}, ZoneID: "Pacific/Chatham",
		Amount: 3_000 + int64(i), Currency: "JPY", IsPaid: true, IsLastPayment: true,
		SuccessfulPaymentDate: datep(2028, time.March, 1), RetryDate: datep(9999, time.December, 31), RetryAt: &retryAt,
		RetryInterval: "PT6H", TerminateWithStatus: payment.SubscriptionSuspended, Attempts: 2 + i,
		ChargeID: payment.NewID(), CreatedOn: at(i), UpdatedOn: at(i + 2),
	}
}

// requireSubscriptionFields is requireNoZeroFields for a subscription
// fixture, whose NextPayment is not stored and so stays nil.
func requireSubscriptionFields(t *testing.T, sub *payment.Subscription) {
	t.Helper()
	c := *sub
	c.NextPayment = newScheduledPayment(sub, 1)
	requireNoZeroFields(t, &c)
}

func createSubscriptions(t *testing.T, s payment.Storage, subs ...*payment.Subscription) {
	t.Helper()
	update(t, s, func(ctx context.Context, tx payment.Tx) error {
		for _, sub := range subs {
			if err := tx.CreateSubscription(ctx, sub); err != nil {
				return err
			}
		}
		return nil
	})
}

func createScheduledPayments(t *testing.T, s payment.Storage, ps ...*payment.ScheduledPayment) {
	t.Helper()
	update(t, s, func(ctx context.Context, tx payment.Tx) error {
		for _, p := range ps {
			if err := tx.CreateScheduledPayment(ctx, p); err != nil {
				return err
			}
		}
		return nil
	})
}

func readSubscription(t *testing.T, s payment.Storage, id uuid.UUID) *payment.Subscription {
	t.Helper()
	var sub *payment.Subscription
	view(t, s, func(ctx context.Context, tx payment.Tx) error {
		var err error
		sub, err = tx.Subscription(ctx, id)
		return err
	})
	return sub
}

func readScheduledPayment(t *testing.T, s payment.Storage, id uuid.UUID) *payment.ScheduledPayment {
	t.Helper()
	var p *payment.ScheduledPayment
	view(t, s, func(ctx context.Context, tx payment.Tx) error {
		var err error
		p, err = tx.ScheduledPayment(ctx, id)
		return err
	})
	return p
}

func subscriptionID(s *payment.Subscription) uuid.UUID         { return s.ID }
func scheduledPaymentID(p *payment.ScheduledPayment) uuid.UUID { return p.ID }

// subscriptionPayments makes a subscription on tok with two payments, for
// the charges that pay them.
func subscriptionPayments(t *testing.T, s payment.Storage, tok *payment.TransactionToken) (*payment.Subscription, *payment.ScheduledPayment, *payment.ScheduledPayment) {
	t.Helper()
	sub := newSubscription(tok, 1)
	p1, p2 := newScheduledPayment(sub, 1), newScheduledPayment(sub, 2)
	createSubscriptions(t, s, sub)
	createScheduledPayments(t, s, p1, p2)
	return sub, p1, p2
}

// subscriptionFixed are the subscription's fields an update never changes:
// its identity, its owner and its mode. UpdateSubscription writes every
// other field (its token too: a merchant may give it a new one).
// NextPayment is not stored at all.
var subscriptionFixed = []string{"ID", "StoreID", "MerchantID", "Mode", "CreatedOn", "NextPayment"}

// changedSubscription is sub with every field but subscriptionFixed
// changed, charged to tokenID instead.
func changedSubscription(sub *payment.Subscription, tokenID uuid.UUID) *payment.Subscription {
	c := *sub
	c.TokenID, c.Amount, c.Currency, c.InitialAmount = tokenID, 9_223_372_036_854_775_807, "USD", int64p(0)
	c.Period, c.CyclicalPeriod = "biweekly", "P2W"
	c.Schedule = payment.ScheduleSettings{
		StartOn: datep(1, time.January, 1), ZoneID: "Asia/Kathmandu", PreserveEndOfMonth: false,
		RetryInterval: "PT1H", TerminationMode: payment.TerminateImmediately,
	}
	c.Anchor = payment.Date{Year: 2024, Month: time.February, Day: 29}
	c.Plan = &payment.SubscriptionPlan{PlanType: payment.PlanFixedCycles, FixedCycles: 1200, FixedCycleAmount: 7}
	c.Status, c.NextPaymentID, c.PaymentsMade, c.AmountPaid = payment.SubscriptionCanceled, payment.NewID(), 1199, -1
	c.ThreeDS = payment.ThreeDSSettings{
		Enabled: false, Mode: "skip", RedirectEndpoint: "https://other.example/", RedirectID: "other",
		Status: payment.ThreeDSSuccessful, Exempted: false, External: changedExternalThreeDS(),
		Error: &payment.PaymentError{Code: payment.ErrRejectedAfter3DS, Message: "CARD_REJECTED", Detail: "changed"},
	}
	c.Descriptor, c.OnlyDirectCurrency, c.FirstChargeAuthorizationOnly, c.FirstChargeCaptureAfter = "CHANGED", false, false, "P6D"
	c.Metadata = payment.Metadata{"order_id": json.Number("42"), "変更": "済み", "changed": false}
	c.FromBrowser, c.Email, c.CardLastFour, c.UpdatedOn = false, "Changed@Example.COM", "0000", at(5001)
	return &c
}

// paymentFixed are the scheduled payment's fields an update never
// changes: its identity, its subscription, owner and mode.
var paymentFixed = []string{"ID", "SubscriptionID", "StoreID", "MerchantID", "Mode", "CreatedOn"}

// changedScheduledPayment is p with every field but paymentFixed changed.
func changedScheduledPayment(p *payment.ScheduledPayment) *payment.ScheduledPayment {
	c := *p
	retryAt := time.Date(2031, 12, 31, 23, 59, 59, 999_999_999, time.FixedZone("NPT", 5*3600+45*60))
	c.Cycle, c.DueDate, c.ZoneID = -1, payment.Date{Year: 2100, Month: time.March, Day: 1}, "UTC"
	c.Amount, c.Currency, c.IsPaid, c.IsLastPayment = 9_223_372_036_854_775_807, "USD", false, false
	c.SuccessfulPaymentDate, c.RetryDate, c.RetryAt = datep(2000, time.February, 29), datep(1, time.January, 1), &retryAt
	c.RetryInterval, c.TerminateWithStatus, c.Attempts = "P1W", payment.SubscriptionCanceled, 0
	c.ChargeID, c.UpdatedOn = payment.NewID(), at(6001)
	return &c
}

func listSubscriptions(t *testing.T, s payment.Storage, f payment.SubscriptionFilter, p payment.ListParams) payment.Page[*payment.Subscription] {
	t.Helper()
	var page payment.Page[*payment.Subscription]
	view(t, s, func(ctx context.Context, tx payment.Tx) error {
		var err error
		page, err = tx.ListSubscriptions(ctx, f, p)
		return err
	})
	return page
}

func listScheduledPayments(t *testing.T, s payment.Storage, subscriptionID uuid.UUID, p payment.ListParams) payment.Page[*payment.ScheduledPayment] {
	t.Helper()
	var page payment.Page[*payment.ScheduledPayment]
	view(t, s, func(ctx context.Context, tx payment.Tx) error {
		var err error
		page, err = tx.ListScheduledPayments(ctx, subscriptionID, p)
		return err
	})
	return page
}

func checkNoSubscription(t *testing.T, s payment.Storage, id uuid.UUID) {
	t.Helper()
	view(t, s, func(ctx context.Context, tx payment.Tx) error {
		if sub, err := tx.Subscription(ctx, id); !payment.IsNotFound(err) {
			t.Errorf("Subscription(%s) = %+v, %v (code %s); want NOT_FOUND", id, sub, err, payment.ErrorCode(err))
		}
		return nil
	})
}

func checkNoScheduledPayment(t *testing.T, s payment.Storage, id uuid.UUID) {
	t.Helper()
	view(t, s, func(ctx context.Context, tx payment.Tx) error {
		if p, err := tx.ScheduledPayment(ctx, id); !payment.IsNotFound(err) {
			t.Errorf("ScheduledPayment(%s) = %+v, %v (code %s); want NOT_FOUND", id, p, err, payment.ErrorCode(err))
		}
		return nil
	})
}

// subscriptionShapes are subscriptions of tok that differ from the full
// fixture where an engine could confuse a value with its absence or bend
// it: nil pointers and empty strings, a pointer to zero, each plan type,
// a plan with no type, extreme amounts and days.
func subscriptionShapes(tok *payment.TransactionToken) map[string]*payment.Subscription {
	bare := newSubscription(tok, 20)
	bare.InitialAmount, bare.Schedule.StartOn, bare.Plan, bare.Metadata = nil, nil, nil, nil
	bare.Period, bare.CyclicalPeriod, bare.Schedule.ZoneID, bare.Schedule.RetryInterval = "", "", "", ""
	bare.Schedule.TerminationMode, bare.Schedule.PreserveEndOfMonth = "", false
	bare.NextPaymentID, bare.PaymentsMade, bare.AmountPaid, bare.Amount = uuid.Nil, 0, 0, 0
	bare.ThreeDS, bare.Descriptor, bare.Email, bare.CardLastFour, bare.FirstChargeCaptureAfter = payment.ThreeDSSettings{}, "", "", "", ""
	bare.OnlyDirectCurrency, bare.FirstChargeAuthorizationOnly, bare.FromBrowser, bare.Status = false, false, false, ""
	bare.Anchor = payment.Date{Year: 1, Month: time.January, Day: 1}

	zeroInitial := newSubscription(tok, 21)
	zeroInitial.InitialAmount = int64p(0)
	cycles := newSubscription(tok, 22)
	cycles.Plan = &payment.SubscriptionPlan{PlanType: payment.PlanFixedCycles, FixedCycles: 2}
	amount := newSubscription(tok, 23)
	amount.Plan = &payment.SubscriptionPlan{PlanType: payment.PlanFixedCycleAmount, FixedCycleAmount: 9_223_372_036_854_775_807}
	untyped := newSubscription(tok, 24)
	untyped.Plan = &payment.SubscriptionPlan{}
	extreme := newSubscription(tok, 25)
	extreme.Amount, extreme.AmountPaid, extreme.InitialAmount = 9_223_372_036_854_775_807, -9_223_372_036_854_775_808, int64p(-1)
	extreme.Anchor, extreme.Schedule.StartOn = payment.Date{Year: 2028, Month: time.February, Day: 29}, datep(9999, time.December, 31)
	extreme.Metadata = payment.Metadata{"": "", "空": "🍵\u0000\"\\", "n": json.Number("-0.000"), "deep.key[0]": json.Number("1e400")}
	extreme.Status = payment.SubscriptionUnconfirmed
	return map[string]*payment.Subscription{
		"Bare": bare, "ZeroInitialAmount": zeroInitial, "FixedCycles": cycles, "FixedCycleAmount": amount,
		"PlanWithoutType": untyped, "Extreme": extreme,
	}
}

// paymentShapes are payments of sub that differ from the full fixture: the
// initial payment (cycle -1) with every pointer nil and every string
// empty, and extreme days and times.
func paymentShapes(sub *payment.Subscription) map[string]*payment.ScheduledPayment {
	initial := newScheduledPayment(sub, 20)
	initial.Cycle, initial.ZoneID, initial.Amount, initial.Currency, initial.IsPaid, initial.IsLastPayment = -1, "", 0, "", false, false
	initial.SuccessfulPaymentDate, initial.RetryDate, initial.RetryAt = nil, nil, nil
	initial.RetryInterval, initial.TerminateWithStatus, initial.Attempts, initial.ChargeID = "", "", 0, uuid.Nil
	initial.DueDate = payment.Date{Year: 1, Month: time.January, Day: 1}

	extreme := newScheduledPayment(sub, 21)
	// Nanoseconds and a zone: back to the microsecond, in UTC.
	retryAt := time.Date(9999, 12, 31, 23, 59, 59, 999_999_999, time.FixedZone("CHAST", 12*3600+45*60))
	extreme.RetryAt, extreme.DueDate = &retryAt, payment.Date{Year: 9999, Month: time.December, Day: 31}
	extreme.SuccessfulPaymentDate, extreme.RetryDate = datep(2028, time.February, 29), datep(2028, time.February, 29)
	extreme.Cycle, extreme.Attempts = 1_000_000, 1_000_000
	epoch := time.Unix(0, 1).In(time.FixedZone("X", -12*3600))
	early := newScheduledPayment(sub, 22)
	early.RetryAt = &epoch
	return map[string]*payment.ScheduledPayment{"Initial": initial, "Extreme": extreme, "Epoch": early}
}

func testSubscriptions(t *testing.T, s payment.Storage) {
	w := newTenants(t, s)
	tok, tok2 := newToken(w.st, 1), newToken(w.st, 2)
	createTokens(t, s, tok, tok2)
	sub, other := newSubscription(tok, 1), newSubscription(tok2, 2)
	requireSubscriptionFields(t, sub)
	// NextPayment is what the service shows; the engine ignores it.
	withNext := *sub
	withNext.NextPayment = newScheduledPayment(sub, 9)
	update(t, s, func(ctx context.Context, tx payment.Tx) error {
		return errors.Join(tx.CreateSubscription(ctx, &withNext), tx.CreateSubscription(ctx, other))
	})
	checkSame(t, readSubscription(t, s, sub.ID), sub)
	checkSame(t, readSubscription(t, s, other.ID), other)
	pay, pay2 := newScheduledPayment(sub, 1), newScheduledPayment(sub, 2)
	requireNoZeroFields(t, pay)
	createScheduledPayments(t, s, pay, pay2)
	checkSame(t, readScheduledPayment(t, s, pay.ID), pay)
	checkSame(t, readScheduledPayment(t, s, pay2.ID), pay2)

	t.Run("Shapes", func(t *testing.T) {
		for name, shape := range subscriptionShapes(tok) {
			t.Run(name, func(t *testing.T) {
				createSubscriptions(t, s, shape)
				checkSame(t, readSubscription(t, s, shape.ID), shape)
				// Updated into the full fixture and back.
				full := newSubscription(tok, 30)
				full.ID, full.CreatedOn = shape.ID, shape.CreatedOn
				update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.UpdateSubscription(ctx, full) })
				checkSame(t, readSubscription(t, s, shape.ID), full)
				update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.UpdateSubscription(ctx, shape) })
				checkSame(t, readSubscription(t, s, shape.ID), shape)
			})
		}
		for name, shape := range paymentShapes(sub) {
			t.Run("Payment"+name, func(t *testing.T) {
				createScheduledPayments(t, s, shape)
				checkSame(t, readScheduledPayment(t, s, shape.ID), shape)
				full := newScheduledPayment(sub, 30)
				full.ID, full.CreatedOn = shape.ID, shape.CreatedOn
				update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.UpdateScheduledPayment(ctx, full) })
				checkSame(t, readScheduledPayment(t, s, shape.ID), full)
				update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.UpdateScheduledPayment(ctx, shape) })
				checkSame(t, readScheduledPayment(t, s, shape.ID), shape)
			})
		}
	})
	t.Run("NotFound", func(t *testing.T) {
		for _, id := range []uuid.UUID{payment.NewID(), uuid.Nil, pay.ID, tok.ID, sub.NextPaymentID, w.st.ID, w.m.ID} {
			checkNoSubscription(t, s, id)
		}
		for _, id := range []uuid.UUID{payment.NewID(), uuid.Nil, sub.ID, tok.ID, pay.ChargeID, w.st.ID} {
			checkNoScheduledPayment(t, s, id)
		}
	})
	t.Run("DuplicateID", func(t *testing.T) {
		again := newSubscription(tok2, 3)
		again.ID = sub.ID
		if err := s.Update(t.Context(), func(tx payment.Tx) error { return tx.CreateSubscription(t.Context(), again) }); err == nil {
			t.Error("creating a second subscription with the same id succeeded")
		}
		checkSame(t, readSubscription(t, s, sub.ID), sub)
		payAgain := newScheduledPayment(other, 3)
		payAgain.ID = pay.ID
		if err := s.Update(t.Context(), func(tx payment.Tx) error { return tx.CreateScheduledPayment(t.Context(), payAgain) }); err == nil {
			t.Error("creating a second scheduled payment with the same id succeeded")
		}
		checkSame(t, readScheduledPayment(t, s, pay.ID), pay)
	})
	t.Run("Update", func(t *testing.T) {
		changed := changedSubscription(sub, tok2.ID)
		requireAllChanged(t, sub, changed, subscriptionFixed...)
		update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.UpdateSubscription(ctx, changed) })
		checkSame(t, readSubscription(t, s, sub.ID), changed)
		checkSame(t, readSubscription(t, s, other.ID), other)
		update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.UpdateSubscription(ctx, sub) })
		checkSame(t, readSubscription(t, s, sub.ID), sub)

		changedPay := changedScheduledPayment(pay)
		requireAllChanged(t, pay, changedPay, paymentFixed...)
		update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.UpdateScheduledPayment(ctx, changedPay) })
		checkSame(t, readScheduledPayment(t, s, pay.ID), changedPay)
		checkSame(t, readScheduledPayment(t, s, pay2.ID), pay2)
		update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.UpdateScheduledPayment(ctx, pay) })
		checkSame(t, readScheduledPayment(t, s, pay.ID), pay)
	})
	t.Run("UpdateClears", func(t *testing.T) {
		cleared := changedSubscription(sub, tok.ID)
		cleared.InitialAmount, cleared.Schedule.StartOn, cleared.Plan, cleared.Metadata = nil, nil, nil, nil
		cleared.NextPaymentID, cleared.ThreeDS = uuid.Nil, payment.ThreeDSSettings{}
		update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.UpdateSubscription(ctx, cleared) })
		checkSame(t, readSubscription(t, s, sub.ID), cleared)
		clearedPay := changedScheduledPayment(pay)
		clearedPay.SuccessfulPaymentDate, clearedPay.RetryDate, clearedPay.RetryAt = nil, nil, nil
		clearedPay.ChargeID, clearedPay.TerminateWithStatus, clearedPay.RetryInterval = uuid.Nil, "", ""
		update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.UpdateScheduledPayment(ctx, clearedPay) })
		checkSame(t, readScheduledPayment(t, s, pay.ID), clearedPay)
	})
}

// subscriptionStatuses are every status a subscription can have.
var subscriptionStatuses = []payment.SubscriptionStatus{
	payment.SubscriptionUnverified, payment.SubscriptionUnconfirmed, payment.SubscriptionCurrent, payment.SubscriptionUnpaid,
	payment.SubscriptionSuspended, payment.SubscriptionCanceled, payment.SubscriptionCompleted,
}

// foldASCII is the suite's own ASCII lower-casing: é stays é.
func foldASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// searchFinds is SubscriptionFilter.Search's rule, written in Go.
func searchFinds(sub *payment.Subscription, q string) bool {
	if q == sub.ID.String() || q == sub.TokenID.String() || q == sub.CardLastFour ||
		strings.Contains(foldASCII(sub.Email), foldASCII(q)) {
		return true
	}
	for k := range sub.Metadata {
		if sub.Metadata.Matches(k, q) {
			return true
		}
	}
	return false
}

// listedMetadata is the metadata of the i-th subscription of the list
// fixture.
func listedMetadata(i int) payment.Metadata {
	md := payment.Metadata{"order_id": fmt.Sprintf("order-%d", i), "tags": []any{"tagged", json.Number("7")}}
	switch i % 4 {
	case 0:
		md["price"], md["gift"] = json.Number("1.50"), true
	case 1:
		md["price"], md["gift"], md["顧客"] = json.Number("2"), false, "山田"
	case 2:
		md["big"], md["note"] = json.Number("12345678901234567890"), "100%_off"
	}
	return md
}

// testListSubscriptions checks every SubscriptionFilter field alone and
// combined, and paging.
func testListSubscriptions(t *testing.T, s payment.Storage) {
	w := newTenants(t, s)
	var toks []*payment.TransactionToken
	for i := range 3 {
		toks = append(toks, newToken(w.st, i))
	}
	tok2, foreignTok := newToken(w.st2, 3), newToken(w.otherSt, 4)
	createTokens(t, s, append(toks, tok2, foreignTok)...)
	// E-mails with the LIKE wildcards in them, letters in both cases, and
	// a letter lower() folds in some engines but not in ASCII.
	emails := []string{"Alice.Cafe@Example.jp", "bob_99@example.jp", "carol%off@example.jp", "dave@example.jp",
		"ärger@example.jp", "Erin.ONeil@example.jp"}
	lastFours := []string{"4242", "0005", "1111", "9876"}
	var all, inStore, lookAlikes []*payment.Subscription
	for i := range 30 {
		sub := newSubscription(toks[i%3], i*10)
		sub.Mode = []payment.Mode{payment.ModeTest, payment.ModeLive}[i%2]
		sub.Status = subscriptionStatuses[i%7]
		sub.Email, sub.CardLastFour, sub.Metadata = emails[i%6], lastFours[i%4], listedMetadata(i)
		all, inStore = append(all, sub), append(inStore, sub)
		// Look-alikes in the merchant's other store and at another
		// merchant: a filter that forgets its scope shows them.
		if i%5 == 2 {
			again := newSubscription(tok2, i*10+1)
			again.Mode, again.Status, again.Email, again.CardLastFour, again.Metadata = sub.Mode, sub.Status, sub.Email, sub.CardLastFour, sub.Metadata
			all, lookAlikes = append(all, again), append(lookAlikes, again)
		}
		if i%7 == 3 {
			foreign := newSubscription(foreignTok, i*10+2)
			foreign.Mode, foreign.Status, foreign.Email, foreign.CardLastFour, foreign.Metadata = sub.Mode, sub.Status, sub.Email, sub.CardLastFour, sub.Metadata
			all = append(all, foreign)
		}
	}
	createSubscriptions(t, s, all...)

	list := func(t *testing.T, f payment.SubscriptionFilter, p payment.ListParams) payment.Page[*payment.Subscription] {
		t.Helper()
		return listSubscriptions(t, s, f, p)
	}
	type rule = func(*payment.Subscription) bool
	inScope := func(merchantID, storeID uuid.UUID) rule {
		return func(sub *payment.Subscription) bool {
			return sub.MerchantID == merchantID && (storeID == uuid.Nil || sub.StoreID == storeID)
		}
	}
	and := allOf[*payment.Subscription]
	statusIn := func(sts ...payment.SubscriptionStatus) rule {
		return func(sub *payment.Subscription) bool { return slices.Contains(sts, sub.Status) }
	}
	modeIs := func(m payment.Mode) rule { return func(sub *payment.Subscription) bool { return sub.Mode == m } }
	finds := func(q string) rule { return func(sub *payment.Subscription) bool { return searchFinds(sub, q) } }
	nothing := func(*payment.Subscription) bool { return false }
	store := payment.SubscriptionFilter{MerchantID: w.m.ID, StoreID: w.st.ID}
	inStoreRule := inScope(w.m.ID, w.st.ID)
	with := func(change func(f *payment.SubscriptionFilter)) payment.SubscriptionFilter {
		f := store
		change(&f)
		return f
	}
	search := func(q string) payment.SubscriptionFilter {
		return with(func(f *payment.SubscriptionFilter) { f.Search = q })
	}
	// count is how many in-store subscriptions a search must find, so
	// that the Go rule cannot agree with a broken engine by finding
	// nothing or everything for the wrong reason.
	count := func(q string) int {
		n := 0
		for _, sub := range inStore {
			if searchFinds(sub, q) {
				n++
			}
		}
		return n
	}
	for q, want := range map[string]int{"%": 5, "_": 5, "ALICE": 5, "rger": 5, "ärger": 5, "Ärger": 0, "order-7": 1,
		"1.50": 8, "1.5": 0, "100%_off": 7, "4242": 8, "424": 0} {
		if got := count(q); got != want {
			t.Fatalf("the fixture: a search for %q finds %d subscriptions of the store, want %d", q, got, want)
		}
	}
	type tc = filterCase[payment.SubscriptionFilter, *payment.Subscription]
	target := inStore[7]
	cases := []tc{
		{name: "Store", filter: store, match: inStoreRule},
		{name: "Merchant", filter: payment.SubscriptionFilter{MerchantID: w.m.ID}, match: inScope(w.m.ID, uuid.Nil)},
		{name: "SecondStore", filter: payment.SubscriptionFilter{MerchantID: w.m.ID, StoreID: w.st2.ID}, match: inScope(w.m.ID, w.st2.ID)},
		{name: "OtherMerchant", filter: payment.SubscriptionFilter{MerchantID: w.other.ID}, match: inScope(w.other.ID, uuid.Nil)},
		{name: "StoreOfAnotherMerchant", filter: payment.SubscriptionFilter{MerchantID: w.m.ID, StoreID: w.otherSt.ID}, match: nothing, none: true},
		{name: "ModeTest", filter: with(func(f *payment.SubscriptionFilter) { f.Mode = payment.ModeTest }),
			match: and(inStoreRule, modeIs(payment.ModeTest))},
		{name: "ModeLive", filter: with(func(f *payment.SubscriptionFilter) { f.Mode = payment.ModeLive }),
			match: and(inStoreRule, modeIs(payment.ModeLive))},
		{name: "ModeLiveMerchant", filter: payment.SubscriptionFilter{MerchantID: w.m.ID, Mode: payment.ModeLive},
			match: and(inScope(w.m.ID, uuid.Nil), modeIs(payment.ModeLive))},
		{name: "OneStatus", filter: with(func(f *payment.SubscriptionFilter) {
			f.Statuses = []payment.SubscriptionStatus{payment.SubscriptionCurrent}
		}),
			match: and(inStoreRule, statusIn(payment.SubscriptionCurrent))},
		{name: "ThreeStatuses", filter: with(func(f *payment.SubscriptionFilter) {
			f.Statuses = []payment.SubscriptionStatus{payment.SubscriptionUnpaid, payment.SubscriptionSuspended, payment.SubscriptionUnverified}
		}), match: and(inStoreRule, statusIn(payment.SubscriptionUnpaid, payment.SubscriptionSuspended, payment.SubscriptionUnverified))},
		{name: "StatusTwice", filter: with(func(f *payment.SubscriptionFilter) {
			f.Statuses = []payment.SubscriptionStatus{payment.SubscriptionCanceled, payment.SubscriptionCanceled}
		}), match: and(inStoreRule, statusIn(payment.SubscriptionCanceled))},
		{name: "EveryStatus", filter: with(func(f *payment.SubscriptionFilter) { f.Statuses = subscriptionStatuses }), match: inStoreRule},
		{name: "StatusesAndModeMerchant", filter: payment.SubscriptionFilter{MerchantID: w.m.ID, Mode: payment.ModeTest,
			Statuses: []payment.SubscriptionStatus{payment.SubscriptionCompleted, payment.SubscriptionUnconfirmed}},
			match: and(inScope(w.m.ID, uuid.Nil), modeIs(payment.ModeTest), statusIn(payment.SubscriptionCompleted, payment.SubscriptionUnconfirmed))},
		{name: "SearchID", filter: search(target.ID.String()), match: func(sub *payment.Subscription) bool { return sub.ID == target.ID }},
		{name: "SearchIDOfAnotherStore", filter: search(lookAlikes[0].ID.String()), match: nothing, none: true},
		{name: "SearchTokenID", filter: search(toks[1].ID.String()), match: and(inStoreRule, finds(toks[1].ID.String()))},
		{name: "SearchTokenIDMerchant", filter: payment.SubscriptionFilter{MerchantID: w.m.ID, Search: tok2.ID.String()},
			match: func(sub *payment.Subscription) bool { return sub.TokenID == tok2.ID }},
		{name: "SearchEmailPart", filter: search("alice.cafe"), match: and(inStoreRule, finds("alice.cafe"))},
		{name: "SearchEmailUpper", filter: search("ALICE"), match: and(inStoreRule, finds("ALICE"))},
		{name: "SearchEmailWhole", filter: search("Erin.ONeil@example.jp"), match: and(inStoreRule, finds("Erin.ONeil@example.jp"))},
		{name: "SearchEmailASCIIPartOfNonASCII", filter: search("RGER"), match: and(inStoreRule, finds("RGER"))},
		{name: "SearchEmailNonASCII", filter: search("ärger"), match: and(inStoreRule, finds("ärger"))},
		{name: "SearchEmailNonASCIINotFolded", filter: search("Ärger"), match: nothing, none: true},
		{name: "SearchPercentIsNoWildcard", filter: search("%"), match: and(inStoreRule, finds("%"))},
		{name: "SearchUnderscoreIsNoWildcard", filter: search("_"), match: and(inStoreRule, finds("_"))},
		{name: "SearchPercentInside", filter: search("l%o"), match: and(inStoreRule, finds("l%o"))},
		{name: "SearchUnderscoreInside", filter: search("b_9"), match: and(inStoreRule, finds("b_9"))},
		{name: "SearchWildcardsMatchNothing", filter: search("a%e"), match: nothing, none: true},
		{name: "SearchUnderscoreMatchesNoLetter", filter: search("b_b"), match: nothing, none: true},
		{name: "SearchBackslash", filter: search(`\%`), match: nothing, none: true},
		{name: "SearchLastFour", filter: search("0005"), match: and(inStoreRule, finds("0005"))},
		{name: "SearchLastFourPart", filter: search("424"), match: nothing, none: true},
		{name: "SearchMetadataString", filter: search("order-7"), match: and(inStoreRule, finds("order-7"))},
		{name: "SearchMetadataWithWildcards", filter: search("100%_off"), match: and(inStoreRule, finds("100%_off"))},
		{name: "SearchMetadataStringPart", filter: search("order-"), match: nothing, none: true},
		{name: "SearchMetadataKey", filter: search("order_id"), match: nothing, none: true},
		{name: "SearchMetadataUnicode", filter: search("山田"), match: and(inStoreRule, finds("山田"))},
		{name: "SearchMetadataNumberText", filter: search("1.50"), match: and(inStoreRule, finds("1.50"))},
		{name: "SearchMetadataNumberOtherText", filter: search("1.5"), match: nothing, none: true},
		{name: "SearchMetadataBigNumber", filter: search("12345678901234567890"), match: and(inStoreRule, finds("12345678901234567890"))},
		{name: "SearchMetadataTrue", filter: search("true"), match: and(inStoreRule, finds("true"))},
		{name: "SearchMetadataFalse", filter: search("false"), match: and(inStoreRule, finds("false"))},
		{name: "SearchMetadataArrayNever", filter: search("tagged"), match: nothing, none: true},
		{name: "SearchMetadataArrayNumberNever", filter: search("7"), match: nothing, none: true},
		{name: "SearchMetadataArrayTextNever", filter: search(`["tagged",7]`), match: nothing, none: true},
		{name: "SearchOtherMerchant", filter: payment.SubscriptionFilter{MerchantID: w.other.ID, Search: "ALICE"},
			match: and(inScope(w.other.ID, uuid.Nil), finds("ALICE"))},
		{name: "Combined", filter: with(func(f *payment.SubscriptionFilter) {
			f.Mode, f.Search = payment.ModeLive, "example.JP"
			f.Statuses = []payment.SubscriptionStatus{payment.SubscriptionCurrent, payment.SubscriptionUnpaid, payment.SubscriptionCanceled}
		}), match: and(inStoreRule, modeIs(payment.ModeLive), finds("example.JP"),
			statusIn(payment.SubscriptionCurrent, payment.SubscriptionUnpaid, payment.SubscriptionCanceled))},
		{name: "CombinedSearchAlternativesAndScope", filter: with(func(f *payment.SubscriptionFilter) {
			// The term is one subscription's id and every subscription's
			// token id of the other store: the scope still holds.
			f.Mode, f.Search = payment.ModeTest, toks[0].ID.String()
		}), match: and(inStoreRule, modeIs(payment.ModeTest), finds(toks[0].ID.String()))},
	}
	checkFilters(t, all, subscriptionID, list, cases)

	t.Run("Items", func(t *testing.T) {
		// A list gives back every field as written.
		page := list(t, payment.SubscriptionFilter{MerchantID: w.other.ID}, payment.ListParams{Limit: payment.MaxLimit, Direction: payment.Asc})
		var want []*payment.Subscription
		for _, sub := range all {
			if sub.MerchantID == w.other.ID {
				want = append(want, sub)
			}
		}
		if len(page.Items) != len(want) {
			t.Fatalf("%d items, want %d", len(page.Items), len(want))
		}
		for i := range want {
			checkSame(t, page.Items[i], want[i])
		}
	})
	asc := make([]uuid.UUID, len(inStore))
	for i, sub := range inStore {
		asc[i] = sub.ID
	}
	t.Run("Paging", func(t *testing.T) {
		checkPaging(t, asc, func(t *testing.T, p payment.ListParams) payment.Page[*payment.Subscription] {
			return list(t, store, p)
		}, subscriptionID)
	})
	t.Run("PagingFiltered", func(t *testing.T) {
		// A cursor narrows a filtered list, whose search is an OR of
		// alternatives: pages of 3 walk exactly the filter's rows.
		filters := []payment.SubscriptionFilter{
			with(func(f *payment.SubscriptionFilter) { f.Search = toks[2].ID.String() }),
			with(func(f *payment.SubscriptionFilter) { f.Search = "example.jp" }),
			with(func(f *payment.SubscriptionFilter) {
				f.Statuses, f.Mode = []payment.SubscriptionStatus{payment.SubscriptionCurrent, payment.SubscriptionUnpaid, payment.SubscriptionCanceled}, payment.ModeLive
			}),
		}
		for _, f := range filters {
			var want []uuid.UUID
			for _, sub := range inStore {
				if (f.Search == "" || searchFinds(sub, f.Search)) && (len(f.Statuses) == 0 || slices.Contains(f.Statuses, sub.Status)) &&
					(f.Mode == "" || sub.Mode == f.Mode) {
					want = append(want, sub.ID)
				}
			}
			if len(want) < 4 {
				t.Fatalf("the fixture: filter %+v selects %d rows, too few to page", f, len(want))
			}
			listF := func(p payment.ListParams) payment.Page[*payment.Subscription] { return list(t, f, p) }
			if got := walk(t, listF, subscriptionID, 3, payment.Asc); !slices.Equal(got, want) {
				t.Errorf("walking %+v ascending by 3 = %v\nwant %v", f, got, want)
			}
			if got := walk(t, listF, subscriptionID, 3, payment.Desc); !slices.Equal(got, reversed(want)) {
				t.Errorf("walking %+v descending by 3 = %v\nwant %v", f, got, reversed(want))
			}
			// Past the first page: no TotalHits, and HasMore as it is.
			second := list(t, f, payment.ListParams{Limit: 2, Cursor: want[len(want)-3]})
			checkPage(t, pageCheck{want: reversed(want[len(want)-5 : len(want)-3]), hasMore: len(want) > 5}, second, subscriptionID)
		}
	})
}

func testListScheduledPayments(t *testing.T, s payment.Storage) {
	w := newTenants(t, s)
	tok := newToken(w.st, 1)
	createTokens(t, s, tok)
	subA, subB, subC := newSubscription(tok, 1), newSubscription(tok, 2), newSubscription(tok, 3)
	createSubscriptions(t, s, subA, subB, subC)
	// A's and B's payments made in turns, so that their ids interleave.
	var a, b []*payment.ScheduledPayment
	for i := range 30 {
		if i%10 == 4 {
			b = append(b, newScheduledPayment(subB, i))
			createScheduledPayments(t, s, b[len(b)-1])
		} else {
			a = append(a, newScheduledPayment(subA, i))
			createScheduledPayments(t, s, a[len(a)-1])
		}
	}
	ids := func(ps []*payment.ScheduledPayment) []uuid.UUID {
		out := make([]uuid.UUID, len(ps))
		for i, p := range ps {
			out[i] = p.ID
		}
		return out
	}
	listOf := func(id uuid.UUID) func(t *testing.T, p payment.ListParams) payment.Page[*payment.ScheduledPayment] {
		return func(t *testing.T, p payment.ListParams) payment.Page[*payment.ScheduledPayment] {
			return listScheduledPayments(t, s, id, p)
		}
	}
	t.Run("Paging", func(t *testing.T) { checkPaging(t, ids(a), listOf(subA.ID), scheduledPaymentID) })
	t.Run("OtherSubscription", func(t *testing.T) {
		checkPage(t, pageCheck{want: reversed(ids(b)), total: intp(len(b))}, listOf(subB.ID)(t, payment.ListParams{Limit: 10}), scheduledPaymentID)
		checkPage(t, pageCheck{want: ids(b)[:2], hasMore: true, total: intp(len(b))},
			listOf(subB.ID)(t, payment.ListParams{Limit: 2, Direction: payment.Asc}), scheduledPaymentID)
		// A cursor of the other subscription's bounds only the order.
		checkPage(t, pageCheck{want: ids(b)[1:]}, listOf(subB.ID)(t, payment.ListParams{Limit: 10, Cursor: a[5].ID, Direction: payment.Asc}), scheduledPaymentID)
	})
	t.Run("None", func(t *testing.T) {
		for _, id := range []uuid.UUID{subC.ID, payment.NewID(), uuid.Nil, a[0].ID} {
			checkPage(t, pageCheck{want: []uuid.UUID{}, total: intp(0)}, listOf(id)(t, payment.ListParams{Limit: 10}), scheduledPaymentID)
		}
	})
	t.Run("Items", func(t *testing.T) {
		page := listOf(subB.ID)(t, payment.ListParams{Limit: 10, Direction: payment.Asc})
		if len(page.Items) != len(b) {
			t.Fatalf("%d items, want %d", len(page.Items), len(b))
		}
		for i := range b {
			checkSame(t, page.Items[i], b[i])
		}
	})
}

// testSubscriptionCharges: ListCharges by SubscriptionID and PaymentID,
// and a charge's PaymentID as written.
func testSubscriptionCharges(t *testing.T, s payment.Storage) {
	w := newTenants(t, s)
	tok, tok2 := newToken(w.st, 1), newToken(w.st2, 2)
	createTokens(t, s, tok, tok2)
	subA, subB, subC := newSubscription(tok, 1), newSubscription(tok, 2), newSubscription(tok2, 3)
	createSubscriptions(t, s, subA, subB, subC)
	a1, a2, b1, c1 := newScheduledPayment(subA, 1), newScheduledPayment(subA, 2), newScheduledPayment(subB, 3), newScheduledPayment(subC, 4)
	createScheduledPayments(t, s, a1, a2, b1, c1)
	charge := func(tk *payment.TransactionToken, i int, sub uuid.UUID, pay uuid.UUID) *payment.Charge {
		ch := newCharge(tk, i)
		ch.SubscriptionID, ch.PaymentID = sub, pay
		return ch
	}
	all := []*payment.Charge{
		charge(tok, 1, subA.ID, a1.ID), charge(tok, 2, subA.ID, a1.ID), // a payment retried
		charge(tok, 3, subA.ID, a2.ID), charge(tok, 4, subA.ID, uuid.Nil),
		charge(tok, 5, subB.ID, b1.ID), charge(tok, 6, uuid.Nil, uuid.Nil), charge(tok, 7, payment.NewID(), uuid.Nil),
		charge(tok2, 8, subC.ID, c1.ID), charge(tok, 9, subA.ID, a2.ID),
	}
	createCharges(t, s, all...)
	for _, ch := range all {
		checkSame(t, readCharge(t, s, ch.ID), ch)
	}
	list := func(t *testing.T, f payment.ChargeFilter, p payment.ListParams) payment.Page[*payment.Charge] {
		t.Helper()
		var page payment.Page[*payment.Charge]
		view(t, s, func(ctx context.Context, tx payment.Tx) error {
			var err error
			page, err = tx.ListCharges(ctx, f, p)
			return err
		})
		return page
	}
	store := func(sub, pay uuid.UUID) payment.ChargeFilter {
		return payment.ChargeFilter{MerchantID: w.m.ID, StoreID: w.st.ID, SubscriptionID: sub, PaymentID: pay}
	}
	merchant := func(sub, pay uuid.UUID) payment.ChargeFilter {
		return payment.ChargeFilter{MerchantID: w.m.ID, SubscriptionID: sub, PaymentID: pay}
	}
	of := func(sub, pay uuid.UUID, storeID uuid.UUID) func(*payment.Charge) bool {
		return func(ch *payment.Charge) bool {
			return (sub == uuid.Nil || ch.SubscriptionID == sub) && (pay == uuid.Nil || ch.PaymentID == pay) &&
				(storeID == uuid.Nil || ch.StoreID == storeID)
		}
	}
	nothing := func(*payment.Charge) bool { return false }
	type tc = filterCase[payment.ChargeFilter, *payment.Charge]
	cases := []tc{
		{name: "NilIsNoCondition", filter: store(uuid.Nil, uuid.Nil), match: of(uuid.Nil, uuid.Nil, w.st.ID)},
		{name: "Subscription", filter: store(subA.ID, uuid.Nil), match: of(subA.ID, uuid.Nil, w.st.ID)},
		{name: "OtherSubscription", filter: store(subB.ID, uuid.Nil), match: of(subB.ID, uuid.Nil, w.st.ID)},
		{name: "Payment", filter: store(uuid.Nil, a1.ID), match: of(uuid.Nil, a1.ID, w.st.ID)},
		{name: "OtherPayment", filter: store(uuid.Nil, a2.ID), match: of(uuid.Nil, a2.ID, w.st.ID)},
		{name: "SubscriptionAndPayment", filter: store(subA.ID, a2.ID), match: of(subA.ID, a2.ID, w.st.ID)},
		{name: "PaymentOfAnotherSubscription", filter: store(subB.ID, a1.ID), match: nothing, none: true},
		{name: "SubscriptionOfAnotherStore", filter: store(subC.ID, uuid.Nil), match: nothing, none: true},
		{name: "SubscriptionMerchantWide", filter: merchant(subC.ID, uuid.Nil), match: of(subC.ID, uuid.Nil, uuid.Nil)},
		{name: "PaymentMerchantWide", filter: merchant(uuid.Nil, c1.ID), match: of(uuid.Nil, c1.ID, uuid.Nil)},
		{name: "UnknownSubscription", filter: merchant(payment.NewID(), uuid.Nil), match: nothing, none: true},
		{name: "UnknownPayment", filter: merchant(uuid.Nil, payment.NewID()), match: nothing, none: true},
		{name: "SubscriptionIDIsNoPaymentID", filter: merchant(uuid.Nil, subA.ID), match: nothing, none: true},
		{name: "WithOtherFilters", filter: payment.ChargeFilter{MerchantID: w.m.ID, SubscriptionID: subA.ID, TokenID: tok.ID,
			AmountFrom: int64p(12_003)}, match: func(ch *payment.Charge) bool { return ch.SubscriptionID == subA.ID && ch.RequestedAmount >= 12_003 }},
	}
	checkFilters(t, all, chargeID, list, cases)
	t.Run("UpdateSetsAndClears", func(t *testing.T) {
		ch := all[5]
		set := *ch
		set.SubscriptionID, set.PaymentID = subB.ID, b1.ID
		update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.UpdateCharge(ctx, &set) })
		checkSame(t, readCharge(t, s, ch.ID), &set)
		checkPage(t, pageCheck{want: []uuid.UUID{ch.ID, all[4].ID}, total: intp(2)},
			list(t, store(uuid.Nil, b1.ID), payment.ListParams{Limit: 10}), chargeID)
		update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.UpdateCharge(ctx, ch) })
		checkSame(t, readCharge(t, s, ch.ID), ch)
		checkPage(t, pageCheck{want: []uuid.UUID{all[4].ID}, total: intp(1)},
			list(t, store(uuid.Nil, b1.ID), payment.ListParams{Limit: 10}), chargeID)
	})
}

func reschedule(t *testing.T, s payment.Storage, kind payment.WorkKind, id uuid.UUID, due time.Time) {
	t.Helper()
	update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.MoveWorkDue(ctx, kind, id, due) })
}

func testRescheduleWork(t *testing.T, s payment.Storage) {
	const kind = payment.WorkSubscriptionPayment
	t0 := at(100).Truncate(time.Microsecond)
	t.Run("QueuesWhenAbsent", func(t *testing.T) {
		id := payment.NewID()
		// With nanoseconds and a zone: queued to the microsecond.
		due := at(50).In(time.FixedZone("JST", 9*3600))
		reschedule(t, s, kind, id, due)
		checkItem(t, s, queued(kind, id, due))
		// Another kind of the same id is an item of its own.
		checkNoWork(t, s, payment.WorkAuthorize, id)
		checkClaim(t, s, "w0", due.Add(-time.Microsecond), t0, 10)
		got := checkOne(t, claim(t, s, "w0", due, t0, 10), kind, id)
		update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.CompleteWork(ctx, got) })
		checkNoWork(t, s, kind, id)
	})
	t.Run("KeepsAttemptsAndError", func(t *testing.T) {
		id := payment.NewID()
		enqueue(t, s, kind, id, t0)
		enqueue(t, s, payment.WorkAuthorize, id, t0.Add(time.Hour))
		w := checkOne(t, claim(t, s, "w1", t0, t0.Add(time.Minute), 10), kind, id)
		update(t, s, func(ctx context.Context, tx payment.Tx) error {
			return tx.RetryWork(ctx, w, t0.Add(10*time.Minute), "declined")
		})
		failed := payment.Work{Kind: kind, ID: id, Attempts: 1, Due: t0.Add(10 * time.Minute), LastError: "declined"}
		checkItem(t, s, failed)

		earlier := failed
		earlier.Due = t0.Add(5 * time.Minute)
		reschedule(t, s, kind, id, earlier.Due)
		checkItem(t, s, earlier)
		later := failed
		later.Due = t0.Add(20 * time.Minute)
		reschedule(t, s, kind, id, later.Due)
		checkItem(t, s, later)
		// The other kind of the same id stays as it was.
		checkItem(t, s, queued(payment.WorkAuthorize, id, t0.Add(time.Hour)))

		// A claim goes by the new due time, to the microsecond.
		lease := t0.Add(time.Hour)
		checkClaim(t, s, "w2", later.Due.Add(-time.Microsecond), lease, 10)
		checkClaim(t, s, "w2", later.Due, lease, 10, claimed(later, "w2", lease))
		update(t, s, func(ctx context.Context, tx payment.Tx) error {
			return tx.CompleteWork(ctx, claimed(later, "w2", lease))
		})
		auth := checkOne(t, claim(t, s, "w2", t0.Add(time.Hour), lease, 10), payment.WorkAuthorize, id)
		update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.CompleteWork(ctx, auth) })
	})
	t.Run("KeepsClaim", func(t *testing.T) {
		id := payment.NewID()
		enqueue(t, s, kind, id, t0)
		lease := t0.Add(time.Hour)
		held := checkOne(t, claim(t, s, "w3", t0, lease, 10), kind, id)
		update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.RetryWork(ctx, held, t0, "timeout") })
		held = checkOne(t, claim(t, s, "w3", t0, lease, 10), kind, id)
		want := claimed(payment.Work{Kind: kind, ID: id, Attempts: 1, Due: t0, LastError: "timeout"}, "w3", lease)
		checkItem(t, s, want)

		// Earlier, while claimed: due at once, but the lease holds.
		want.Due = t0.Add(-time.Hour)
		reschedule(t, s, kind, id, want.Due)
		checkItem(t, s, want)
		checkClaim(t, s, "w4", lease.Add(-time.Microsecond), lease.Add(time.Hour), 10)
		// Later, while claimed.
		want.Due = t0.Add(3 * time.Hour)
		reschedule(t, s, kind, id, want.Due)
		checkItem(t, s, want)
		// The claimant still holds it: its release ends the claim and
		// keeps the new due time.
		update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.ReleaseWork(ctx, held) })
		want.ClaimedBy, want.LeaseUntil = "", time.Time{}
		checkItem(t, s, want)
		checkClaim(t, s, "w5", want.Due.Add(-time.Microsecond), want.Due.Add(time.Hour), 10)
		checkClaim(t, s, "w5", want.Due, want.Due.Add(time.Hour), 10, claimed(want, "w5", want.Due.Add(time.Hour)))
		update(t, s, func(ctx context.Context, tx payment.Tx) error {
			return tx.CompleteWork(ctx, claimed(want, "w5", want.Due.Add(time.Hour)))
		})
		checkNoWork(t, s, kind, id)
	})
	t.Run("ClaimOrder", func(t *testing.T) {
		// a is due before b until b is moved before it.
		a, b := payment.NewID(), payment.NewID()
		enqueue(t, s, kind, a, t0.Add(10*time.Second))
		enqueue(t, s, kind, b, t0.Add(20*time.Second))
		reschedule(t, s, kind, b, t0.Add(5*time.Second))
		lease := t0.Add(time.Hour)
		checkClaim(t, s, "w6", t0.Add(time.Minute), lease, 1, claimed(queued(kind, b, t0.Add(5*time.Second)), "w6", lease))
		checkClaim(t, s, "w6", t0.Add(time.Minute), lease, 1, claimed(queued(kind, a, t0.Add(10*time.Second)), "w6", lease))
	})
}

// testSubscriptionRollback: subscriptions, payments and rescheduled work
// are written in the caller's transaction.
func testSubscriptionRollback(t *testing.T, s payment.Storage) {
	w := newTenants(t, s)
	tok, tok2 := newToken(w.st, 1), newToken(w.st, 2)
	createTokens(t, s, tok, tok2)
	sub := newSubscription(tok, 1)
	createSubscriptions(t, s, sub)
	pay := newScheduledPayment(sub, 1)
	createScheduledPayments(t, s, pay)
	due := at(100).Truncate(time.Microsecond)
	enqueue(t, s, payment.WorkSubscriptionPayment, pay.ID, due)
	newSub := newSubscription(tok2, 2)
	newPay, newPayOfOld := newScheduledPayment(newSub, 2), newScheduledPayment(sub, 3)
	ch := newCharge(tok, 4)
	ch.SubscriptionID, ch.PaymentID = sub.ID, pay.ID
	updateRolledBack(t, s, func(ctx context.Context, tx payment.Tx) []func() error {
		return []func() error{
			func() error { return tx.CreateSubscription(ctx, newSub) },
			func() error { return tx.CreateScheduledPayment(ctx, newPay) },
			func() error { return tx.CreateScheduledPayment(ctx, newPayOfOld) },
			func() error { return tx.UpdateSubscription(ctx, changedSubscription(sub, tok2.ID)) },
			func() error { return tx.UpdateScheduledPayment(ctx, changedScheduledPayment(pay)) },
			func() error { return tx.CreateCharge(ctx, ch) },
			func() error {
				return tx.MoveWorkDue(ctx, payment.WorkSubscriptionPayment, pay.ID, due.Add(time.Hour))
			},
			func() error { return tx.MoveWorkDue(ctx, payment.WorkSubscriptionPayment, newPay.ID, due) },
			func() error {
				// A transaction sees what it wrote.
				got, err := tx.ScheduledPayment(ctx, newPay.ID)
				if err != nil {
					return err
				}
				page, err := tx.ListScheduledPayments(ctx, sub.ID, payment.ListParams{Limit: 10})
				if err == nil && len(page.Items) != 2 {
					err = fmt.Errorf("inside the transaction the subscription has %d payments, want 2", len(page.Items))
				}
				if err == nil && got.ID != newPay.ID {
					err = errors.New("inside the transaction the new payment reads as another")
				}
				return err
			},
		}
	})
	checkNoSubscription(t, s, newSub.ID)
	checkNoScheduledPayment(t, s, newPay.ID)
	checkNoScheduledPayment(t, s, newPayOfOld.ID)
	checkSame(t, readSubscription(t, s, sub.ID), sub)
	checkSame(t, readScheduledPayment(t, s, pay.ID), pay)
	checkItem(t, s, queued(payment.WorkSubscriptionPayment, pay.ID, due))
	checkNoWork(t, s, payment.WorkSubscriptionPayment, newPay.ID)
	checkPage(t, pageCheck{want: []uuid.UUID{pay.ID}, total: intp(1)},
		listScheduledPayments(t, s, sub.ID, payment.ListParams{Limit: 10}), scheduledPaymentID)
	checkPage(t, pageCheck{want: []uuid.UUID{sub.ID}, total: intp(1)},
		listSubscriptions(t, s, payment.SubscriptionFilter{MerchantID: w.m.ID}, payment.ListParams{Limit: 10}), subscriptionID)
	view(t, s, func(ctx context.Context, tx payment.Tx) error {
		if _, err := tx.Charge(ctx, ch.ID); !payment.IsNotFound(err) {
			t.Errorf("the charge after rollback: %v, want NOT_FOUND", err)
		}
		return nil
	})
}
