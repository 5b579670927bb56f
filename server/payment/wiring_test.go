package payment_test

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/kessaitest"
	"github.com/kessai/kessai/server/kessaitest/servicetest"
	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/sqlite"
)

// TestServicesRegisterEveryKind: services.New gives the one work queue it
// makes every kind of work the capabilities queue. Each capability
// registers its own kinds when it is made; one made over a queue of its
// own, or one that forgot a kind, would leave that kind's items waiting as
// unknown on the queue the gateway runs.
func TestServicesRegisterEveryKind(t *testing.T) {
	want := []payment.WorkKind{
		payment.WorkApprovalExpiry, payment.WorkAuthorize, payment.WorkCVVAuthorize, payment.WorkCancel,
		payment.WorkCapture, payment.WorkRefund, payment.WorkScheduledCapture, payment.WorkSubscriptionPayment,
		payment.WorkTokenThreeDS, payment.WorkWebhookDelivery,
	}
	slices.Sort(want)
	got := servicetest.New(t, servicetest.Options{}).Service.Work.Kinds()
	if !slices.Equal(got, want) {
		t.Errorf("kinds registered:\n got %v\nwant %v", got, want)
	}
}

// TestLimitsAgreeAcrossCapabilities: each capability applies the default
// limits to the Config it is given, and they must agree: the limits the
// console shows (Merchants.Limits) are the ones access enforces on app
// tokens and notify on active webhooks, also for a Config that sets some
// limits and leaves others out (the webhook limit then takes its default).
func TestLimitsAgreeAcrossCapabilities(t *testing.T) {
	ctx := context.Background()
	def := payment.DefaultResourceLimits()
	partial := payment.ResourceLimits{AppTokens: 3, TestChargesPerDay: 5}
	partialWant := partial
	partialWant.Webhooks = payment.DefaultWebhooks
	cases := []struct {
		name   string
		limits payment.ResourceLimits
		want   payment.ResourceLimits
	}{
		{"NoneSet", payment.ResourceLimits{}, def},
		{"WebhooksLeftOut", partial, partialWant},
		{"AllSet", payment.ResourceLimits{AppTokens: 2, Webhooks: 3, TestChargesPerDay: 1}, payment.ResourceLimits{AppTokens: 2, Webhooks: 3, TestChargesPerDay: 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := servicetest.New(t, servicetest.Options{Config: payment.Config{Limits: tc.limits}})
			demo := st.SeedDemo(t)
			svc := st.Service
			if got := svc.Merchants.Limits(); got != tc.want {
				t.Fatalf("Merchants.Limits() = %+v, want %+v", got, tc.want)
			}

			// Active webhooks of the store: exactly the shown limit.
			active := true
			for i := range tc.want.Webhooks {
				u := fmt.Sprintf("https://hooks.example/%d", i)
				if _, err := svc.Notify.CreateWebhook(ctx, demo.Caller, demo.StoreID, payment.WebhookInput{
					Triggers: []string{"charge_finished"}, URL: &u, Active: &active,
				}); err != nil {
					t.Fatalf("webhook %d of %d: %v", i+1, tc.want.Webhooks, err)
				}
			}
			u := "https://hooks.example/" + uuid.NewString()
			_, err := svc.Notify.CreateWebhook(ctx, demo.Caller, demo.StoreID, payment.WebhookInput{
				Triggers: []string{"charge_finished"}, URL: &u, Active: &active,
			})
			if payment.ErrorCode(err) != payment.CodeResourceLimit {
				t.Errorf("webhook past the shown limit %d: %v, want %s", tc.want.Webhooks, err, payment.CodeResourceLimit)
			}

			// App tokens of the store: the demo's own is the first.
			for i := 1; i < tc.want.AppTokens; i++ {
				if _, err := svc.Access.CreateAppToken(ctx, demo.Caller, demo.StoreID, payment.NewAppToken{Mode: payment.ModeTest}); err != nil {
					t.Fatalf("app token %d of %d: %v", i+1, tc.want.AppTokens, err)
				}
			}
			_, err = svc.Access.CreateAppToken(ctx, demo.Caller, demo.StoreID, payment.NewAppToken{Mode: payment.ModeTest})
			if payment.ErrorCode(err) != payment.CodeResourceLimit {
				t.Errorf("app token past the shown limit %d: %v, want %s", tc.want.AppTokens, err, payment.CodeResourceLimit)
			}
		})
	}
}

// countingStorage counts the read transactions the services open.
type countingStorage struct {
	payment.Storage
	views atomic.Int64
}

func (s *countingStorage) View(ctx context.Context, fn func(payment.Tx) error) error {
	s.views.Add(1)
	return s.Storage.View(ctx, fn)
}

// TestDefaultsSpareTheStorage: two defaults that services.New's
// capabilities apply for a Config that leaves them out bound how often
// storage is read, which nothing else observes: access trusts a looked-up
// app token for 2 s (AuthCacheTTL), and a long poll re-reads its object
// once a second (LongPollRecheck), not in a loop.
func TestDefaultsSpareTheStorage(t *testing.T) {
	ctx := context.Background()
	clock := kessaitest.NewClock(time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC))
	var storage *countingStorage
	st := servicetest.New(t, servicetest.Options{Clock: clock, Storage: func(db *sqlite.DB) payment.Storage {
		storage = &countingStorage{Storage: db}
		return storage
	}})
	demo := st.SeedDemo(t) // authenticates once: the token is cached now

	steps := []struct {
		name      string
		advance   time.Duration
		wantReads bool
	}{
		{"AuthenticateWithinTwoSeconds", time.Second, false},
		{"AuthenticateAfterTwoSeconds", 2 * time.Second, true},
	}
	for _, s := range steps {
		clock.Advance(s.advance)
		before := storage.views.Load()
		if _, err := st.Service.Access.Authenticate(ctx, demo.Auth, ""); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if read := storage.views.Load() > before; read != s.wantReads {
			t.Errorf("%s: storage read %v, want %v", s.name, read, s.wantReads)
		}
	}

	// A charge nobody processes stays pending: its long poll waits the
	// whole wait, reading when it starts and when the wait is over.
	tok, err := st.Service.Tokens.CreateToken(ctx, demo.Caller, payment.NewToken{
		PaymentType: payment.PaymentTypeCard, Type: payment.OneTime, Email: "shopper@example.com",
		Card: &payment.CardInput{Cardholder: "TARO YAMADA", Number: "4000020000000000", ExpMonth: 12, ExpYear: 2039, CVV: "123"},
	})
	if err != nil {
		t.Fatal(err)
	}
	ch, err := st.Service.Charging.CreateCharge(ctx, demo.Caller, payment.NewCharge{TokenID: tok.ID, Amount: 1000, Currency: "JPY"})
	if err != nil {
		t.Fatal(err)
	}
	before := storage.views.Load()
	if _, err := st.Service.Charging.Charge(ctx, demo.Caller, demo.StoreID, ch.ID, 300*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if reads := storage.views.Load() - before; reads > 3 {
		t.Errorf("a 300 ms long poll read storage %d times, want at most 3 (a re-read a second)", reads)
	}
}
