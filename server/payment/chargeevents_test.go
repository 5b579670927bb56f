package payment_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/kessaitest"
	"github.com/kessai/kessai/server/kessaitest/servicetest"
	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/univapay"
)

// TestChargeEvents: a charge's events and its refunds', oldest first, to
// whoever may see the charge and to nobody else.
func TestChargeEvents(t *testing.T) {
	cs := &consoleStack{clock: kessaitest.NewClock(time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)),
		throttle: &fakeThrottle{}, mail: &mailCatcher{}, dir: t.TempDir()}
	cs.Stack = servicetest.New(t, servicetest.Options{
		Clock: cs.clock, PublicOrigin: consoleOrigin, Path: filepath.Join(cs.dir, "kessai.db"),
		EncodeEvent: univapay.EncodeEvent, Config: payment.Config{Throttle: cs.throttle, ResetMailer: cs.mail},
	})
	cs.demo = cs.SeedDemo(t)
	ctx := context.Background()
	svc, store := cs.Service, cs.demo.StoreID

	ch := servicetest.Pay(t, svc, cs.demo.Caller, "4000020000000000", 1000, "JPY", nil)
	other := servicetest.Pay(t, svc, cs.demo.Caller, "4000020000000000", 2000, "JPY", nil)
	r, err := svc.Refunds.CreateRefund(ctx, cs.demo.Caller, store, ch.ID, payment.NewRefund{Amount: 400, Currency: "JPY"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Work.ProcessPending(ctx, 50); err != nil {
		t.Fatal(err)
	}

	_, sess := cs.signIn(t, cs.demo.ConsolePassword)
	c, err := svc.Console.ConsoleCaller(ctx, sess, store)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := svc.Charging.ChargeEvents(ctx, c, store, ch.ID, 10)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range evs {
		got = append(got, e.Name+" "+e.ResourceID.String())
	}
	want := []string{payment.EventChargeFinished + " " + ch.ID.String(), payment.EventRefundFinished + " " + r.ID.String()}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("events = %q, want %q", got, want)
	}
	if evs, err := svc.Charging.ChargeEvents(ctx, c, store, ch.ID, 1); err != nil || len(evs) != 1 || evs[0].ResourceID != ch.ID {
		t.Errorf("with a limit of 1: %v, %v", evs, err)
	}
	if evs, err := svc.Charging.ChargeEvents(ctx, c, store, other.ID, 10); err != nil || len(evs) != 1 || evs[0].ResourceID != other.ID {
		t.Errorf("the other charge's events: %v, %v", evs, err)
	}

	// Whoever may not see the charge sees no events: another merchant,
	// the live console, another store's path, an unknown id.
	otherUser, otherStore := cs.otherMerchant(t, "other@kessai.test")
	otherSess := &payment.ConsoleSession{UserID: otherUser.ID, MerchantID: otherUser.MerchantID, Mode: payment.ModeTest,
		CreatedOn: cs.clock.Now()}
	otherCaller, err := svc.Console.ConsoleCaller(ctx, otherSess, uuid.Nil)
	if err != nil {
		t.Fatal(err)
	}
	liveSess := *sess
	liveSess.Mode = payment.ModeLive
	live, err := svc.Console.ConsoleCaller(ctx, &liveSess, store)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		c       *payment.Caller
		storeID uuid.UUID
		id      uuid.UUID
	}{
		{"OtherMerchant", otherCaller, store, ch.ID},
		{"OtherMerchantsStorePath", otherCaller, otherStore.ID, ch.ID},
		{"LiveMode", live, store, ch.ID},
		{"OtherStorePath", c, otherStore.ID, ch.ID},
		{"RefundIDAsCharge", c, store, r.ID},
		{"Unknown", c, store, payment.NewID()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			evs, err := svc.Charging.ChargeEvents(ctx, tc.c, tc.storeID, tc.id, 10)
			if !payment.IsNotFound(err) {
				t.Errorf("ChargeEvents = %d events, %v; want NOT_FOUND", len(evs), err)
			}
		})
	}
}
