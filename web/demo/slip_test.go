package demo

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/kessaitest"
	"github.com/kessai/kessai/server/kessaitest/servicetest"
	"github.com/kessai/kessai/server/payment"
)

// slipShop is the storefront with its webhook registered at a gateway
// whose clock the test moves, the shop reading the same clock (the
// deliveries' timestamps are the gateway's).
type slipShop struct {
	*hookedShop
	clock *kessaitest.Clock
}

func newSlipShop(t *testing.T) *slipShop {
	t.Helper()
	clock := kessaitest.NewClock(time.Date(2026, 11, 28, 1, 0, 0, 0, time.UTC))
	f := newGatewayFixtureOn(t, clock)
	h := newHookedShop(t, f, "")
	h.d.now = clock.Now
	if _, err := h.d.registerWebhook(context.Background()); err != nil {
		t.Fatal(err)
	}
	return &slipShop{hookedShop: h, clock: clock}
}

// slipCharge makes, as the widget would for a shopper who chose konbini
// ("" store: a bank transfer), a token and a charge for the order, and
// runs the worker until the charge awaits the shopper.
func (s *slipShop) slipCharge(t *testing.T, store string, amount int64, ref string) *payment.Charge {
	t.Helper()
	ctx := context.Background()
	c := s.caller(t)
	nt := payment.NewToken{PaymentType: payment.PaymentTypeBankTransfer, Type: payment.OneTime,
		Data: &payment.TokenData{Brand: "bank_test_brand"}}
	if store != "" {
		nt = payment.NewToken{PaymentType: payment.PaymentTypeKonbini, Type: payment.OneTime, Email: "shopper@example.com",
			Data: &payment.TokenData{CustomerName: "山田 太郎", ConvenienceStore: store,
				PhoneNumber: &payment.Phone{CountryCode: 81, LocalNumber: "090-1234-5678"}}}
	}
	tok, err := s.svc.Tokens.CreateToken(ctx, c, nt)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := s.svc.Charging.CreateCharge(ctx, c, payment.NewCharge{TokenID: tok.ID, Amount: amount, Currency: "JPY",
		Metadata: payment.Metadata{"order_id": ref}})
	if err != nil {
		t.Fatal(err)
	}
	return servicetest.AwaitCharge(t, s.svc, c, ch.StoreID, ch.ID, "the charge to await its shopper", servicetest.Awaiting)
}

// deliver runs the gateway's worker until every delivery of the charge's
// events has reached the shop's receiver, events named names among them.
func (s *slipShop) deliver(t *testing.T, chargeID uuid.UUID, names ...string) {
	t.Helper()
	ctx := context.Background()
	hook := uuid.MustParse(s.d.hook.Load().ID)
	kessaitest.WaitFor(t, 5*time.Second, "the deliveries of "+strings.Join(names, ", "), func() bool {
		if _, err := s.svc.Work.ProcessPending(ctx, 50); err != nil {
			t.Fatal(err)
		}
		log, err := s.svc.Notify.WebhookDeliveries(ctx, s.caller(t), s.storeA.ID, hook, payment.ListParams{Limit: 100, Direction: payment.Desc})
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, e := range log.Items {
			if e.Event.ResourceID != chargeID {
				continue
			}
			if e.Delivery.Status == payment.DeliveryFailed || e.Delivery.LastError != "" {
				t.Fatalf("delivery of %s failed: %d %s", e.Event.Name, e.Delivery.LastStatus, e.Delivery.LastError)
			}
			if e.Delivery.Status != payment.DeliverySuccessful {
				return false
			}
			seen[e.Event.Name] = true
		}
		for _, n := range names {
			if !seen[n] {
				return false
			}
		}
		return true
	})
}

// simulate is the sandbox's test helper: what the shopper does away from
// the shop.
func (s *slipShop) simulate(t *testing.T, ch *payment.Charge, action payment.ApprovalAction, amount int64) *payment.Charge {
	t.Helper()
	got, err := s.svc.Charging.SimulateShopper(context.Background(), s.caller(t), s.storeA.ID, ch.ID, action, amount, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func (s *slipShop) order(t *testing.T, ref string) *order {
	t.Helper()
	o, ok := s.d.orders.get(ref)
	if !ok {
		t.Fatalf("no order %s", ref)
	}
	return o
}

func pageHas(t *testing.T, what, body string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(body, w) {
			t.Errorf("%s lacks %q", what, w)
		}
	}
}

// TestDemoBankTransferOrder: an order paid by bank transfer is placed
// awaiting payment, with the account and the deadline read from the
// charge's issuer token; the gateway's notifications record a short
// deposit (still awaiting, the rest to pay) and then pay the order, as the
// list shows without anyone looking at the order's page.
func TestDemoBankTransferOrder(t *testing.T) {
	s := newSlipShop(t)
	sh := s.shopper(t)
	ref, total := sh.fillCart("yirgacheffe", "hokkaido-morning", "drip-bags")
	if total != 5000 {
		t.Fatalf("the cart totals %d", total)
	}
	// The pop-up and the hosted page offer both.
	_, body := sh.get("/checkout")
	pageHas(t, "the checkout page", html.UnescapeString(body), `data-payment-types="card,pay_pay_online,konbini,bank_transfer"`,
		"paymentTypes=card%2Cpay_pay_online%2Ckonbini%2Cbank_transfer")
	ch := s.slipCharge(t, "", total, ref)

	res, _ := sh.post("/orders", url.Values{"order": {ref}, "chargeId": {ch.ID.String()}, "method": {"modal"}})
	if loc := res.Header.Get("Location"); res.StatusCode != http.StatusSeeOther || loc != "/orders/"+ref+"?thanks=1" {
		t.Fatalf("posting the awaiting charge: %d %s", res.StatusCode, loc)
	}
	o := s.order(t, ref)
	it, err := s.svc.Charging.ChargeIssuerToken(context.Background(), s.caller(t), s.storeA.ID, ch.ID)
	if err != nil {
		t.Fatal(err)
	}
	if o.Status != orderAwaiting || o.PaymentType != paymentBankTransfer || o.Slip == nil || o.Amount != total ||
		o.Slip.URL != it.IssuerToken || o.Slip.AccountNumber == "" || o.Slip.AccountNumber != it.Account.AccountNumber ||
		o.Slip.BankName != it.Account.BankName || !o.Slip.Deadline.Equal(*ch.CaptureAt) {
		t.Fatalf("order %+v slip %+v, issuer token %+v", o, o.Slip, it)
	}
	if !strings.HasPrefix(o.Slip.URL, s.srv.URL+payment.SlipPagePath) {
		t.Errorf("the instructions are at %s", o.Slip.URL)
	}
	if _, ok := s.d.checkouts.get(ref); ok {
		t.Error("the placed checkout is still kept")
	}
	if _, body := sh.get("/cart"); !strings.Contains(body, "Your cart is empty") {
		t.Error("the cart was not emptied")
	}
	_, body = sh.get("/orders/" + ref + "?thanks=1")
	pageHas(t, "the awaiting order's page", html.UnescapeString(body), "Thank you! Now please pay", "Awaiting payment", "Bank transfer",
		o.Slip.AccountNumber, o.Slip.BranchName, `href="`+o.Slip.URL+`"`, "¥5,000", when(o.Slip.Deadline, "en"))

	// A short deposit: the notification records it, the order awaits the rest.
	s.simulate(t, ch, payment.ActionDeposit, 2000)
	s.deliver(t, ch.ID, payment.EventBankTransferStatusUpdated)
	if o := s.order(t, ref); o.Status != orderAwaiting || o.Deposited != 2000 || o.TransferStatus != "insufficient" {
		t.Fatalf("after 2000: %s, %d %s", o.Status, o.Deposited, o.TransferStatus)
	}
	_, body = sh.get("/orders/" + ref)
	pageHas(t, "the order's page after a short deposit", body, "¥2,000 of ¥5,000 received", "Please transfer the remaining ¥3,000.")

	// Three days later on the gateway's clock, the rest: the order is paid.
	s.clock.Advance(72 * time.Hour)
	s.simulate(t, ch, payment.ActionDeposit, 3000)
	s.deliver(t, ch.ID, payment.EventChargeFinished, payment.EventBankTransferStatusUpdated)
	o = s.order(t, ref)
	if o.Status != "successful" || o.Deposited != 5000 || o.TransferStatus != "exact" || o.EndedAt == nil ||
		!o.EndedAt.Equal(s.clock.Now()) {
		t.Fatalf("after the rest: %+v", o)
	}
	_, body = sh.get("/orders")
	pageHas(t, "the orders list", body, ref, "Paid", "Bank transfer")
	_, body = sh.get("/orders/" + ref)
	pageHas(t, "the paid order's page", body, "The gateway told the shop your payment arrived", "Paid")
	if strings.Contains(body, o.Slip.AccountNumber) {
		t.Error("the paid order still asks for a transfer")
	}
	sh.get("/lang/ja")
	_, body = sh.get("/orders")
	pageHas(t, "the Japanese orders list", body, "銀行振込", "支払い済み")
}

// TestDemoSlipOrderEnds: a konbini order that is not paid ends unpaid, as
// the gateway says: at its deadline on the gateway's clock (expired), or
// canceled by the merchant; the notification of a deadline moved later
// moves the order's.
func TestDemoSlipOrderEnds(t *testing.T) {
	s := newSlipShop(t)
	ctx := context.Background()

	sh := s.shopper(t)
	ref, total := sh.fillCart("drip-bags")
	ch := s.slipCharge(t, "family_mart", total, ref)
	if res, _ := sh.post("/orders", url.Values{"order": {ref}, "chargeId": {ch.ID.String()}, "method": {"modal"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("posting the awaiting charge: %d", res.StatusCode)
	}
	o := s.order(t, ref)
	if o.Status != orderAwaiting || o.PaymentType != paymentKonbini || o.Slip.ConvenienceStore != "family_mart" ||
		o.Slip.PaymentNumber == "" || o.Slip.ConfirmationNumber == "" {
		t.Fatalf("konbini order %+v slip %+v", o, o.Slip)
	}
	_, body := sh.get("/orders/" + ref)
	pageHas(t, "the konbini order's page", body, "FamilyMart", o.Slip.PaymentNumber, o.Slip.ConfirmationNumber,
		"Pay at the store&#39;s counter")

	// The merchant moves the deadline later: charge_updated moves the order's.
	seven := 7 * 24 * time.Hour
	e, err := s.svc.Charging.ExtendExpiry(ctx, s.caller(t), s.storeA.ID, ch.ID, payment.ExpiryExtension{Period: &seven})
	if err != nil {
		t.Fatal(err)
	}
	s.deliver(t, ch.ID, payment.EventChargeUpdated)
	if o := s.order(t, ref); !o.Slip.Deadline.Equal(e.ExpirationDate) {
		t.Fatalf("deadline %v, extended to %v", o.Slip.Deadline, e.ExpirationDate)
	}
	// The charge as it was before the extension, notified late: the
	// deadline stays.
	stale := s.delivery(t, payment.EventChargeUpdated, ch)
	stale.timestamp = s.clock.Now()
	if got := s.post(t, stale); got != http.StatusNoContent {
		t.Fatalf("a stale charge_updated: %d", got)
	}
	if o := s.order(t, ref); !o.Slip.Deadline.Equal(e.ExpirationDate) {
		t.Fatalf("a stale charge_updated moved the deadline back to %v", o.Slip.Deadline)
	}

	// The deadline passes on the gateway's clock: the order expires.
	s.clock.Set(e.ExpirationDate.Add(time.Minute))
	s.deliver(t, ch.ID, payment.EventChargeFinished)
	if o := s.order(t, ref); o.Status != orderExpired || o.EndedAt == nil {
		t.Fatalf("past the deadline: %+v", o)
	}
	_, body = sh.get("/orders/" + ref)
	pageHas(t, "the expired order's page", body, "The payment deadline has passed", "Expired (not paid)")

	// Another order, whose charge the merchant cancels.
	sh2 := s.shopper(t)
	ref2, total2 := sh2.fillCart("hasami-mug")
	ch2 := s.slipCharge(t, "seven_eleven", total2, ref2)
	sh2.post("/orders", url.Values{"order": {ref2}, "chargeId": {ch2.ID.String()}, "method": {"hosted"}})
	if o := s.order(t, ref2); o.Slip.ConfirmationNumber != "" {
		t.Errorf("7-Eleven has no confirmation number: %+v", o.Slip)
	}
	if _, err := s.svc.Refunds.CreateCancel(ctx, s.caller(t), s.storeA.ID, ch2.ID, payment.NewCancel{}); err != nil {
		t.Fatal(err)
	}
	s.deliver(t, ch2.ID, payment.EventChargeFinished)
	if o := s.order(t, ref2); o.Status != orderCanceled {
		t.Fatalf("canceled: %+v", o)
	}
	sh2.get("/lang/ja")
	_, body = sh2.get("/orders/" + ref2)
	pageHas(t, "the canceled order's Japanese page", body, "このご注文はキャンセルされました", "キャンセル")
}

// TestDemoSlipOrderNotified: a charge awaiting a konbini payment for an
// order whose shopper never came back to the shop places the order from
// the gateway's charge_updated; the shopper's post of the charge later
// shows it, and places no second order.
func TestDemoSlipOrderNotified(t *testing.T) {
	s := newSlipShop(t)
	sh := s.shopper(t)
	ref, total := sh.fillCart("yirgacheffe")
	ch := s.slipCharge(t, "lawson", total, ref)
	s.deliver(t, ch.ID, payment.EventChargeUpdated)
	o := s.order(t, ref)
	if o.Status != orderAwaiting || o.Method != methodNotified || o.PaymentType != paymentKonbini || len(o.Items) != 1 || o.Slip == nil {
		t.Fatalf("order from the notification: %+v", o)
	}
	res, _ := sh.post("/orders", url.Values{"order": {ref}, "chargeId": {ch.ID.String()}, "method": {"modal"}})
	if loc := res.Header.Get("Location"); res.StatusCode != http.StatusSeeOther || loc != "/orders/"+ref+"?thanks=1" {
		t.Errorf("the shopper's post: %d %s", res.StatusCode, loc)
	}
	if n := len(s.d.orders.list()); n != 1 {
		t.Errorf("%d orders", n)
	}
	// Paid at the counter: the order is paid.
	s.simulate(t, ch, payment.ActionPay, 0)
	s.deliver(t, ch.ID, payment.EventChargeFinished)
	if o := s.order(t, ref); o.Status != "successful" {
		t.Fatalf("paid at the counter: %+v", o)
	}
}

// TestDemoTransferStatusReceiver: the receiver's checks on a bank
// transfer's status: another store's, another amount's and a charge of no
// order change nothing; a status delivered late (fewer deposits than
// already heard) does not take the order back; one that is not a status
// is refused.
func TestDemoTransferStatusReceiver(t *testing.T) {
	s := newSlipShop(t)
	sh := s.shopper(t)
	ref, total := sh.fillCart("ceramic-dripper")
	ch := s.slipCharge(t, "", total, ref)
	sh.post("/orders", url.Values{"order": {ref}, "chargeId": {ch.ID.String()}, "method": {"modal"}})
	status := func(edit func(*payment.TransferStatus)) *payment.TransferStatus {
		st := &payment.TransferStatus{ChargeID: ch.ID, StoreID: s.storeA.ID, MerchantID: s.storeA.MerchantID, Mode: payment.ModeTest,
			PaymentStatus: payment.TransferInsufficient, LatestDepositAmount: 1000, Deposited: 1000, Amount: total, Currency: "JPY",
			CreatedOn: s.clock.Now(), UpdatedOn: s.clock.Now()}
		edit(st)
		return st
	}
	// The webhook rests: each delivery here is the test's.
	off := false
	if _, err := s.svc.Notify.UpdateWebhook(context.Background(), s.caller(t), s.storeA.ID, uuid.MustParse(s.d.hook.Load().ID), payment.WebhookInput{Active: &off}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		st        *payment.TransferStatus
		deposited int64
	}{
		{"another store's", status(func(st *payment.TransferStatus) { st.StoreID = s.storeB.ID }), 0},
		{"another amount", status(func(st *payment.TransferStatus) { st.Amount = total + 1 }), 0},
		{"a charge of no order", status(func(st *payment.TransferStatus) { st.ChargeID = payment.NewID() }), 0},
		{"a deposit", status(func(*payment.TransferStatus) {}), 1000},
		{"more", status(func(st *payment.TransferStatus) { st.Deposited = 1500 }), 1500},
		{"late, with less", status(func(st *payment.TransferStatus) { st.Deposited = 1000 }), 1500},
	} {
		dl := s.delivery(t, payment.EventBankTransferStatusUpdated, tc.st)
		dl.timestamp = s.clock.Now()
		if got := s.post(t, dl); got != http.StatusNoContent {
			t.Errorf("%s: %d", tc.name, got)
		}
		if o := s.order(t, ref); o.Deposited != tc.deposited || o.Status != orderAwaiting {
			t.Errorf("%s: deposited %d (%s), want %d", tc.name, o.Deposited, o.Status, tc.deposited)
		}
	}
	dl := s.delivery(t, payment.EventBankTransferStatusUpdated, status(func(*payment.TransferStatus) {}))
	dl.data, dl.timestamp = []byte(`{"charge_id":7}`), s.clock.Now()
	if got := s.post(t, dl); got != http.StatusBadRequest {
		t.Errorf("not a status: %d", got)
	}
}
