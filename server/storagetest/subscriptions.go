package storagetest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
)

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

var _ = json.Number("")
