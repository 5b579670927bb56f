package payment_test

import (
	"context"
	"encoding/json"
	"path"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/kessaitest"
	"github.com/kessai/kessai/server/kessaitest/servicetest"
	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/payment/services"
	"github.com/kessai/kessai/server/sandbox"
	"github.com/kessai/kessai/server/univapay"
)

// pathFixture is a service with events recorded and a Meter, for the
// events and settlements of one path at a time.
type pathFixture struct {
	t     *testing.T
	svc   *services.Set
	c     *payment.Caller
	store uuid.UUID
	clock *kessaitest.Clock
	meter *fakeMeter
	// after is the last event news read; told is how many settlements
	// settled read.
	after uuid.UUID
	told  int
}

func newPathFixture(t *testing.T, proc payment.Processor) *pathFixture {
	t.Helper()
	f := &pathFixture{t: t, clock: kessaitest.NewClock(time.Date(2027, 1, 10, 3, 0, 0, 0, time.UTC)), meter: &fakeMeter{}}
	st := servicetest.New(t, servicetest.Options{
		EncodeEvent: univapay.EncodeEvent, Clock: f.clock, Processor: proc,
		Configure: func(c *payment.Config) { c.Meter = f.meter },
	})
	demo := st.SeedDemo(t)
	f.svc, f.c, f.store = st.Service, demo.Caller, demo.StoreID
	return f
}

// news wants the events recorded since the last call, in order, as
// "name id".
func (f *pathFixture) news(want ...string) {
	f.t.Helper()
	evs, err := f.svc.Notify.Events(context.Background(), f.c, f.after, 100)
	if err != nil {
		f.t.Fatal(err)
	}
	got := []string{}
	for _, e := range evs {
		got = append(got, e.Name+" "+e.ResourceID.String())
		f.after = e.ID
	}
	if want == nil {
		want = []string{}
	}
	if !slices.Equal(got, want) {
		f.t.Errorf("events %q, want %q", got, want)
	}
}

// settled wants what the Meter was told of settlements since the last
// call, as "kind/status/error name".
func (f *pathFixture) settled(want ...string) {
	f.t.Helper()
	all := f.meter.settledNow()
	got := all[f.told:]
	f.told = len(all)
	if want == nil {
		want = []string{}
	}
	if !slices.Equal(got, want) {
		f.t.Errorf("the Meter was told %q, want %q", got, want)
	}
}

func (f *pathFixture) drain() {
	f.t.Helper()
	if _, err := f.svc.Work.ProcessPending(context.Background(), 50); err != nil {
		f.t.Fatal(err)
	}
}

func (f *pathFixture) card(typ payment.TokenType, number string, cvvAuth bool) *payment.TransactionToken {
	f.t.Helper()
	tok, err := f.svc.Tokens.CreateToken(context.Background(), f.c, payment.NewToken{
		PaymentType: payment.PaymentTypeCard, Type: typ, Email: "shopper@example.com",
		Card: &payment.CardInput{Cardholder: "TARO YAMADA", Number: number, ExpMonth: 12, ExpYear: 2039, CVV: "123",
			CVVAuthorize: payment.CVVAuthorize{Enabled: cvvAuth}},
	})
	if err != nil {
		f.t.Fatal(err)
	}
	f.news(payment.EventTokenCreated + " " + tok.ID.String())
	return tok
}

func (f *pathFixture) wallet() *payment.TransactionToken {
	f.t.Helper()
	tok, err := f.svc.Tokens.CreateToken(context.Background(), f.c, payment.NewToken{
		PaymentType: payment.PaymentTypeOnline, Type: payment.OneTime, Email: "shopper@example.com",
		Data: &payment.TokenData{Brand: "pay_pay_online"},
	})
	if err != nil {
		f.t.Fatal(err)
	}
	f.news(payment.EventTokenCreated + " " + tok.ID.String())
	return tok
}

func (f *pathFixture) charge(tok *payment.TransactionToken, capture bool, threeDS *payment.ThreeDSSettings) *payment.Charge {
	f.t.Helper()
	ch, err := f.svc.Charging.CreateCharge(context.Background(), f.c, payment.NewCharge{
		TokenID: tok.ID, Amount: 1500, Currency: "JPY", Capture: &capture, ThreeDS: threeDS,
	})
	if err != nil {
		f.t.Fatal(err)
	}
	f.news()
	return ch
}

func (f *pathFixture) chargeNow(id uuid.UUID) *payment.Charge {
	f.t.Helper()
	ch, err := f.svc.Charging.Charge(context.Background(), f.c, f.store, id, 0)
	if err != nil {
		f.t.Fatal(err)
	}
	return ch
}

func (f *pathFixture) tokenNow(id uuid.UUID) *payment.TransactionToken {
	f.t.Helper()
	tok, err := f.svc.Tokens.Token(context.Background(), f.c, f.store, id, 0)
	if err != nil {
		f.t.Fatal(err)
	}
	return tok
}

// act takes an action on the approval whose page issuerToken is.
func (f *pathFixture) act(issuerToken string, action payment.ApprovalAction, code string) {
	f.t.Helper()
	if _, err := f.svc.Charging.ActOnApproval(context.Background(), path.Base(issuerToken), action, code); err != nil {
		f.t.Fatal(err)
	}
}

// challenged makes a charge that awaits its 3-D Secure challenge and
// returns it with the challenge's page.
func (f *pathFixture) challenged() (*payment.Charge, string) {
	f.t.Helper()
	ch := f.charge(f.card(payment.OneTime, "4000000000003220", false), true, nil)
	f.drain()
	f.news(payment.EventChargeUpdated + " " + ch.ID.String())
	f.settled("charge/awaiting/")
	it, err := f.svc.Charging.ChargeThreeDSIssuerToken(context.Background(), f.c, f.store, ch.ID)
	if err != nil {
		f.t.Fatal(err)
	}
	return ch, it.IssuerToken
}

// awaitingWallet makes a wallet charge that awaits its shopper and returns
// it with the wallet's page.
func (f *pathFixture) awaitingWallet() (*payment.Charge, string) {
	f.t.Helper()
	ch := f.charge(f.wallet(), true, nil)
	f.drain()
	f.news(payment.EventChargeUpdated + " " + ch.ID.String())
	f.settled("charge/awaiting/")
	it, err := f.svc.Charging.ChargeIssuerToken(context.Background(), f.c, f.store, ch.ID)
	if err != nil {
		f.t.Fatal(err)
	}
	return ch, it.IssuerToken
}

// challengedToken makes a token whose 3-D Secure challenge awaits its
// shopper and returns it with the challenge's page.
func (f *pathFixture) challengedToken() (*payment.TransactionToken, string) {
	f.t.Helper()
	tok := f.card(payment.OneTime, "4000002760003184", false)
	if _, err := f.svc.Tokens.EnableTokenThreeDS(context.Background(), f.c, f.store, tok.ID, payment.TokenThreeDSRequest{}); err != nil {
		f.t.Fatal(err)
	}
	f.news()
	f.drain()
	f.news(payment.EventTokenThreeDSUpdated + " " + tok.ID.String())
	it, err := f.svc.Tokens.TokenThreeDSIssuerToken(context.Background(), f.c, f.store, tok.ID)
	if err != nil {
		f.t.Fatal(err)
	}
	return tok, it.IssuerToken
}

// errName is the Meter's name of a payment error code.
func errName(code int) string {
	return payment.PaymentErrorName(payment.NewPaymentError(code, ""))
}

// refusingVoids is the sandbox acquirer, refusing every void.
type refusingVoids struct{ sandbox.Processor }

func (refusingVoids) Void(context.Context, uuid.UUID, payment.CardDetails) (payment.ProcessorResult, error) {
	return payment.ProcessorResult{Error: payment.NewPaymentError(payment.ErrCancelUnavailable, "the acquirer refused the void")}, nil
}

// TestEventsOfEachPath: each path that changes a token, charge, refund or
// cancel records its own event, and tells the Meter of what it settled,
// where TestWebhookEveryEvent and TestEventsOfEachChange take only one
// path of a rule: a PATCH of each field a merchant sees; a token's 3-D
// Secure failing at once, and its challenge failed, cancelled or run out;
// a CVV check refused; a charge's challenge cancelled or run out, a card
// not enrolled where 3-D Secure is required; a wallet paid, refused or run
// out; a capture made or refused; a refund and a void refused; a
// subscription's first charge only authorised, which counts as paid; a
// subscription's events showing its next payment as it is then. And the
// changes that are no news stay so: a subscription token's deletion, 3-D
// Secure turned off, a wrong code with tries left, a token taken by a
// subscription, a free first period paid.
func TestEventsOfEachPath(t *testing.T) {
	ctx := context.Background()

	t.Run("TokenPatchedFieldByField", func(t *testing.T) {
		t.Parallel()
		f := newPathFixture(t, nil)
		tok := f.card(payment.Recurring, "4000020000000000", false)
		month, year := 11, 2040
		for _, u := range []payment.TokenUpdate{
			{Metadata: payment.Metadata{"order": "1"}},
			{ExpMonth: &month},
			{ExpYear: &year},
			{Billing: &payment.Billing{Line1: "1-2-3 Marunouchi", City: "Chiyoda-ku", State: "Tokyo", Country: "JP", Zip: "1000005"}},
		} {
			if _, err := f.svc.Tokens.UpdateToken(ctx, f.c, f.store, tok.ID, u); err != nil {
				t.Fatal(err)
			}
			f.news(payment.EventTokenUpdated + " " + tok.ID.String())
		}
		// Its CVC is let go at the first authorisation; a new one given
		// by PATCH is news.
		ch := f.charge(tok, true, nil)
		f.drain()
		f.news(payment.EventChargeFinished + " " + ch.ID.String())
		cvv := "456"
		if _, err := f.svc.Tokens.UpdateToken(ctx, f.c, f.store, tok.ID, payment.TokenUpdate{CVV: &cvv}); err != nil {
			t.Fatal(err)
		}
		f.news(payment.EventTokenUpdated + " " + tok.ID.String())
	})

	t.Run("SubscriptionTokenDeleted", func(t *testing.T) {
		t.Parallel()
		f := newPathFixture(t, nil)
		tok := f.card(payment.SubscriptionToken, "4000020000000000", false)
		if err := f.svc.Tokens.DeleteToken(ctx, f.c, f.store, tok.ID); err != nil {
			t.Fatal(err)
		}
		f.news()
	})

	t.Run("TokenThreeDSFailsAtOnce", func(t *testing.T) {
		t.Parallel()
		f := newPathFixture(t, nil)
		tok := f.card(payment.OneTime, "4000000000003097", false)
		if _, err := f.svc.Tokens.EnableTokenThreeDS(ctx, f.c, f.store, tok.ID, payment.TokenThreeDSRequest{}); err != nil {
			t.Fatal(err)
		}
		f.news()
		f.drain()
		if got := f.tokenNow(tok.ID).ThreeDS.Status; got != payment.ThreeDSFailed {
			t.Fatalf("the token's 3-D Secure is %s, want failed", got)
		}
		f.news(payment.EventTokenThreeDSUpdated + " " + tok.ID.String())
		// Turned off: no status to tell of.
		if err := f.svc.Tokens.DisableTokenThreeDS(ctx, f.c, f.store, tok.ID); err != nil {
			t.Fatal(err)
		}
		f.news()
	})

	t.Run("TokenChallengeEnds", func(t *testing.T) {
		t.Parallel()
		f := newPathFixture(t, nil)
		canceled, page := f.challengedToken()
		f.act(page, payment.ActionCancel, "")
		f.news(payment.EventTokenThreeDSUpdated + " " + canceled.ID.String())

		failed, page := f.challengedToken()
		f.act(page, payment.ActionAnswer, "000000")
		f.act(page, payment.ActionAnswer, "000000")
		f.news() // tries left: still awaiting
		f.act(page, payment.ActionAnswer, "000000")
		f.news(payment.EventTokenThreeDSUpdated + " " + failed.ID.String())

		expired, _ := f.challengedToken()
		f.clock.Advance(time.Hour)
		f.drain()
		f.news(payment.EventTokenThreeDSUpdated + " " + expired.ID.String())
		for _, id := range []uuid.UUID{canceled.ID, failed.ID, expired.ID} {
			if got := f.tokenNow(id).ThreeDS.Status; got != payment.ThreeDSFailed {
				t.Errorf("token %s: 3-D Secure %s, want failed", id, got)
			}
		}
	})

	t.Run("CVVCheckRefused", func(t *testing.T) {
		t.Parallel()
		f := newPathFixture(t, nil)
		tok := f.card(payment.Recurring, "4111111111111111", true)
		f.drain()
		if got := f.tokenNow(tok.ID).CVVAuthorize.Status; got != payment.CVVAuthFailed {
			t.Fatalf("the CVV check is %s, want failed", got)
		}
		f.news(payment.EventTokenCVVAuthUpdated + " " + tok.ID.String())
	})

	t.Run("ChargeChallengeEnds", func(t *testing.T) {
		t.Parallel()
		f := newPathFixture(t, nil)
		canceled, page := f.challenged()
		f.act(page, payment.ActionCancel, "")
		f.news(payment.EventChargeFinished + " " + canceled.ID.String())
		f.settled("charge/failed/" + errName(payment.ErrThreeDSNotCompleted))

		expired, _ := f.challenged()
		f.clock.Advance(time.Hour)
		f.drain()
		f.news(payment.EventChargeFinished + " " + expired.ID.String())
		f.settled("charge/failed/" + errName(payment.ErrThreeDSNotCompleted))
	})

	t.Run("ChargeNotEnrolled", func(t *testing.T) {
		t.Parallel()
		f := newPathFixture(t, nil)
		ch := f.charge(f.card(payment.OneTime, "4000000000003097", false), true, &payment.ThreeDSSettings{Mode: "require"})
		f.drain()
		if got := f.chargeNow(ch.ID); got.Status != payment.ChargeFailed || got.Error == nil || got.Error.Code != payment.ErrCardNotEnrolled {
			t.Fatalf("the charge is %s (%v), want failed with 356", got.Status, got.Error)
		}
		f.news(payment.EventChargeFinished + " " + ch.ID.String())
		f.settled("charge/failed/" + errName(payment.ErrCardNotEnrolled))
	})

	t.Run("WalletEnds", func(t *testing.T) {
		t.Parallel()
		f := newPathFixture(t, nil)
		paid, page := f.awaitingWallet()
		f.act(page, payment.ActionPay, "")
		f.news(payment.EventChargeFinished + " " + paid.ID.String())
		f.settled("charge/successful/")

		refused, page := f.awaitingWallet()
		f.act(page, payment.ActionFail, "")
		f.news(payment.EventChargeFinished + " " + refused.ID.String())
		f.settled("charge/failed/" + errName(payment.ErrWalletRejected))

		expired, _ := f.awaitingWallet()
		f.clock.Advance(24 * time.Hour)
		f.drain()
		f.news(payment.EventChargeFinished + " " + expired.ID.String())
		f.settled("charge/failed/" + errName(payment.ErrConfirmationExpired))
	})

	t.Run("Capture", func(t *testing.T) {
		t.Parallel()
		f := newPathFixture(t, nil)
		for _, tc := range []struct {
			card    string
			settled string
		}{
			{"4000020000000000", "charge/successful/"},
			{"4000000000000341", "charge/failed/" + errName(payment.ErrChargeExpired)},
		} {
			ch := f.charge(f.card(payment.OneTime, tc.card, false), false, nil)
			f.drain()
			f.news(payment.EventChargeUpdated + " " + ch.ID.String())
			f.settled("charge/authorized/")
			if err := f.svc.Charging.CaptureCharge(ctx, f.c, f.store, ch.ID, payment.ChargeCapture{}); err != nil {
				t.Fatal(err)
			}
			f.news()
			f.drain()
			f.news(payment.EventChargeFinished + " " + ch.ID.String())
			f.settled(tc.settled)
		}
	})

	t.Run("RefundRefused", func(t *testing.T) {
		t.Parallel()
		f := newPathFixture(t, nil)
		ch := f.charge(f.card(payment.OneTime, "4242424242424242", false), true, nil)
		f.drain()
		f.news(payment.EventChargeFinished + " " + ch.ID.String())
		f.settled("charge/successful/")
		r, err := f.svc.Refunds.CreateRefund(ctx, f.c, f.store, ch.ID, payment.NewRefund{Amount: 500, Currency: "JPY"})
		if err != nil {
			t.Fatal(err)
		}
		f.drain()
		f.news(payment.EventRefundFinished + " " + r.ID.String())
		f.settled("refund/failed/" + errName(payment.ErrRefundFailed))
	})

	t.Run("VoidRefused", func(t *testing.T) {
		t.Parallel()
		f := newPathFixture(t, refusingVoids{})
		ch := f.charge(f.card(payment.OneTime, "4000020000000000", false), false, nil)
		f.drain()
		f.news(payment.EventChargeUpdated + " " + ch.ID.String())
		f.settled("charge/authorized/")
		cn, err := f.svc.Refunds.CreateCancel(ctx, f.c, f.store, ch.ID, payment.NewCancel{})
		if err != nil {
			t.Fatal(err)
		}
		f.drain()
		f.news(payment.EventCancelFinished + " " + cn.ID.String())
		f.settled("cancel/failed/" + errName(payment.ErrCancelUnavailable))
		if got := f.chargeNow(ch.ID).Status; got != payment.ChargeAuthorized {
			t.Errorf("the charge is %s after a refused void, want authorized", got)
		}
	})

	t.Run("SubscriptionEventsCarryTheNextPayment", func(t *testing.T) {
		t.Parallel()
		f := newPathFixture(t, nil)
		tok := f.card(payment.SubscriptionToken, "4000020000000000", false)
		from := f.after
		sub, err := f.svc.Subscriptions.CreateSubscription(ctx, f.c, payment.NewSubscription{TokenID: tok.ID, Amount: 1000, Currency: "JPY", Period: "monthly"})
		if err != nil {
			t.Fatal(err)
		}
		first := sub.NextPayment.ID
		f.drain()
		sub, err = f.svc.Subscriptions.Subscription(ctx, f.c, f.store, sub.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		second := sub.NextPayment.ID
		if second == first {
			t.Fatal("the first payment is still the next one")
		}
		evs, err := f.svc.Notify.Events(ctx, f.c, from, 100)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range evs {
			if e.ResourceID != sub.ID {
				continue
			}
			var data struct {
				NextPayment *struct {
					ID uuid.UUID `json:"id"`
				} `json:"next_payment"`
			}
			if err := json.Unmarshal(e.Data, &data); err != nil {
				t.Fatal(err)
			}
			next := "none"
			switch {
			case data.NextPayment == nil:
			case data.NextPayment.ID == first:
				next = "first"
			case data.NextPayment.ID == second:
				next = "second"
			default:
				next = data.NextPayment.ID.String()
			}
			got = append(got, e.Name+" next "+next)
		}
		want := []string{payment.EventSubscriptionCreated + " next first", payment.EventSubscriptionPayment + " next second"}
		if !slices.Equal(got, want) {
			t.Errorf("the subscription's events %q, want %q", got, want)
		}
	})

	t.Run("SubscriptionFirstChargeAuthorised", func(t *testing.T) {
		t.Parallel()
		f := newPathFixture(t, nil)
		sub, err := f.svc.Subscriptions.CreateSubscription(ctx, f.c, payment.NewSubscription{
			TokenID: f.card(payment.SubscriptionToken, "4000020000000000", false).ID, Amount: 1000, Currency: "JPY",
			Period: "monthly", FirstChargeAuthorizationOnly: true,
		})
		if err != nil {
			t.Fatal(err)
		}
		f.news(payment.EventSubscriptionCreated + " " + sub.ID.String())
		f.drain()
		charges, err := f.svc.Subscriptions.SubscriptionCharges(ctx, f.c, f.store, sub.ID, uuid.Nil, payment.ListParams{Limit: 10})
		if err != nil || len(charges.Items) != 1 {
			t.Fatalf("the subscription's charges: %v, %v", charges.Items, err)
		}
		// Authorised counts as paid.
		f.news(payment.EventChargeUpdated+" "+charges.Items[0].ID.String(), payment.EventSubscriptionPayment+" "+sub.ID.String())
		f.settled("charge/authorized/")
		if sub, err = f.svc.Subscriptions.Subscription(ctx, f.c, f.store, sub.ID, 0); err != nil || sub.PaymentsMade != 1 {
			t.Errorf("the subscription after its first charge's authorisation: %+v, %v; want one payment made", sub, err)
		}
	})

	t.Run("SubscriptionFreeFirstPeriod", func(t *testing.T) {
		t.Parallel()
		f := newPathFixture(t, nil)
		free := int64(0)
		sub, err := f.svc.Subscriptions.CreateSubscription(ctx, f.c, payment.NewSubscription{
			TokenID: f.card(payment.SubscriptionToken, "4000020000000000", false).ID, Amount: 1000, Currency: "JPY",
			Period: "monthly", InitialAmount: &free,
		})
		if err != nil {
			t.Fatal(err)
		}
		// Paid as it starts, but a payment of nothing is no news.
		f.news(payment.EventSubscriptionCreated + " " + sub.ID.String())
		if sub.PaymentsMade != 1 {
			t.Errorf("payments made %d, want the free first one", sub.PaymentsMade)
		}
	})

	t.Run("TokenTakenBySubscription", func(t *testing.T) {
		t.Parallel()
		f := newPathFixture(t, nil)
		start := payment.Date{Year: 2027, Month: 2, Day: 1}
		sub, err := f.svc.Subscriptions.CreateSubscription(ctx, f.c, payment.NewSubscription{
			TokenID: f.card(payment.SubscriptionToken, "4000020000000000", false).ID, Amount: 1000, Currency: "JPY",
			Period: "monthly", Schedule: payment.ScheduleSettings{StartOn: &start},
		})
		if err != nil {
			t.Fatal(err)
		}
		f.news(payment.EventSubscriptionCreated + " " + sub.ID.String())
		next := f.card(payment.SubscriptionToken, "4000020000000000", false)
		if _, err := f.svc.Subscriptions.ChangeSubscriptionToken(ctx, f.c, f.store, sub.ID, next.ID); err != nil {
			t.Fatal(err)
		}
		f.news()
	})
}
