package payment_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/kessaitest"
	"github.com/kessai/kessai/server/kessaitest/servicetest"
	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/univapay"
)

// The rules of konbini payments and bank transfers that slip_test.go
// leaves unguarded: the parsers' edges, the deadline's day, who may call
// the new operations, and what happens around the end of a transfer.

// newSlipStackFor is newSlipStack with the demo's app token good for
// domains (so that a browser caller can be made) and, with events, the
// events recorded as the gateway records them.
func newSlipStackFor(t *testing.T, events bool, domains ...string) *slipStack {
	t.Helper()
	clock := kessaitest.NewClock(time.Date(2026, 11, 28, 1, 0, 0, 0, time.UTC))
	opts := servicetest.Options{Clock: clock}
	if events {
		opts.EncodeEvent = univapay.EncodeEvent
	}
	st := servicetest.New(t, opts)
	return &slipStack{Stack: st, clock: clock, demo: st.SeedDemo(t, domains...)}
}

// TestParsePaymentPeriod: weeks, days and hours; never months or years; and
// a period too long to count in a time.Duration is never read as a short
// one (P30502W wrapped round to about ten days).
func TestParsePaymentPeriod(t *testing.T) {
	day := 24 * time.Hour
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"P30D", 30 * day, true},
		{"PT720H", 720 * time.Hour, true},
		{"P1W", 7 * day, true},
		{"P1W2DT3H", 9*day + 3*time.Hour, true},
		{"P0D", 0, true},
		{"P1M", 0, false},
		{"P1Y", 0, false},
		{"P1Y2D", 0, false},
		{"P99999999D", 0, false},
		{"PT30M", 0, false},
		{"30D", 0, false},
		{"-P1D", 0, false},
		{"", 0, false},
	} {
		got, ok := payment.ParsePaymentPeriod(tc.in)
		if ok != tc.ok || ok && got != tc.want {
			t.Errorf("ParsePaymentPeriod(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
	for _, in := range []string{"P30502W", "P100000W", "P100000W100000DT100000H", "P100000D", "PT100000H"} {
		if got, ok := payment.ParsePaymentPeriod(in); ok && got <= payment.MaxPaymentWindow {
			t.Errorf("ParsePaymentPeriod(%q) = %v: a period of years read as within the bounds", in, got)
		}
	}
}

// TestParseTimeShift: a time of day to the second (fractions dropped) and
// a UTC offset of at most 14 hours, east or west; nothing else.
func TestParseTimeShift(t *testing.T) {
	for _, tc := range []struct {
		in      string
		seconds int
		offset  int
		out     string
	}{
		{"23:59:59+09:00", 86399, 9 * 3600, "23:59:59+09:00"},
		{"23:59+09:00", 86340, 9 * 3600, "23:59:00+09:00"},
		{"00:00:00Z", 0, 0, "00:00:00+00:00"},
		{"12:00:00.500-05:30", 43200, -(5*3600 + 1800), "12:00:00-05:30"},
		{"23:59:59-00:00", 86399, 0, "23:59:59+00:00"},
		{"06:30:15+14:00", 6*3600 + 30*60 + 15, 14 * 3600, "06:30:15+14:00"},
	} {
		ts, ok := payment.ParseTimeShift(tc.in)
		if !ok || ts.Seconds != tc.seconds || ts.Offset != tc.offset || ts.String() != tc.out {
			t.Errorf("ParseTimeShift(%q) = %+v (%s), %v; want %d s at %d s east, %s", tc.in, ts, ts.String(), ok, tc.seconds, tc.offset, tc.out)
		}
	}
	for _, in := range []string{
		"", "Z", "-00:00", "+09:00", "23:59:60+09:00", "24:00:00+09:00", "23:60+09:00", "23:59:59",
		"23:59:59+0900", "23:59:59+09", "23:59:59+15:00", "23:59:59+09:60", "2:00+09:00", "23:59:59.+09:00",
		"23:59:59.5x+09:00", "23:59:59Z+09:00", "23:59:59:00+09:00", "１２:00+09:00", "23:59:59+09:00:00",
		"00:00:00.0000000000000000000000+09:00",
	} {
		if ts, ok := payment.ParseTimeShift(in); ok {
			t.Errorf("ParseTimeShift(%q) = %+v, want refused", in, ts)
		}
	}
}

// TestDeadline: the period's end moved to the shift's time of day on the
// day it ends in the shift's zone, which need not be its day in UTC, or on
// the next day when that time has passed by the period's end.
func TestDeadline(t *testing.T) {
	day := 24 * time.Hour
	for _, tc := range []struct {
		name   string
		now    time.Time
		period time.Duration
		shift  string
		want   time.Time
	}{
		{"morning in Tokyo", time.Date(2026, 11, 28, 1, 0, 0, 0, time.UTC), 7 * day, "23:59:59+09:00",
			time.Date(2026, 12, 5, 14, 59, 59, 0, time.UTC)},
		// 16:00 UTC is 01:00 the next day in Tokyo: the seventh day
		// there is the 6th of December, not the 5th it is in UTC.
		{"past midnight in Tokyo", time.Date(2026, 11, 28, 16, 0, 0, 0, time.UTC), 7 * day, "23:59:59+09:00",
			time.Date(2026, 12, 6, 14, 59, 59, 0, time.UTC)},
		// The day ends at 20:00 on the 28th in New York's winter: noon
		// has passed by then, so the next day's.
		// The seventh day in Tokyo starts at 01:00 there, past a shift of
		// 00:30: the next day's, counted from Tokyo's day, not UTC's.
		{"past midnight in Tokyo, an early shift", time.Date(2026, 11, 28, 16, 0, 0, 0, time.UTC), 7 * day, "00:30+09:00",
			time.Date(2026, 12, 6, 15, 30, 0, 0, time.UTC)},
		{"west of UTC", time.Date(2026, 11, 28, 1, 0, 0, 0, time.UTC), day, "12:00-05:00",
			time.Date(2026, 11, 29, 17, 0, 0, 0, time.UTC)},
		// A day's payment begun at 23:59:59 in Tokyo with a shift of
		// midnight: the next midnight but one, never a second's.
		{"a shift passed by the end", time.Date(2026, 11, 28, 14, 59, 59, 0, time.UTC), day, "00:00+09:00",
			time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC)},
		{"a shift at the end", time.Date(2026, 11, 28, 15, 0, 0, 0, time.UTC), day, "00:00+09:00",
			time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC)},
		{"no shift", time.Date(2026, 11, 28, 1, 2, 3, 0, time.UTC), 3 * day, "",
			time.Date(2026, 12, 1, 1, 2, 3, 0, time.UTC)},
		{"a shift that is no time", time.Date(2026, 11, 28, 1, 2, 3, 0, time.UTC), 3 * day, "23:59:60+09:00",
			time.Date(2026, 12, 1, 1, 2, 3, 0, time.UTC)},
	} {
		if got := payment.Deadline(tc.now, tc.period, tc.shift); !got.Equal(tc.want) {
			t.Errorf("%s: Deadline = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestSlipInFlight: a long poll waits for a shopper who is on a page now
// (a wallet, a challenge), not for one who has days to pay at a counter or
// a bank.
func TestSlipInFlight(t *testing.T) {
	for _, tc := range []struct {
		status payment.ChargeStatus
		typ    string
		want   bool
	}{
		{payment.ChargeAwaiting, payment.PaymentTypeKonbini, false},
		{payment.ChargeAwaiting, payment.PaymentTypeBankTransfer, false},
		{payment.ChargeAwaiting, payment.PaymentTypeOnline, true},
		{payment.ChargeAwaiting, payment.PaymentTypeCard, true},
		{payment.ChargePending, payment.PaymentTypeKonbini, true},
		{payment.ChargePending, payment.PaymentTypeBankTransfer, true},
		{payment.ChargeSuccessful, payment.PaymentTypeBankTransfer, false},
		{payment.ChargeFailed, payment.PaymentTypeKonbini, false},
	} {
		ch := &payment.Charge{Status: tc.status, PaymentType: tc.typ}
		if got := ch.InFlight(); got != tc.want {
			t.Errorf("a %s %s charge in flight: %v, want %v", tc.status, tc.typ, got, tc.want)
		}
	}
}

// TestMatchAmountPays: each rule on each side of the amount; nothing
// deposited pays nothing under any rule; a store's rule is one of the four.
func TestMatchAmountPays(t *testing.T) {
	const amount = 1000
	deposits := []int64{-1, 0, 1, amount - 1, amount, amount + 1}
	for _, tc := range []struct {
		rule payment.MatchAmount
		pays []bool // for each of deposits
	}{
		{"", []bool{false, false, false, false, true, true}},
		{payment.MatchMinimum, []bool{false, false, false, false, true, true}},
		{payment.MatchExact, []bool{false, false, false, false, true, false}},
		{payment.MatchMaximum, []bool{false, false, true, true, true, false}},
		{payment.MatchDisabled, []bool{false, false, true, true, true, true}},
	} {
		for i, d := range deposits {
			if got := tc.rule.Pays(d, amount); got != tc.pays[i] {
				t.Errorf("rule %q: %d deposited of %d pays %v, want %v", tc.rule, d, amount, got, tc.pays[i])
			}
		}
	}
	for _, m := range []payment.MatchAmount{"", "MINIMUM", "min", "exactly"} {
		u := payment.StoreUpdate{MatchAmount: &m}
		if err := u.Check(); payment.ErrorCode(err) != payment.CodeValidation {
			t.Errorf("a store's match_amount %q: %v, want %s", m, err, payment.CodeValidation)
		}
	}
	for _, m := range []payment.MatchAmount{payment.MatchMinimum, payment.MatchExact, payment.MatchMaximum, payment.MatchDisabled} {
		u := payment.StoreUpdate{MatchAmount: &m}
		if err := u.Check(); err != nil {
			t.Errorf("a store's match_amount %q: %v", m, err)
		}
	}
}

// TestSlipCallers: who may do what with a konbini or bank-transfer charge.
// Its deadline is read by whoever sees the charge (a browser too); the
// ledger, an extension and the test helpers need the secret; the helpers
// act in test mode only; another merchant, another store or the other mode
// sees nothing. Nothing a refused caller asked for happened.
func TestSlipCallers(t *testing.T) {
	s := newSlipStackFor(t, false, "shop.example")
	ctx := context.Background()
	ch := s.charge(t, transferToken(), 1000, nil)
	svc := s.Service

	browser, err := svc.Access.BrowserCaller(ctx, s.demo.Token.JWT, "https://shop.example")
	if err != nil {
		t.Fatal(err)
	}
	liveToken, err := svc.Access.IssueStoreAppToken(ctx, s.demo.StoreID, payment.NewAppToken{Mode: payment.ModeLive})
	if err != nil {
		t.Fatal(err)
	}
	live, err := svc.Access.Authenticate(ctx, "Bearer "+liveToken.Secret+"."+liveToken.JWT, "")
	if err != nil {
		t.Fatal(err)
	}
	now := s.clock.Now()
	om := &payment.Merchant{ID: payment.NewID(), Name: "Other", Email: "other@kessai.test", Verified: true, CreatedOn: now}
	ost := &payment.Store{ID: payment.NewID(), MerchantID: om.ID, Name: "Other store", Settings: payment.DefaultStoreSettings(), CreatedOn: now}
	err = s.DB.Update(ctx, func(tx payment.Tx) error {
		if err := tx.CreateMerchant(ctx, om); err != nil {
			return err
		}
		return tx.CreateStore(ctx, ost)
	})
	if err != nil {
		t.Fatal(err)
	}
	otherToken, err := svc.Access.IssueStoreAppToken(ctx, ost.ID, payment.NewAppToken{Mode: payment.ModeTest})
	if err != nil {
		t.Fatal(err)
	}
	other, err := svc.Access.Authenticate(ctx, "Bearer "+otherToken.Secret+"."+otherToken.JWT, "")
	if err != nil {
		t.Fatal(err)
	}

	day := 24 * time.Hour
	ops := []struct {
		name string
		do   func(c *payment.Caller, storeID uuid.UUID) error
	}{
		{"expiry", func(c *payment.Caller, storeID uuid.UUID) error {
			_, err := svc.Charging.ChargeExpiry(ctx, c, storeID, ch.ID)
			return err
		}},
		{"extend", func(c *payment.Caller, storeID uuid.UUID) error {
			_, err := svc.Charging.ExtendExpiry(ctx, c, storeID, ch.ID, payment.ExpiryExtension{Period: &day})
			return err
		}},
		{"ledger", func(c *payment.Caller, storeID uuid.UUID) error {
			_, err := svc.Charging.TransferLedger(ctx, c, storeID, ch.ID, payment.ListParams{Limit: 10})
			return err
		}},
		{"deposit", func(c *payment.Caller, storeID uuid.UUID) error {
			_, err := svc.Charging.SimulateShopper(ctx, c, storeID, ch.ID, payment.ActionDeposit, 1000, 0)
			return err
		}},
		{"expire", func(c *payment.Caller, storeID uuid.UUID) error {
			_, err := svc.Charging.SimulateShopper(ctx, c, storeID, ch.ID, payment.ActionExpire, 0, 0)
			return err
		}},
	}
	secret, notFound, testOnly := payment.CodeInvalidPermissions, payment.CodeNotFound, payment.CodeTestModeOnly
	for _, tc := range []struct {
		name   string
		c      *payment.Caller
		store  uuid.UUID
		expect map[string]payment.Code // by op; absent is no error
	}{
		{"a browser", browser, s.demo.StoreID,
			map[string]payment.Code{"extend": secret, "ledger": secret, "deposit": secret, "expire": secret}},
		{"the live mode", live, s.demo.StoreID,
			map[string]payment.Code{"expiry": notFound, "extend": notFound, "ledger": notFound, "deposit": testOnly, "expire": testOnly}},
		{"another merchant on its store", other, ost.ID,
			map[string]payment.Code{"expiry": notFound, "extend": notFound, "ledger": notFound, "deposit": notFound, "expire": notFound}},
		{"another merchant on the charge's store", other, s.demo.StoreID,
			map[string]payment.Code{"expiry": notFound, "extend": notFound, "ledger": notFound, "deposit": notFound, "expire": notFound}},
		{"the merchant on another store's path", s.demo.Caller, ost.ID,
			map[string]payment.Code{"expiry": notFound, "extend": notFound, "ledger": notFound, "deposit": notFound, "expire": notFound}},
	} {
		for _, op := range ops {
			err := op.do(tc.c, tc.store)
			want, refused := tc.expect[op.name]
			if refused != (err != nil) || refused && payment.ErrorCode(err) != want {
				t.Errorf("%s, %s: %v, want %q", tc.name, op.name, err, want)
			}
		}
	}
	got := s.read(t, ch.ID)
	e, err := svc.Charging.ChargeExpiry(ctx, s.demo.Caller, s.demo.StoreID, ch.ID)
	if err != nil {
		t.Fatal(err)
	}
	l, err := svc.Charging.TransferLedger(ctx, s.demo.Caller, s.demo.StoreID, ch.ID, payment.ListParams{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != payment.ChargeAwaiting || e.ExtensionCount != 0 || len(l.Page.Items) != 0 {
		t.Fatalf("after the refused calls: %s, %d extensions, %d ledger lines", got.Status, e.ExtensionCount, len(l.Page.Items))
	}
}

// TestSlipExtensionEdges: an extension may take the deadline to exactly
// 60 days after the charge; each extension is a new expiry with its own
// id, and announced as a charge_updated showing it; the charge outlives
// its old deadline and ends at the new one; a deadline that has passed is
// not extended, even while the worker has yet to end the charge.
func TestSlipExtensionEdges(t *testing.T) {
	s := newSlipStackFor(t, true)
	ctx := context.Background()
	day := 24 * time.Hour
	start := s.clock.Now()
	deadline := start.Add(3 * day)
	ch := s.charge(t, konbiniToken("lawson"), 1000, &deadline)
	extend := func(id uuid.UUID, x payment.ExpiryExtension) (*payment.Expiry, error) {
		return s.Service.Charging.ExtendExpiry(ctx, s.demo.Caller, s.demo.StoreID, id, x)
	}
	first, err := s.Service.Charging.ChargeExpiry(ctx, s.demo.Caller, s.demo.StoreID, ch.ID)
	if err != nil {
		t.Fatal(err)
	}
	s.clock.Advance(time.Hour)
	month := payment.MaxExpiryExtension
	second, err := extend(ch.ID, payment.ExpiryExtension{Period: &month})
	if err != nil {
		t.Fatal(err)
	}
	window := ch.CreatedOn.Add(payment.MaxPaymentWindow)
	third, err := extend(ch.ID, payment.ExpiryExtension{Date: &window})
	if err != nil {
		t.Fatalf("an extension to exactly %v after the charge: %v", payment.MaxPaymentWindow, err)
	}
	if !third.ExpirationDate.Equal(window) || third.ExtensionCount != 2 {
		t.Fatalf("the second extension: %+v, want the deadline %v", third, window)
	}
	ids := map[uuid.UUID]bool{first.ID: true, second.ID: true, third.ID: true}
	if len(ids) != 3 || !second.CreatedOn.Equal(s.clock.Now()) || !first.CreatedOn.Before(second.CreatedOn) {
		t.Errorf("the expiries %+v, %+v, %+v: each extension is a new one, made when it was", first, second, third)
	}
	got, err := s.Service.Charging.ChargeExpiry(ctx, s.demo.Caller, s.demo.StoreID, ch.ID)
	if err != nil || got.ID != third.ID {
		t.Errorf("the latest expiry %+v, %v; want %v", got, err, third.ID)
	}
	evs, err := s.Service.Charging.ChargeEvents(ctx, s.demo.Caller, s.demo.StoreID, ch.ID, 50)
	if err != nil {
		t.Fatal(err)
	}
	var shown []string
	for _, e := range evs {
		var m struct {
			CaptureAt string `json:"capture_at"`
		}
		if err := json.Unmarshal(e.Data, &m); err != nil {
			t.Fatal(err)
		}
		if e.Name == payment.EventChargeUpdated {
			shown = append(shown, m.CaptureAt)
		}
	}
	if len(shown) != 3 {
		t.Errorf("charge_updated events showing capture_at %q; want one as it began to await and one per extension", shown)
	} else if at, err := time.Parse(time.RFC3339Nano, shown[2]); err != nil || !at.Equal(window) {
		t.Errorf("the last charge_updated shows capture_at %q, want %v", shown[2], window)
	}

	s.clock.Set(deadline) // the first deadline, which the worker's item is still due at
	if got := s.read(t, ch.ID); got.Status != payment.ChargeAwaiting || !got.CaptureAt.Equal(window) {
		t.Fatalf("at the deadline before the extensions: %s, capture_at %v; want awaiting until %v", got.Status, got.CaptureAt, window)
	}

	late := s.charge(t, transferToken(), 1000, nil)
	ap, err := s.Service.Charging.ChargeExpiry(ctx, s.demo.Caller, s.demo.StoreID, late.ID)
	if err != nil {
		t.Fatal(err)
	}
	s.clock.Set(ap.ExpirationDate) // the deadline; the worker not yet run
	_, err = extend(late.ID, payment.ExpiryExtension{Period: &day})
	wantSlipError(t, err, payment.CodeValidation, "status", "INVALID_CHARGE_STATUS")
	if got := s.read(t, late.ID); got.Status != payment.ChargeFailed || !got.CaptureAt.Equal(ap.ExpirationDate) {
		t.Fatalf("the charge past its deadline: %s, capture_at %v", got.Status, got.CaptureAt)
	}
	s.clock.Set(window.Add(-time.Second))
	if got := s.read(t, ch.ID); got.Status != payment.ChargeAwaiting {
		t.Fatalf("a second before the extended deadline: %s", got.Status)
	}
	s.clock.Set(window)
	if got := s.read(t, ch.ID); got.Status != payment.ChargeFailed || got.Error == nil || got.Error.Code != payment.ErrConfirmationExpired {
		t.Fatalf("at the extended deadline: %s %+v", got.Status, got.Error)
	}
}

// TestSlipDeadlineMethodsOnly: a wallet charge awaits its shopper too, but
// has no payment deadline to read or extend, and the test helpers do not
// act on it.
func TestSlipDeadlineMethodsOnly(t *testing.T) {
	s := newSlipStack(t)
	ctx := context.Background()
	wallet := s.charge(t, payment.NewToken{PaymentType: payment.PaymentTypeOnline, Type: payment.OneTime,
		Data: &payment.TokenData{Brand: "pay_pay_online"}}, 1000, nil)
	_, err := s.Service.Charging.ChargeExpiry(ctx, s.demo.Caller, s.demo.StoreID, wallet.ID)
	wantSlipError(t, err, payment.CodeNotFound, "", "")
	day := 24 * time.Hour
	_, err = s.Service.Charging.ExtendExpiry(ctx, s.demo.Caller, s.demo.StoreID, wallet.ID, payment.ExpiryExtension{Period: &day})
	wantSlipError(t, err, payment.CodeNotFound, "", "")
	for _, action := range []payment.ApprovalAction{payment.ActionPay, payment.ActionExpire} {
		_, err = s.act(t, wallet.ID, action, 0)
		wantSlipError(t, err, payment.CodeValidation, "transaction_token_id", "NOT_KONBINI_OR_BANK_TRANSFER_CHARGE")
	}
	if got := s.read(t, wallet.ID); got.Status != payment.ChargeAwaiting {
		t.Fatalf("the wallet charge: %s, want still awaiting", got.Status)
	}
}

// TestSlipExpireHelper: the expire helper ends a konbini payment or a bank
// transfer as its deadline would (failed, 327); a deposit after it is
// recorded, and pays nothing.
func TestSlipExpireHelper(t *testing.T) {
	s := newSlipStack(t)
	ctx := context.Background()
	for _, nt := range []payment.NewToken{konbiniToken("seven_eleven"), transferToken()} {
		ch := s.charge(t, nt, 1000, nil)
		got, err := s.act(t, ch.ID, payment.ActionExpire, 0)
		if err != nil {
			t.Fatalf("%s: %v", nt.PaymentType, err)
		}
		if got.Status != payment.ChargeFailed || got.Error == nil || got.Error.Code != payment.ErrConfirmationExpired {
			t.Fatalf("%s after expire: %s %+v", nt.PaymentType, got.Status, got.Error)
		}
		if nt.PaymentType != payment.PaymentTypeBankTransfer {
			continue
		}
		got, err = s.act(t, ch.ID, payment.ActionDeposit, 1000)
		if err != nil || got.Status != payment.ChargeFailed || got.ChargedAmount != nil {
			t.Fatalf("a deposit after expire: %v, %v", got, err)
		}
		l, err := s.Service.Charging.TransferLedger(ctx, s.demo.Caller, s.demo.StoreID, ch.ID, payment.ListParams{Limit: 10})
		if err != nil || len(l.Page.Items) != 1 || l.Page.Items[0].Kind != payment.TransferDeposit {
			t.Fatalf("the ledger after a deposit past expire: %+v, %v", l, err)
		}
	}
}

// TestTransferLedgerAfterPayment: the payment takes the whole balance out;
// a later deposit starts a new balance from nothing while the deposits'
// total goes on; a deposit to a cancelled transfer is recorded and pays
// nothing; each deposit is announced with the transfer's status.
func TestTransferLedgerAfterPayment(t *testing.T) {
	s := newSlipStackFor(t, true)
	ctx := context.Background()
	ch := s.charge(t, transferToken(), 1000, nil)
	for _, amount := range []int64{1300, 50} {
		if _, err := s.act(t, ch.ID, payment.ActionDeposit, amount); err != nil {
			t.Fatal(err)
		}
	}
	l, err := s.Service.Charging.TransferLedger(ctx, s.demo.Caller, s.demo.StoreID, ch.ID, payment.ListParams{Limit: 10, Direction: payment.Asc})
	if err != nil {
		t.Fatal(err)
	}
	type line struct {
		kind                       payment.TransferEntryKind
		amount, balance, deposited int64
		status                     payment.TransferPaymentStatus
	}
	want := []line{
		{payment.TransferDeposit, 1300, 1300, 1300, payment.TransferExceeded},
		{payment.TransferPayment, 1300, 0, 1300, payment.TransferExceeded},
		{payment.TransferDeposit, 50, 50, 1350, payment.TransferExceeded},
	}
	if len(l.Page.Items) != len(want) {
		t.Fatalf("%d ledger lines, want %d", len(l.Page.Items), len(want))
	}
	for i, e := range l.Page.Items {
		if got := (line{e.Kind, e.Amount, e.Balance, e.Deposited, e.PaymentStatus}); got != want[i] {
			t.Errorf("line %d: %+v, want %+v", i, got, want[i])
		}
	}
	if l.Account == nil || l.Page.Items[0].VirtualAccountID != l.Account.AccountID {
		t.Errorf("the lines' account %q, the charge's %+v", l.Page.Items[0].VirtualAccountID, l.Account)
	}

	evs, err := s.Service.Charging.ChargeEvents(ctx, s.demo.Caller, s.demo.StoreID, ch.ID, 50)
	if err != nil {
		t.Fatal(err)
	}
	var statuses []map[string]any
	for _, e := range evs {
		if e.Name != payment.EventBankTransferStatusUpdated {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(e.Data, &m); err != nil {
			t.Fatal(err)
		}
		statuses = append(statuses, m)
	}
	if len(statuses) != 2 {
		t.Fatalf("%d bank_transfer_status_updated events, want one per deposit", len(statuses))
	}
	last := statuses[1]
	for k, v := range map[string]any{
		"charge_id": ch.ID.String(), "payment_status": "exceeded", "latest_deposit_amount": 50.0, "balance": 50.0,
		"deposited": 1350.0, "amount": 1000.0, "amount_difference": 350.0, "currency": "JPY",
	} {
		if last[k] != v {
			t.Errorf("the second deposit's event: %s = %v, want %v", k, last[k], v)
		}
	}
	if statuses[0]["balance"] != 0.0 {
		t.Errorf("the paying deposit's event: balance %v, want 0 (the payment took it)", statuses[0]["balance"])
	}

	canceled := s.charge(t, transferToken(), 1000, nil)
	if _, err := s.Service.Refunds.CreateCancel(ctx, s.demo.Caller, s.demo.StoreID, canceled.ID, payment.NewCancel{}); err != nil {
		t.Fatal(err)
	}
	got, err := s.act(t, canceled.ID, payment.ActionDeposit, 1000)
	if err != nil || got.Status != payment.ChargeCanceled || got.ChargedAmount != nil {
		t.Fatalf("a deposit to a cancelled transfer: %+v, %v", got, err)
	}
	l, err = s.Service.Charging.TransferLedger(ctx, s.demo.Caller, s.demo.StoreID, canceled.ID, payment.ListParams{Limit: 10})
	if err != nil || len(l.Page.Items) != 1 || l.Page.Items[0].Balance != 1000 || l.Page.Items[0].PaymentStatus != payment.TransferExact {
		t.Fatalf("the cancelled transfer's ledger: %+v, %v", l, err)
	}
}

// TestSlipSiblingsCaptureAt: capture_at is a konbini or bank-transfer
// charge's deadline (up to 60 days); a card's stays within the window an
// authorisation lasts (an hour to 7 days); a wallet charge has none.
func TestSlipSiblingsCaptureAt(t *testing.T) {
	s := newSlipStack(t)
	ctx := context.Background()
	at := func(d time.Duration) *time.Time { t := s.clock.Now().Add(d); return &t }
	day := 24 * time.Hour
	card := func() payment.NewToken {
		return payment.NewToken{PaymentType: payment.PaymentTypeCard, Type: payment.OneTime, Email: "shopper@example.com",
			Card: &payment.CardInput{Cardholder: "TARO YAMADA", Number: "4000020000000000", ExpMonth: 12, ExpYear: 2039, CVV: "123"}}
	}
	wallet := func() payment.NewToken {
		return payment.NewToken{PaymentType: payment.PaymentTypeOnline, Type: payment.OneTime, Data: &payment.TokenData{Brand: "pay_pay_online"}}
	}
	no := false
	for _, tc := range []struct {
		name          string
		nt            payment.NewToken
		capture       *bool
		at            *time.Time
		field, reason string
	}{
		{"card in 30 minutes", card(), &no, at(30 * time.Minute), "capture_at", "INVALID_SCHEDULED_CAPTURE_DATE"},
		{"card in 8 days", card(), &no, at(8 * day), "capture_at", "INVALID_SCHEDULED_CAPTURE_DATE"},
		{"card in 2 days", card(), &no, at(2 * day), "", ""},
		{"wallet in 2 days", wallet(), nil, at(2 * day), "capture_at", "CAPTURE_ONLY_FOR_CARD_PAYMENT"},
		{"konbini in 8 days", konbiniToken("lawson"), nil, at(8 * day), "", ""},
		{"transfer in 59 days", transferToken(), nil, at(59 * day), "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tok, err := s.Service.Tokens.CreateToken(ctx, s.demo.Caller, tc.nt)
			if err != nil {
				t.Fatal(err)
			}
			_, err = s.Service.Charging.CreateCharge(ctx, s.demo.Caller, payment.NewCharge{
				TokenID: tok.ID, Amount: 1000, Currency: "JPY", Capture: tc.capture, CaptureAt: tc.at})
			if tc.field == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantSlipError(t, err, payment.CodeValidation, tc.field, tc.reason)
		})
	}
}
