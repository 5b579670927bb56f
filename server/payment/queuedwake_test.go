package payment_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/kessaitest"
	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/univapay"
)

// countingSender takes every webhook delivery with a 200 and counts them.
type countingSender struct{ sent atomic.Int64 }

func (s *countingSender) Send(context.Context, payment.WebhookRequest) (int, error) {
	s.sent.Add(1)
	return 200, nil
}

func (*countingSender) CheckURL(context.Context, string, bool) error { return nil }

// TestWorkQueuedWakesWorker: work that a request or an item queues is
// carried out at once, not at the worker's next look for due work — the
// worker here looks only every hour. The service methods that used to wake
// the worker themselves after their commit (a token's CVV check and 3-D
// Secure, a refund, a redelivery) now rely on the queuing to wake it, and
// so does the charge of a subscription's payment, which the worker itself
// places. Each case first lets the worker use up the wakes made while it
// was set up, so that the one under test has to come from the queuing.
func TestWorkQueuedWakesWorker(t *testing.T) {
	ctx := context.Background()
	card := func(number string, cvvAuth, threeDS bool) payment.NewToken {
		return payment.NewToken{PaymentType: payment.PaymentTypeCard, Type: payment.Recurring, Email: "q@example.com",
			Card: &payment.CardInput{Cardholder: "TARO YAMADA", Number: number, ExpMonth: 12, ExpYear: 2039, CVV: "123",
				CVVAuthorize: payment.CVVAuthorize{Enabled: cvvAuth}, ThreeDS: payment.ThreeDSSettings{Enabled: threeDS}}}
	}
	cases := []struct {
		name string
		// act makes the request under test (after set-up with the worker
		// running) and returns what holds once its work is done.
		act func(t *testing.T, q *queue, in *instance, sender *countingSender) func() bool
	}{
		{"CVVCheckOfANewToken", func(t *testing.T, q *queue, in *instance, _ *countingSender) func() bool {
			tok, err := in.svc.Tokens.CreateToken(ctx, in.caller, card("4000020000000000", true, false))
			if err != nil {
				t.Fatal(err)
			}
			return func() bool { return in.token(t, tok.ID).CVVAuthorize.Status == payment.CVVAuthCurrent }
		}},
		{"ThreeDSOfANewToken", func(t *testing.T, q *queue, in *instance, _ *countingSender) func() bool {
			tok, err := in.svc.Tokens.CreateToken(ctx, in.caller, card("4000020000000000", false, true))
			if err != nil {
				t.Fatal(err)
			}
			return func() bool { return in.token(t, tok.ID).ThreeDS.Status == payment.ThreeDSSuccessful }
		}},
		{"ThreeDSEnabledOnAToken", func(t *testing.T, q *queue, in *instance, _ *countingSender) func() bool {
			tok, err := in.svc.Tokens.CreateToken(ctx, in.caller, card("4000020000000000", false, false))
			if err != nil {
				t.Fatal(err)
			}
			// Nothing queued by the token alone: no wake to use up.
			if _, err := in.svc.Tokens.EnableTokenThreeDS(ctx, in.caller, tok.StoreID, tok.ID, payment.TokenThreeDSRequest{}); err != nil {
				t.Fatal(err)
			}
			return func() bool { return in.token(t, tok.ID).ThreeDS.Status == payment.ThreeDSSuccessful }
		}},
		{"Refund", func(t *testing.T, q *queue, in *instance, _ *countingSender) func() bool {
			ch := in.newCharge(t, true)
			kessaitest.WaitFor(t, 5*time.Second, "the charge done", func() bool {
				return in.charge(t, ch.ID).Status == payment.ChargeSuccessful
			})
			settle()
			r, err := in.svc.Refunds.CreateRefund(ctx, in.caller, ch.StoreID, ch.ID, payment.NewRefund{Amount: 300, Currency: "JPY"})
			if err != nil {
				t.Fatal(err)
			}
			return func() bool {
				got, err := in.svc.Refunds.Refund(ctx, in.caller, ch.StoreID, ch.ID, r.ID, 0)
				return err == nil && got.Status == payment.OperationSuccessful
			}
		}},
		{"Redelivery", func(t *testing.T, q *queue, in *instance, sender *countingSender) func() bool {
			url := "https://hooks.example/kessai"
			hook, err := in.svc.Notify.CreateWebhook(ctx, in.caller, in.caller.Token().StoreID,
				payment.WebhookInput{Triggers: []string{payment.EventTokenCreated}, URL: &url})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := in.svc.Tokens.CreateToken(ctx, in.caller, card("4000020000000000", false, false)); err != nil {
				t.Fatal(err)
			}
			kessaitest.WaitFor(t, 5*time.Second, "the token's event delivered", func() bool { return sender.sent.Load() == 1 })
			evs, err := in.svc.Notify.Events(ctx, in.caller, uuid.Nil, 10)
			if err != nil || len(evs) != 1 {
				t.Fatalf("events %v, %v; want the token's", evs, err)
			}
			settle()
			if _, err := in.svc.Notify.RedeliverEvent(ctx, in.caller, hook.StoreID, hook.ID, evs[0].ID); err != nil {
				t.Fatal(err)
			}
			return func() bool { return sender.sent.Load() == 2 }
		}},
		{"ChargeOfASubscriptionPayment", func(t *testing.T, q *queue, in *instance, _ *countingSender) func() bool {
			tok, err := in.svc.Tokens.CreateToken(ctx, in.caller, payment.NewToken{PaymentType: payment.PaymentTypeCard,
				Type: payment.SubscriptionToken, Email: "q@example.com",
				Card: &payment.CardInput{Cardholder: "TARO YAMADA", Number: "4000020000000000", ExpMonth: 12, ExpYear: 2039, CVV: "123"}})
			if err != nil {
				t.Fatal(err)
			}
			start := payment.Date{Year: 2026, Month: 12, Day: 1}
			sub, err := in.svc.Subscriptions.CreateSubscription(ctx, in.caller, payment.NewSubscription{TokenID: tok.ID, Amount: 1000,
				Currency: "JPY", Period: "monthly", Schedule: payment.ScheduleSettings{StartOn: &start}})
			if err != nil {
				t.Fatal(err)
			}
			settle()
			// The payment falls due; a token's CVV check wakes the worker
			// once (its queuing is the only wake), and the claim takes the
			// payment's item with it. The charge that item places is
			// authorised only if placing it woke the worker again.
			q.clk.Set(time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC))
			if _, err := in.svc.Tokens.CreateToken(ctx, in.caller, card("4000020000000000", true, false)); err != nil {
				t.Fatal(err)
			}
			return func() bool {
				got, err := in.svc.Subscriptions.Subscription(ctx, in.caller, uuid.Nil, sub.ID, 0)
				return err == nil && got.PaymentsMade == 1
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q := newQueue(t)
			sender := &countingSender{}
			in := q.instance(t, "w", payment.Config{EncodeEvent: univapay.EncodeEvent, WebhookSender: sender})
			in.run(t, time.Hour)
			// The demo's seeding woke nobody yet; a first pause lets the
			// worker start and claim what is due.
			settle()
			done := tc.act(t, q, in, sender)
			kessaitest.WaitFor(t, 5*time.Second, "the work carried out", done)
		})
	}
}

// settle gives the running worker the time to use up the wakes made so
// far: one left over would have it claim again, and the work under test
// would not need a wake of its own.
func settle() { time.Sleep(100 * time.Millisecond) }

func (in *instance) token(t testing.TB, id uuid.UUID) *payment.TransactionToken {
	t.Helper()
	tok, err := in.svc.Tokens.Token(context.Background(), in.caller, in.caller.Token().StoreID, id, 0)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}
