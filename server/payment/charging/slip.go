package charging

import (
	"context"
	"crypto/rand"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/payment/outbox"
)

// slipMethod is what konbini (konbini.go) and bank transfers
// (banktransfer.go) share: the shopper pays away from any screen, with
// what the charge tells them (a payment slip's numbers, an account), by a
// deadline. A token pays once, in yen; a charge is captured when paid,
// never 3-D Secure; it awaits its shopper until paid, until the merchant
// cancels it, or until its deadline (capture_at), which the gateway keeps
// on its own clock and the merchant may extend (expiry.go). The sandbox's
// instructions page and test helpers stand for the store's counter and
// the bank.
type slipMethod struct{}

// slipCurrency is the one currency konbini and Japanese bank transfers
// take.
const slipCurrency = "JPY"

func (slipMethod) traits() methodTraits {
	return methodTraits{awaits: awaitsIssuerToken, deadline: true}
}

// checkSlipToken validates what every new konbini or bank-transfer token
// carries: one_time only, no card data, no 3-D Secure, and its payment
// period within bounds (the default when it names none).
func checkSlipToken(v *payment.Validation, p *payment.NewToken, minPeriod, maxPeriod, defaultPeriod time.Duration) *payment.TokenData {
	if p.Type != payment.OneTime {
		v.Add("type", "ONE_TIME_ONLY_ALLOWED")
	}
	if p.Card != nil {
		v.Add("data.card_number", payment.ReasonForbiddenParameter)
	}
	forbidThreeDS(v, p)
	d := p.Data
	if d == nil {
		v.Add("data", payment.ReasonRequired)
		return nil
	}
	switch {
	case d.ExpirationPeriod == 0:
		d.ExpirationPeriod = defaultPeriod
	case d.ExpirationPeriod < minPeriod || d.ExpirationPeriod > maxPeriod:
		v.Add("expiration_period", payment.ReasonExpirationOutOfBounds)
	}
	if d.ExpirationTimeShift != "" {
		ts, ok := payment.ParseTimeShift(d.ExpirationTimeShift)
		if !ok {
			v.Add("expiration_time_shift", payment.ReasonInvalidFormat)
		} else {
			d.ExpirationTimeShift = ts.String()
		}
	}
	return d
}

func (slipMethod) startToken(context.Context, *outbox.Tx, *payment.TransactionToken, time.Time) error {
	return nil
}

// checkCharge refuses what a konbini or bank-transfer charge cannot do:
// authorise without capturing, 3-D Secure, another currency than yen; and
// a capture_at (its deadline) that is not ahead, or beyond the longest a
// payment may wait. p is never nil: neither method takes subscriptions
// (methodTraits), which PlaceCharge checks first.
func (slipMethod) checkCharge(_ *payment.TransactionToken, p *payment.NewCharge, now time.Time) error {
	var v payment.Validation
	if p.Capture != nil && !*p.Capture {
		v.Add("capture", "CAPTURE_ONLY_FOR_CARD_PAYMENT")
	}
	if p.ThreeDS != nil || p.ExternalThreeDS != nil {
		v.Add("three_ds", "ONLY_FOR_CARD_PAYMENT")
	}
	if at := p.CaptureAt; at != nil {
		switch {
		case !at.After(now.Add(time.Hour)):
			v.Add("capture_at", "MUST_BE_FUTURE_TIME")
		case at.After(now.Add(payment.MaxPaymentWindow)):
			v.Add("capture_at", "PAYMENT_EXPIRATION_EXCEEDS_PERIOD")
		}
	}
	if err := v.Err(); err != nil {
		return err
	}
	if !strings.EqualFold(p.Currency, slipCurrency) {
		return payment.Errorf(payment.CodeCurrencyNotSupported, "konbini payments and bank transfers are made in JPY")
	}
	return nil
}

// instrument: the shopper pays with cash or from their bank; the
// processor is given nothing.
func (slipMethod) instrument(*core, *payment.TransactionToken) (payment.CardDetails, error) {
	return payment.CardDetails{}, nil
}

// slipDeadline is when the shopper of ch, which begins to await them at
// now, must have paid: the charge's capture_at, when it names one, or the
// token's period (moved to its time of day).
func slipDeadline(ch *payment.Charge, tok *payment.TransactionToken, now time.Time) time.Time {
	if ch.CaptureAt != nil {
		return *ch.CaptureAt
	}
	return payment.Deadline(now, tok.Data.ExpirationPeriod, tok.Data.ExpirationTimeShift)
}

// awaitSlip puts a pending charge in wait of its shopper until its
// deadline, which the charge shows as capture_at, with an approval of
// kind whose slip is what slip says.
func awaitSlip(ctx context.Context, s *core, w payment.Work, tok *payment.TransactionToken, kind payment.ApprovalKind, slip func() payment.PaymentSlip) error {
	return s.awaitShopper(ctx, w, func(ch *payment.Charge, now time.Time) (*payment.Approval, time.Duration) {
		deadline := slipDeadline(ch, tok, now)
		ch.CaptureAt = &deadline
		return &payment.Approval{
			Kind: kind, ResourceType: payment.ResourceCharge, ResourceID: ch.ID, StoreID: ch.StoreID,
			MerchantID: ch.MerchantID, Mode: ch.Mode, Brand: tok.Data.Brand, Amount: ch.RequestedAmount,
			Currency: ch.Currency, Slip: slip(),
		}, deadline.Sub(now)
	})
}

// issuerToken: the shopper is sent to the sandbox's instructions page
// (http_get), and the payload holds what the page shows: the numbers to
// pay with and the deadline, so that an app may show them itself.
func (slipMethod) issuerToken(origin string, ch *payment.Charge, ap *payment.Approval) *payment.IssuerToken {
	payload := map[string]string{
		"resource_id": ch.ID.String(), "resource_type": payment.ResourceCharge,
		"amount": strconv.FormatInt(ap.Amount, 10), "currency": ap.Currency,
		"expiration_date": ap.ExpiresOn.UTC().Format(time.RFC3339),
	}
	sl := ap.Slip
	for k, v := range map[string]string{
		"convenience_store": sl.ConvenienceStore, "payment_number": sl.PaymentNumber,
		"confirmation_number": sl.ConfirmationNumber, "customer_name": sl.CustomerName,
	} {
		if v != "" {
			payload[k] = v
		}
	}
	it := &payment.IssuerToken{
		IssuerToken: origin + payment.SlipPagePath + ap.Key, CallMethod: "http_get", Payload: payload,
		PaymentType: ch.PaymentType,
	}
	if va := sl.VirtualAccount; va != nil {
		it.Account = va
		for k, v := range map[string]string{
			"bank_code": va.BankCode, "bank_name": va.BankName, "branch_code": va.BranchCode,
			"branch_name": va.BranchName, "account_type": va.AccountType, "account_number": va.AccountNumber,
			"account_holder_name": va.AccountHolderName, "account_id": va.AccountID,
		} {
			payload[k] = v
		}
	}
	return it
}

func (slipMethod) qrImage(string, *payment.Approval) string { return "" }

// sandboxOnly refuses the sandbox's stand-ins for the counter and the bank
// on a live payment (its page's buttons): only the store or the bank
// says a live one was paid.
func sandboxOnly(ap *payment.Approval) error {
	if ap.Mode != payment.ModeTest {
		return payment.Errorf(payment.CodeTestModeOnly, "a live payment is paid at the store or the bank, not on its page")
	}
	return nil
}

// settleSlip applies the end of a konbini payment's or bank transfer's
// approval to its charge: paid, it succeeds (captured) with charged as its
// charged amount; otherwise its deadline passed, and it fails with 327, as
// an unpaid wallet payment does.
func settleSlip(ch *payment.Charge, charged int64, outcome payment.ApprovalStatus) {
	if outcome == payment.ApprovalSuccessful {
		ch.Status, ch.ChargedAmount, ch.CaptureState = payment.ChargeSuccessful, &charged, payment.CaptureDone
		return
	}
	ch.Status, ch.Error = payment.ChargeFailed, payment.NewPaymentError(payment.ErrConfirmationExpired, "the shopper did not pay by the deadline")
}

// checkCancel: a charge waiting for its shopper's money may be withdrawn
// (the shared rule); once paid it cannot be cancelled, only, where the
// method allows, refunded.
func (slipMethod) checkCancel(ch *payment.Charge) error {
	if ch.Status != payment.ChargeAwaiting && ch.Status != payment.ChargePending {
		return payment.Errorf(payment.CodeCancelNotAllowed, "a paid or ended konbini or bank-transfer charge cannot be canceled")
	}
	return nil
}

// randomDigits returns n random decimal digits.
func randomDigits(n int) string {
	var b strings.Builder
	ten := big.NewInt(10)
	for range n {
		d, err := rand.Int(rand.Reader, ten)
		if err != nil {
			panic(err) // crypto/rand does not fail on supported systems
		}
		b.WriteByte(byte('0' + d.Int64()))
	}
	return b.String()
}
