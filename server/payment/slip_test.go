package payment_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/kessaitest"
	"github.com/kessai/kessai/server/kessaitest/servicetest"
	"github.com/kessai/kessai/server/payment"
)

// slipStack is a gateway on a clock the test moves, with the demo store,
// for konbini payments and bank transfers, whose deadlines are days away.
type slipStack struct {
	*servicetest.Stack
	clock *kessaitest.Clock
	demo  *servicetest.Demo
}

func newSlipStack(t *testing.T) *slipStack {
	t.Helper()
	clock := kessaitest.NewClock(time.Date(2026, 11, 28, 1, 0, 0, 0, time.UTC)) // 10:00 in Tokyo
	st := servicetest.New(t, servicetest.Options{Clock: clock})
	return &slipStack{Stack: st, clock: clock, demo: st.SeedDemo(t)}
}

func konbiniToken(store string) payment.NewToken {
	return payment.NewToken{PaymentType: payment.PaymentTypeKonbini, Type: payment.OneTime, Data: &payment.TokenData{
		CustomerName: "山田 太郎", ConvenienceStore: store, PhoneNumber: &payment.Phone{CountryCode: 81, LocalNumber: "090-1234-5678"},
	}}
}

func transferToken() payment.NewToken {
	return payment.NewToken{PaymentType: payment.PaymentTypeBankTransfer, Type: payment.OneTime,
		Data: &payment.TokenData{Brand: "aozora_bank"}}
}

// charge makes a token and a charge of amount yen on it, and runs the
// worker until the charge awaits its shopper.
func (s *slipStack) charge(t *testing.T, nt payment.NewToken, amount int64, captureAt *time.Time) *payment.Charge {
	t.Helper()
	ctx := context.Background()
	tok, err := s.Service.Tokens.CreateToken(ctx, s.demo.Caller, nt)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := s.Service.Charging.CreateCharge(ctx, s.demo.Caller, payment.NewCharge{
		TokenID: tok.ID, Amount: amount, Currency: "JPY", CaptureAt: captureAt, Metadata: payment.Metadata{"order": "A-1"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return servicetest.AwaitCharge(t, s.Service, s.demo.Caller, s.demo.StoreID, ch.ID, "the charge to await its shopper", servicetest.Awaiting)
}

func (s *slipStack) read(t *testing.T, id uuid.UUID) *payment.Charge {
	t.Helper()
	if _, err := s.Service.Work.ProcessPending(context.Background(), 50); err != nil {
		t.Fatal(err)
	}
	ch, err := s.Service.Charging.Charge(context.Background(), s.demo.Caller, s.demo.StoreID, id, 0)
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

func (s *slipStack) act(t *testing.T, id uuid.UUID, action payment.ApprovalAction, amount int64) (*payment.Charge, error) {
	t.Helper()
	return s.Service.Charging.SimulateShopper(context.Background(), s.demo.Caller, s.demo.StoreID, id, action, amount, time.Second)
}

func wantSlipError(t *testing.T, err error, code payment.Code, field, reason string) {
	t.Helper()
	var e *payment.Error
	if !errors.As(err, &e) || e.Code != code {
		t.Fatalf("error %v, want %s", err, code)
	}
	if field != "" && (len(e.Fields) != 1 || e.Fields[0].Field != field || e.Fields[0].Reason != reason) {
		t.Fatalf("error %v fields %+v, want %s %s", err, e.Fields, field, reason)
	}
}

// TestSlipTokenRules: what a konbini or bank-transfer token must carry,
// each rule alone.
func TestSlipTokenRules(t *testing.T) {
	s := newSlipStack(t)
	days := func(n int) time.Duration { return time.Duration(n) * 24 * time.Hour }
	cases := []struct {
		name          string
		edit          func(*payment.NewToken)
		bank          bool
		field, reason string
	}{
		{"konbini ok at 7 days", func(p *payment.NewToken) { p.Data.ExpirationPeriod = days(7) }, false, "", ""},
		{"konbini ok at 30 days", func(p *payment.NewToken) { p.Data.ExpirationPeriod = days(30) }, false, "", ""},
		{"konbini under 7 days", func(p *payment.NewToken) { p.Data.ExpirationPeriod = days(7) - time.Hour }, false, "expiration_period", payment.ReasonExpirationOutOfBounds},
		{"konbini over 30 days", func(p *payment.NewToken) { p.Data.ExpirationPeriod = days(30) + time.Hour }, false, "expiration_period", payment.ReasonExpirationOutOfBounds},
		{"recurring", func(p *payment.NewToken) { p.Type = payment.Recurring }, false, "type", "ONE_TIME_ONLY_ALLOWED"},
		{"no data", func(p *payment.NewToken) { p.Data = nil }, false, "data", payment.ReasonRequired},
		{"no name", func(p *payment.NewToken) { p.Data.CustomerName = "  " }, false, "customer_name", payment.ReasonRequired},
		{"name of 60", func(p *payment.NewToken) { p.Data.CustomerName = strings.Repeat("山", 60) }, false, "", ""},
		{"long name", func(p *payment.NewToken) { p.Data.CustomerName = strings.Repeat("山", 61) }, false, "customer_name", payment.ReasonInvalidLength},
		{"control character in name", func(p *payment.NewToken) { p.Data.CustomerName = "山田\x00太郎" }, false, "customer_name", payment.ReasonInvalidFormat},
		{"card number in name", func(p *payment.NewToken) { p.Data.CustomerName = "4242424242424242" }, false, "customer_name", payment.ReasonCardNumber},
		{"no store", func(p *payment.NewToken) { p.Data.ConvenienceStore = "" }, false, "convenience_store", payment.ReasonRequired},
		{"unknown store", func(p *payment.NewToken) { p.Data.ConvenienceStore = "ampm" }, false, "convenience_store", payment.ReasonInvalidFormat},
		{"no phone", func(p *payment.NewToken) { p.Data.PhoneNumber = nil }, false, "phone_number", payment.ReasonRequired},
		{"phone abroad", func(p *payment.NewToken) { p.Data.PhoneNumber.CountryCode = 1 }, false, "phone_number", payment.ReasonOnlyJapanesePhone},
		{"phone letters", func(p *payment.NewToken) { p.Data.PhoneNumber.LocalNumber = "090-CALL-ME" }, false, "phone_number.local_number", payment.ReasonInvalidPhone},
		{"phone short", func(p *payment.NewToken) { p.Data.PhoneNumber.LocalNumber = "090123456" }, false, "phone_number.local_number", payment.ReasonInvalidPhone},
		{"phone long", func(p *payment.NewToken) { p.Data.PhoneNumber.LocalNumber = "090123456789" }, false, "phone_number.local_number", payment.ReasonInvalidPhone},
		{"phone without 0", func(p *payment.NewToken) { p.Data.PhoneNumber.LocalNumber = "9012345678" }, false, "", ""},
		{"phone with spaces", func(p *payment.NewToken) { p.Data.PhoneNumber.LocalNumber = "090 1234 5678" }, false, "", ""},
		{"phone with both separators", func(p *payment.NewToken) { p.Data.PhoneNumber.LocalNumber = " 03-1234 5678 " }, false, "", ""},
		{"phone without 0 long", func(p *payment.NewToken) { p.Data.PhoneNumber.LocalNumber = "90123456789" }, false, "phone_number.local_number", payment.ReasonInvalidPhone},
		{"bad shift", func(p *payment.NewToken) { p.Data.ExpirationTimeShift = "24:00:00+09:00" }, false, "expiration_time_shift", payment.ReasonInvalidFormat},
		{"leap second shift", func(p *payment.NewToken) { p.Data.ExpirationTimeShift = "23:59:60+09:00" }, false, "expiration_time_shift", payment.ReasonInvalidFormat},
		{"shift of an offset alone", func(p *payment.NewToken) { p.Data.ExpirationTimeShift = "-00:00" }, true, "expiration_time_shift", payment.ReasonInvalidFormat},
		{"three ds", func(p *payment.NewToken) { p.ThreeDS = &payment.ThreeDSSettings{Enabled: true} }, false, "three_ds", "ONLY_FOR_CARD_PAYMENT"},
		{"card", func(p *payment.NewToken) { p.Card = &payment.CardInput{Number: "4242424242424242"} }, false, "data.card_number", payment.ReasonForbiddenParameter},
		{"bank ok", func(*payment.NewToken) {}, true, "", ""},
		{"bank test brand", func(p *payment.NewToken) { p.Data.Brand = "bank_test_brand" }, true, "", ""},
		{"bank no brand", func(p *payment.NewToken) { p.Data.Brand = "" }, true, "brand", payment.ReasonRequired},
		{"bank unknown brand", func(p *payment.NewToken) { p.Data.Brand = "mizuho" }, true, "brand", "BRAND_NOT_DEFINED"},
		{"bank 1 day", func(p *payment.NewToken) { p.Data.ExpirationPeriod = days(1) }, true, "", ""},
		{"bank under a day", func(p *payment.NewToken) { p.Data.ExpirationPeriod = days(1) - time.Hour }, true, "expiration_period", payment.ReasonExpirationOutOfBounds},
		{"bank over 30 days", func(p *payment.NewToken) { p.Data.ExpirationPeriod = days(30) + time.Hour }, true, "expiration_period", payment.ReasonExpirationOutOfBounds},
		{"bank subscription", func(p *payment.NewToken) { p.Type = payment.SubscriptionToken }, true, "type", "ONE_TIME_ONLY_ALLOWED"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			nt := konbiniToken("lawson")
			if tc.bank {
				nt = transferToken()
			}
			tc.edit(&nt)
			tok, err := s.Service.Tokens.CreateToken(context.Background(), s.demo.Caller, nt)
			if tc.field == "" {
				if err != nil {
					t.Fatal(err)
				}
				if tok.Data.ExpirationPeriod == 0 {
					t.Error("the token has no payment period")
				}
				return
			}
			wantSlipError(t, err, payment.CodeValidation, tc.field, tc.reason)
		})
	}
}

// TestSlipTokenDefaults: the default periods, the phone number as the
// store will dial it, a virtual account per bank-transfer token held in
// the store's name, and the store's switches.
func TestSlipTokenDefaults(t *testing.T) {
	s := newSlipStack(t)
	ctx := context.Background()
	k, err := s.Service.Tokens.CreateToken(ctx, s.demo.Caller, konbiniToken("seven_eleven"))
	if err != nil {
		t.Fatal(err)
	}
	if k.Data.ExpirationPeriod != payment.DefaultKonbiniPeriod || k.Data.PhoneNumber.LocalNumber != "09012345678" {
		t.Errorf("konbini token data %+v", k.Data)
	}
	a, err := s.Service.Tokens.CreateToken(ctx, s.demo.Caller, transferToken())
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Service.Tokens.CreateToken(ctx, s.demo.Caller, transferToken())
	if err != nil {
		t.Fatal(err)
	}
	va := a.Data.VirtualAccount
	if a.Data.ExpirationPeriod != payment.DefaultTransferPeriod || va == nil || len(va.AccountNumber) != 7 || va.BankCode != "0310" ||
		va.AccountHolderName == "" || va.AccountID == "" {
		t.Fatalf("bank transfer token data %+v account %+v", a.Data, va)
	}
	if vb := b.Data.VirtualAccount; vb.AccountID == va.AccountID {
		t.Error("two tokens share a virtual account")
	}
	off := false
	if _, err := s.Service.Merchants.UpdateStore(ctx, s.demo.Caller, s.demo.StoreID, payment.StoreUpdate{KonbiniEnabled: &off}); err != nil {
		t.Fatal(err)
	}
	_, err = s.Service.Tokens.CreateToken(ctx, s.demo.Caller, konbiniToken("lawson"))
	wantSlipError(t, err, payment.CodeConvenienceDisabled, "", "")
	if _, err := s.Service.Tokens.CreateToken(ctx, s.demo.Caller, transferToken()); err != nil {
		t.Errorf("bank transfers with konbini off: %v", err)
	}
	if _, err := s.Service.Merchants.UpdateStore(ctx, s.demo.Caller, s.demo.StoreID, payment.StoreUpdate{BankTransferEnabled: &off}); err != nil {
		t.Fatal(err)
	}
	_, err = s.Service.Tokens.CreateToken(ctx, s.demo.Caller, transferToken())
	wantSlipError(t, err, payment.CodePaymentTypeNotAllowed, "", "")
}

// TestSlipChargeRules: what a konbini or bank-transfer charge refuses.
func TestSlipChargeRules(t *testing.T) {
	s := newSlipStack(t)
	ctx := context.Background()
	now := s.clock.Now()
	no := false
	at := func(d time.Duration) *time.Time { t := now.Add(d); return &t }
	cases := []struct {
		name          string
		p             payment.NewCharge
		code          payment.Code
		field, reason string
	}{
		{"authorise only", payment.NewCharge{Amount: 1000, Currency: "JPY", Capture: &no}, payment.CodeValidation, "capture", "CAPTURE_ONLY_FOR_CARD_PAYMENT"},
		{"dollars", payment.NewCharge{Amount: 1000, Currency: "USD"}, payment.CodeCurrencyNotSupported, "", ""},
		{"three ds", payment.NewCharge{Amount: 1000, Currency: "JPY", ThreeDS: &payment.ThreeDSSettings{Mode: "normal"}}, payment.CodeValidation, "three_ds", "ONLY_FOR_CARD_PAYMENT"},
		{"deadline now", payment.NewCharge{Amount: 1000, Currency: "JPY", CaptureAt: at(time.Hour)}, payment.CodeValidation, "capture_at", "MUST_BE_FUTURE_TIME"},
		{"deadline too far", payment.NewCharge{Amount: 1000, Currency: "JPY", CaptureAt: at(payment.MaxPaymentWindow + time.Second)}, payment.CodeValidation, "capture_at", "PAYMENT_EXPIRATION_EXCEEDS_PERIOD"},
		{"deadline at the window", payment.NewCharge{Amount: 1000, Currency: "JPY", CaptureAt: at(payment.MaxPaymentWindow)}, "", "", ""},
		{"deadline in two days", payment.NewCharge{Amount: 1000, Currency: "JPY", CaptureAt: at(48 * time.Hour)}, "", "", ""},
		{"deadline just over an hour", payment.NewCharge{Amount: 1000, Currency: "JPY", CaptureAt: at(time.Hour + time.Minute)}, "", "", ""},
		{"yen in lower case", payment.NewCharge{Amount: 1000, Currency: "jpy"}, "", "", ""},
	}
	for _, tc := range cases {
		for _, nt := range []payment.NewToken{konbiniToken("family_mart"), transferToken()} {
			t.Run(tc.name+" "+nt.PaymentType, func(t *testing.T) {
				tok, err := s.Service.Tokens.CreateToken(ctx, s.demo.Caller, nt)
				if err != nil {
					t.Fatal(err)
				}
				p := tc.p
				p.TokenID = tok.ID
				_, err = s.Service.Charging.CreateCharge(ctx, s.demo.Caller, p)
				if tc.code == "" {
					if err != nil {
						t.Fatal(err)
					}
					return
				}
				wantSlipError(t, err, tc.code, tc.field, tc.reason)
			})
		}
	}
}

// TestKonbiniCharge: pending, then awaiting with the store's numbers and
// the token's deadline; paid at the counter, it succeeds; it cannot then
// be refunded or cancelled.
func TestKonbiniCharge(t *testing.T) {
	s := newSlipStack(t)
	ctx := context.Background()
	nt := konbiniToken("family_mart")
	nt.Data.ExpirationPeriod = 7 * 24 * time.Hour
	nt.Data.ExpirationTimeShift = "23:59:59+09:00"
	ch := s.charge(t, nt, 2480, nil)
	want := time.Date(2026, 12, 5, 14, 59, 59, 0, time.UTC) // 23:59:59 in Tokyo, seven days on
	if ch.CaptureAt == nil || !ch.CaptureAt.Equal(want) {
		t.Fatalf("capture_at %v, want the deadline %v", ch.CaptureAt, want)
	}
	it, err := s.Service.Charging.ChargeIssuerToken(ctx, s.demo.Caller, s.demo.StoreID, ch.ID)
	if err != nil {
		t.Fatal(err)
	}
	if it.CallMethod != "http_get" || !strings.Contains(it.IssuerToken, payment.SlipPagePath) || len(it.Payload["payment_number"]) != 12 ||
		len(it.Payload["confirmation_number"]) != 5 || it.Payload["convenience_store"] != "family_mart" || it.Payload["expiration_date"] != "2026-12-05T14:59:59Z" {
		t.Fatalf("issuer token %+v", it)
	}
	e, err := s.Service.Charging.ChargeExpiry(ctx, s.demo.Caller, s.demo.StoreID, ch.ID)
	if err != nil || !e.ExpirationDate.Equal(want) || e.ExtensionCount != 0 {
		t.Fatalf("expiry %+v, %v", e, err)
	}
	s.clock.Advance(6 * 24 * time.Hour)
	paid, err := s.act(t, ch.ID, payment.ActionPay, 0)
	if err != nil {
		t.Fatal(err)
	}
	if paid.Status != payment.ChargeSuccessful || paid.ChargedAmount == nil || *paid.ChargedAmount != 2480 {
		t.Fatalf("paid charge %s charged %v", paid.Status, paid.ChargedAmount)
	}
	_, err = s.Service.Refunds.CreateRefund(ctx, s.demo.Caller, s.demo.StoreID, ch.ID, payment.NewRefund{Amount: 100, Currency: "JPY"})
	wantSlipError(t, err, payment.CodeRefundNotAllowed, "", "")
	_, err = s.Service.Refunds.CreateCancel(ctx, s.demo.Caller, s.demo.StoreID, ch.ID, payment.NewCancel{})
	wantSlipError(t, err, payment.CodeCancelNotAllowed, "", "")
	_, err = s.act(t, ch.ID, payment.ActionPay, 0)
	wantSlipError(t, err, payment.CodeValidation, "status", "INVALID_CHARGE_STATUS")
}

// TestSlipDeadline: the gateway ends an unpaid charge at its deadline on
// its own clock (failed, 327), not a second before; an extension moves the
// deadline within its limits; a cancelled charge awaits nobody.
func TestSlipDeadline(t *testing.T) {
	s := newSlipStack(t)
	ctx := context.Background()
	deadline := s.clock.Now().Add(3 * 24 * time.Hour)
	ch := s.charge(t, konbiniToken("lawson"), 1000, &deadline)
	if !ch.CaptureAt.Equal(deadline) {
		t.Fatalf("capture_at %v, want the charge's own %v", ch.CaptureAt, deadline)
	}
	s.clock.Set(deadline.Add(-time.Second))
	if got := s.read(t, ch.ID); got.Status != payment.ChargeAwaiting {
		t.Fatalf("a second before the deadline: %s", got.Status)
	}
	day := 24 * time.Hour
	extend := func(x payment.ExpiryExtension) (*payment.Expiry, error) {
		return s.Service.Charging.ExtendExpiry(ctx, s.demo.Caller, s.demo.StoreID, ch.ID, x)
	}
	period := func(d time.Duration) payment.ExpiryExtension { return payment.ExpiryExtension{Period: &d} }
	_, err := extend(payment.ExpiryExtension{})
	wantSlipError(t, err, payment.CodeEitherPeriodOrDate, "", "")
	both := deadline.Add(day)
	_, err = extend(payment.ExpiryExtension{Period: new(time.Duration), Date: &both})
	wantSlipError(t, err, payment.CodeEitherPeriodOrDate, "", "")
	earlier := deadline.Add(-time.Minute)
	_, err = extend(payment.ExpiryExtension{Date: &earlier})
	wantSlipError(t, err, payment.CodePositiveExtensionRequired, "", "")
	_, err = extend(payment.ExpiryExtension{Date: &deadline})
	wantSlipError(t, err, payment.CodePositiveExtensionRequired, "", "")
	_, err = extend(period(payment.MaxExpiryExtension + time.Second))
	wantSlipError(t, err, payment.CodeMaxExpiryExtensionExceeded, "", "")
	e, err := extend(period(payment.MaxExpiryExtension))
	if err != nil || !e.ExpirationDate.Equal(deadline.Add(payment.MaxExpiryExtension)) || e.ExtensionCount != 1 {
		t.Fatalf("a 30-day extension: %+v, %v", e, err)
	}
	// Created 3 days before the first deadline, now 33 days: the window
	// of 60 days leaves 27.
	_, err = extend(period(27*day + time.Second))
	wantSlipError(t, err, payment.CodeMaxExpiryExtensionExceeded, "", "")
	if _, err := extend(period(day)); err != nil {
		t.Fatal(err)
	}
	e, err = extend(period(day))
	if err != nil || e.ExtensionCount != 3 {
		t.Fatalf("the third extension: %+v, %v", e, err)
	}
	_, err = extend(period(day))
	wantSlipError(t, err, payment.CodeMaximumExtensionsReached, "", "")
	got := s.read(t, ch.ID)
	if got.Status != payment.ChargeAwaiting || !got.CaptureAt.Equal(e.ExpirationDate) {
		t.Fatalf("after extensions: %s, capture_at %v, want %v", got.Status, got.CaptureAt, e.ExpirationDate)
	}
	s.clock.Set(e.ExpirationDate)
	got = s.read(t, ch.ID)
	if got.Status != payment.ChargeFailed || got.Error == nil || got.Error.Code != payment.ErrConfirmationExpired {
		t.Fatalf("past the deadline: %s %+v", got.Status, got.Error)
	}
	_, err = extend(period(day))
	wantSlipError(t, err, payment.CodeValidation, "status", "INVALID_CHARGE_STATUS")

	other := s.charge(t, transferToken(), 500, nil)
	if _, err := s.Service.Refunds.CreateCancel(ctx, s.demo.Caller, s.demo.StoreID, other.ID, payment.NewCancel{}); err != nil {
		t.Fatal(err)
	}
	if got := s.read(t, other.ID); got.Status != payment.ChargeCanceled {
		t.Fatalf("a cancelled transfer: %s", got.Status)
	}
	_, err = s.act(t, other.ID, payment.ActionExpire, 0)
	wantSlipError(t, err, payment.CodeValidation, "status", "INVALID_CHARGE_STATUS")
}

// TestTransferDeposits: every deposit case under each match-amount rule:
// which deposits pay the charge, what it is charged, the ledger's lines
// and the payment status.
func TestTransferDeposits(t *testing.T) {
	type step struct {
		deposit int64
		status  payment.TransferPaymentStatus
		paid    bool
	}
	cases := []struct {
		rule    payment.MatchAmount
		steps   []step
		charged int64
	}{
		{payment.MatchMinimum, []step{{400, payment.TransferInsufficient, false}, {600, payment.TransferExact, true}}, 1000},
		{payment.MatchMinimum, []step{{1200, payment.TransferExceeded, true}}, 1200},
		{payment.MatchExact, []step{{999, payment.TransferInsufficient, false}, {1, payment.TransferExact, true}}, 1000},
		{payment.MatchExact, []step{{1001, payment.TransferExceeded, false}}, 0},
		{payment.MatchMaximum, []step{{400, payment.TransferInsufficient, true}}, 400},
		{payment.MatchMaximum, []step{{1000, payment.TransferExact, true}}, 1000},
		{payment.MatchMaximum, []step{{1001, payment.TransferExceeded, false}}, 0},
		{payment.MatchDisabled, []step{{1, payment.TransferInsufficient, true}}, 1},
		{payment.MatchDisabled, []step{{5000, payment.TransferExceeded, true}}, 5000},
	}
	for _, tc := range cases {
		t.Run(string(tc.rule), func(t *testing.T) {
			s := newSlipStack(t)
			ctx := context.Background()
			rule := tc.rule
			if _, err := s.Service.Merchants.UpdateStore(ctx, s.demo.Caller, s.demo.StoreID, payment.StoreUpdate{MatchAmount: &rule}); err != nil {
				t.Fatal(err)
			}
			ch := s.charge(t, transferToken(), 1000, nil)
			var total int64
			for i, st := range tc.steps {
				got, err := s.act(t, ch.ID, payment.ActionDeposit, st.deposit)
				if err != nil {
					t.Fatal(err)
				}
				total += st.deposit
				if want := map[bool]payment.ChargeStatus{true: payment.ChargeSuccessful, false: payment.ChargeAwaiting}[st.paid]; got.Status != want {
					t.Fatalf("deposit %d of %d: charge %s, want %s", i, st.deposit, got.Status, want)
				}
				l, err := s.Service.Charging.TransferLedger(ctx, s.demo.Caller, s.demo.StoreID, ch.ID, payment.ListParams{Limit: 10, Direction: payment.Desc})
				if err != nil {
					t.Fatal(err)
				}
				last := l.Page.Items[0]
				if st.paid {
					if last.Kind != payment.TransferPayment || last.Amount != total || last.Balance != 0 {
						t.Fatalf("the payment line %+v, want %d out, 0 left", last, total)
					}
					last = l.Page.Items[1]
				}
				if last.Kind != payment.TransferDeposit || last.Amount != st.deposit || last.Deposited != total || last.PaymentStatus != st.status {
					t.Fatalf("the deposit line %+v, want %d (total %d) %s", last, st.deposit, total, st.status)
				}
			}
			got := s.read(t, ch.ID)
			if tc.charged == 0 {
				if got.ChargedAmount != nil {
					t.Errorf("an unpaid charge charged %d", *got.ChargedAmount)
				}
				return
			}
			if got.ChargedAmount == nil || *got.ChargedAmount != tc.charged {
				t.Errorf("charged %v, want %d", got.ChargedAmount, tc.charged)
			}
		})
	}
}

// TestTransferAfterTheEnd: a deposit after the deadline finds the charge
// failed and is recorded all the same; a deposit after the charge was
// paid is recorded and pays nothing more; only the excess over the
// amount is refunded.
func TestTransferAfterTheEnd(t *testing.T) {
	s := newSlipStack(t)
	ctx := context.Background()
	late := s.charge(t, transferToken(), 1000, nil)
	s.clock.Advance(payment.DefaultTransferPeriod) // the deadline, the worker not yet run
	got, err := s.act(t, late.ID, payment.ActionDeposit, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != payment.ChargeFailed || got.Error == nil || got.Error.Code != payment.ErrConfirmationExpired || got.ChargedAmount != nil {
		t.Fatalf("a deposit at the deadline: %s %+v charged %v", got.Status, got.Error, got.ChargedAmount)
	}
	l, err := s.Service.Charging.TransferLedger(ctx, s.demo.Caller, s.demo.StoreID, late.ID, payment.ListParams{Limit: 10})
	if err != nil || len(l.Page.Items) != 1 || l.Page.Items[0].Balance != 1000 || l.Page.Items[0].PaymentStatus != payment.TransferExact {
		t.Fatalf("the late deposit's ledger %+v, %v", l, err)
	}

	ch := s.charge(t, transferToken(), 1000, nil)
	if _, err := s.act(t, ch.ID, payment.ActionDeposit, 1300); err != nil {
		t.Fatal(err)
	}
	got, err = s.act(t, ch.ID, payment.ActionDeposit, 50)
	if err != nil {
		t.Fatal(err)
	}
	if *got.ChargedAmount != 1300 {
		t.Fatalf("charged %d after a deposit past payment, want 1300", *got.ChargedAmount)
	}
	refund := func(amount int64) error {
		_, err := s.Service.Refunds.CreateRefund(ctx, s.demo.Caller, s.demo.StoreID, ch.ID, payment.NewRefund{Amount: amount, Currency: "JPY"})
		return err
	}
	wantSlipError(t, refund(301), payment.CodeRefundNotAllowed, "", "")
	if err := refund(200); err != nil {
		t.Fatal(err)
	}
	wantSlipError(t, refund(101), payment.CodeRefundNotAllowed, "", "")
	if err := refund(100); err != nil {
		t.Fatal(err)
	}
}

// TestSimulateShopperRules: the test helpers are the sandbox's, for the
// merchant's server: test mode, the secret, an amount, a charge of the
// right method.
func TestSimulateShopperRules(t *testing.T) {
	s := newSlipStack(t)
	ch := s.charge(t, transferToken(), 1000, nil)
	for _, amount := range []int64{0, -1} {
		_, err := s.act(t, ch.ID, payment.ActionDeposit, amount)
		if payment.ErrorCode(err) != payment.CodeValidation {
			t.Errorf("a deposit of %d: %v", amount, err)
		}
	}
	_, err := s.act(t, ch.ID, payment.ActionPay, 0)
	wantSlipError(t, err, payment.CodeValidation, "action", payment.ReasonInvalidFormat)
	card := servicetest.Pay(t, s.Service, s.demo.Caller, "4242424242424242", 1000, "JPY", nil)
	_, err = s.act(t, card.ID, payment.ActionPay, 0)
	wantSlipError(t, err, payment.CodeValidation, "transaction_token_id", "NOT_KONBINI_OR_BANK_TRANSFER_CHARGE")
}

// TestSlipSandboxIsTestOnly: the instructions page's buttons and deposit
// form stand for the counter and the bank in test mode only; a live
// payment's page refuses them, whoever holds its key. (No live charge
// can be made on the sandbox acquirer: a test charge and its approval are
// turned live, as a real acquirer's charge would be.)
func TestSlipSandboxIsTestOnly(t *testing.T) {
	s := newSlipStack(t)
	ctx := context.Background()
	for _, tc := range []struct {
		token  payment.NewToken
		action payment.ApprovalAction
	}{
		{konbiniToken("lawson"), payment.ActionPay},
		{konbiniToken("lawson"), payment.ActionExpire},
		{transferToken(), payment.ActionExpire},
		{transferToken(), payment.ActionDeposit},
	} {
		t.Run(tc.token.PaymentType+" "+string(tc.action), func(t *testing.T) {
			ch := s.charge(t, tc.token, 1000, nil)
			var key string
			err := s.DB.Update(ctx, func(tx payment.Tx) error {
				ch.Mode = payment.ModeLive
				if err := tx.UpdateCharge(ctx, ch); err != nil {
					return err
				}
				ap, err := tx.ApprovalFor(ctx, ch.ID)
				if err != nil {
					return err
				}
				ap.Mode, key = payment.ModeLive, ap.Key
				return tx.UpdateApproval(ctx, ap)
			})
			if err != nil {
				t.Fatal(err)
			}
			if tc.action == payment.ActionDeposit {
				_, err = s.Service.Charging.DepositOnApproval(ctx, key, 1000)
			} else {
				_, err = s.Service.Charging.ActOnApproval(ctx, key, tc.action, "")
			}
			wantSlipError(t, err, payment.CodeTestModeOnly, "", "")
		})
	}
}

// TestSlipLongestWait: a konbini payment of the default 30 days, begun
// after the charge was made (the worker opens it), extends by 30 more to
// the window's last instant; a second later is too far.
func TestSlipLongestWait(t *testing.T) {
	s := newSlipStack(t)
	ctx := context.Background()
	tok, err := s.Service.Tokens.CreateToken(ctx, s.demo.Caller, konbiniToken("lawson"))
	if err != nil {
		t.Fatal(err)
	}
	ch, err := s.Service.Charging.CreateCharge(ctx, s.demo.Caller, payment.NewCharge{TokenID: tok.ID, Amount: 1000, Currency: "JPY"})
	if err != nil {
		t.Fatal(err)
	}
	s.clock.Advance(time.Second) // the worker opens the payment a second later
	servicetest.AwaitCharge(t, s.Service, s.demo.Caller, s.demo.StoreID, ch.ID, "the payment to open", servicetest.Awaiting)
	d := payment.MaxExpiryExtension + time.Second
	_, err = s.Service.Charging.ExtendExpiry(ctx, s.demo.Caller, s.demo.StoreID, ch.ID, payment.ExpiryExtension{Period: &d})
	wantSlipError(t, err, payment.CodeMaxExpiryExtensionExceeded, "", "")
	d = payment.MaxExpiryExtension
	e, err := s.Service.Charging.ExtendExpiry(ctx, s.demo.Caller, s.demo.StoreID, ch.ID, payment.ExpiryExtension{Period: &d})
	if err != nil {
		t.Fatalf("30 more days of a 30-day payment: %v", err)
	}
	if want := s.clock.Now().Add(payment.MaxPaymentWindow); !e.ExpirationDate.Equal(want) {
		t.Errorf("the deadline %v, want %v", e.ExpirationDate, want)
	}
}

// TestTestBankIsTestOnly: the sandbox's test bank opens no live account;
// Aozora Bank's does.
func TestTestBankIsTestOnly(t *testing.T) {
	s := newSlipStack(t)
	ctx := context.Background()
	live, err := s.Service.Access.IssueStoreAppToken(ctx, s.demo.StoreID, payment.NewAppToken{Mode: payment.ModeLive})
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.Service.Access.Authenticate(ctx, "Bearer "+live.Secret+"."+live.JWT, "")
	if err != nil {
		t.Fatal(err)
	}
	nt := transferToken()
	nt.Data.Brand = payment.TestBank
	_, err = s.Service.Tokens.CreateToken(ctx, c, nt)
	wantSlipError(t, err, payment.CodeNoTestCardInLiveMode, "", "")
	if _, err := s.Service.Tokens.CreateToken(ctx, s.demo.Caller, nt); err != nil {
		t.Errorf("the test bank in test mode: %v", err)
	}
	if _, err := s.Service.Tokens.CreateToken(ctx, c, transferToken()); err != nil {
		t.Errorf("Aozora Bank in live mode: %v", err)
	}
}
