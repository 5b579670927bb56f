package charging

import (
	"context"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/payment/outbox"
)

// konbiniMethod is a convenience-store payment (payment_type konbini):
// the shopper pays at the counter or terminal of the store their token
// names, with the payment number (and, at some stores, a confirmation
// number) its charge gives them, before the deadline. A konbini payment
// cannot be refunded through the gateway (the store hands out cash to
// nobody); before it is paid it is cancelled.
type konbiniMethod struct{ slipMethod }

func (konbiniMethod) paymentType() string { return payment.PaymentTypeKonbini }

// maxCustomerName bounds a konbini shopper's name, which the stores print
// on their slips.
const maxCustomerName = 60

func (konbiniMethod) checkToken(v *payment.Validation, p *payment.NewToken, _ time.Time) {
	d := checkSlipToken(v, p, payment.MinKonbiniPeriod, payment.MaxKonbiniPeriod, payment.DefaultKonbiniPeriod)
	if d == nil {
		return
	}
	d.CustomerName = strings.TrimSpace(d.CustomerName)
	switch {
	case d.CustomerName == "":
		v.Add("customer_name", payment.ReasonRequired)
	case utf8.RuneCountInString(d.CustomerName) > maxCustomerName:
		v.Add("customer_name", payment.ReasonInvalidLength)
	default:
		payment.CheckText(v, "customer_name", d.CustomerName, maxCustomerName*utf8.UTFMax)
	}
	switch {
	case d.ConvenienceStore == "":
		v.Add("convenience_store", payment.ReasonRequired)
	case !slices.Contains(payment.ConvenienceStores, d.ConvenienceStore):
		v.Add("convenience_store", payment.ReasonInvalidFormat)
	}
	checkJapanesePhone(v, d.PhoneNumber)
}

// checkJapanesePhone validates a konbini shopper's phone number: required,
// in Japan (81), and a Japanese number of 10 or 11 digits with its
// leading 0 (or 9 or 10 without it), hyphens and spaces aside, which are
// dropped.
func checkJapanesePhone(v *payment.Validation, ph *payment.Phone) {
	if ph == nil {
		v.Add("phone_number", payment.ReasonRequired)
		return
	}
	if ph.CountryCode != 81 {
		v.Add("phone_number", payment.ReasonOnlyJapanesePhone)
		return
	}
	local := strings.NewReplacer("-", "", " ", "").Replace(ph.LocalNumber)
	digits := len(local) > 0 && strings.Trim(local, "0123456789") == ""
	lo, hi := 9, 10
	if strings.HasPrefix(local, "0") {
		lo, hi = 10, 11
	}
	if !digits || len(local) < lo || len(local) > hi {
		v.Add("phone_number.local_number", payment.ReasonInvalidPhone)
		return
	}
	ph.LocalNumber = local
}

func (konbiniMethod) newToken(_ *core, _ *payment.Caller, p *payment.NewToken, tok *payment.TransactionToken) error {
	d := p.Data
	tok.Data = payment.TokenData{
		CustomerName: d.CustomerName, ConvenienceStore: d.ConvenienceStore, PhoneNumber: d.PhoneNumber,
		ExpirationPeriod: d.ExpirationPeriod, ExpirationTimeShift: d.ExpirationTimeShift,
	}
	return nil
}

// admitToken: the store takes konbini payments unless it turned them off.
func (konbiniMethod) admitToken(_ context.Context, _ *core, _ *outbox.Tx, _ *payment.Caller, st *payment.Store, _ *payment.TransactionToken) error {
	if st.Settings.KonbiniOff {
		return payment.Errorf(payment.CodeConvenienceDisabled, "this store does not take konbini payments")
	}
	return nil
}

// konbiniNumbers are the lengths of the numbers each store's counter asks
// for, as the stores' own slips have them: Seven-Eleven's 13-digit
// payment slip number alone; Pay-easy's customer number with its
// confirmation number; the others' receipt number with a confirmation
// number (FamilyMart's a 5-digit company code). The sandbox makes them up
// at random.
var konbiniNumbers = map[string]struct{ payment, confirmation int }{
	"seven_eleven": {13, 0}, "family_mart": {12, 5}, "lawson": {11, 6}, "mini_stop": {11, 6},
	"seico_mart": {11, 6}, "pay_easy": {11, 6}, "circle_k": {12, 5}, "sunkus": {12, 5},
	"daily_yamazaki": {11, 6}, "yamazaki_daily_store": {11, 6},
}

// authorize opens the payment at the store: the charge awaits its shopper
// with the store's numbers until its deadline.
func (konbiniMethod) authorize(ctx context.Context, s *core, w payment.Work, _ *payment.Charge, tok *payment.TransactionToken, _ payment.CardDetails) error {
	return awaitSlip(ctx, s, w, tok, payment.ApprovalKonbini, func() payment.PaymentSlip {
		n := konbiniNumbers[tok.Data.ConvenienceStore]
		slip := payment.PaymentSlip{
			ConvenienceStore: tok.Data.ConvenienceStore, CustomerName: tok.Data.CustomerName,
			PaymentNumber: randomDigits(n.payment),
		}
		if n.confirmation > 0 {
			slip.ConfirmationNumber = randomDigits(n.confirmation)
		}
		return slip
	})
}

func (konbiniMethod) approvalKind() payment.ApprovalKind { return payment.ApprovalKonbini }

// approvalOutcome: the sandbox's instructions page (the store's counter)
// offers "Pay at the counter" and "Let the deadline pass", in test mode.
func (konbiniMethod) approvalOutcome(ap *payment.Approval, action payment.ApprovalAction, _ string) (payment.ApprovalStatus, error) {
	if err := sandboxOnly(ap); err != nil {
		return "", err
	}
	switch action {
	case payment.ActionPay:
		return payment.ApprovalSuccessful, nil
	case payment.ActionExpire:
		return payment.ApprovalExpired, nil
	}
	return "", payment.Invalid("action", payment.ReasonInvalidFormat)
}

// settleCharge: paid, the charge succeeds (captured); past its deadline it
// fails with 327, as an unpaid wallet payment does.
func (konbiniMethod) settleCharge(ch *payment.Charge, _ *payment.Approval, outcome payment.ApprovalStatus) bool {
	settleSlip(ch, ch.RequestedAmount, outcome)
	return false
}

// checkRefund: a konbini payment is not refunded through the gateway.
func (konbiniMethod) checkRefund(*payment.Charge, int64, int64) error {
	return payment.Errorf(payment.CodeRefundNotAllowed, "konbini payments cannot be refunded")
}
