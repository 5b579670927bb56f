package charging

import (
	"context"
	"slices"
	"time"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/payment/outbox"
)

// walletMethod is what the wallets share, online (online.go) and
// merchant-presented QR (qrmerchant.go): a token names the wallet and
// holds no card data, and pays once; a charge is captured at once, never
// 3-D Secure, and awaits its shopper, who pays (or not) in the wallet
// until the payment expires (Config.WalletExpiry, then 327).
type walletMethod struct{}

// checkWallet validates what every new wallet token carries: one_time
// only (the shopper approves each payment in the wallet), no card data,
// and one of the wallet's brands. It returns the wallet's data, nil when
// there is none.
func checkWallet(v *payment.Validation, p *payment.NewToken, brands []string) *payment.TokenData {
	if p.Type != payment.OneTime {
		v.Add("type", "ONE_TIME_ONLY_ALLOWED")
	}
	if p.Card != nil {
		v.Add("data.card_number", "FORBIDDEN_PARAMETER")
	}
	w := p.Data
	if w == nil {
		v.Add("data", payment.ReasonRequired)
		return nil
	}
	switch {
	case w.Brand == "":
		v.Add("brand", payment.ReasonRequired)
	case !slices.Contains(brands, w.Brand):
		v.Add("brand", payment.ReasonInvalidFormat)
	}
	return w
}

// forbidThreeDS refuses 3-D Secure on a wallet token, a card matter.
func forbidThreeDS(v *payment.Validation, p *payment.NewToken) {
	if p.ThreeDS != nil {
		v.Add("three_ds", "ONLY_FOR_CARD_PAYMENT")
	}
}

func (walletMethod) newToken(_ *core, _ *payment.Caller, p *payment.NewToken, tok *payment.TransactionToken) error {
	tok.Data = *p.Data
	return nil
}

// admitToken: a wallet token holds no card data, so none of the store's
// card rules has a part in it.
func (walletMethod) admitToken(context.Context, *core, *outbox.Tx, *payment.Caller, *payment.Store, *payment.TransactionToken) error {
	return nil
}

func (walletMethod) startToken(context.Context, *outbox.Tx, *payment.TransactionToken, time.Time) error {
	return nil
}

// checkCharge refuses what a wallet charge cannot do: authorise without
// capturing, and 3-D Secure, both card matters.
func (walletMethod) checkCharge(_ *payment.TransactionToken, p *payment.NewCharge, _ time.Time) error {
	var v payment.Validation
	if p.Capture != nil && !*p.Capture {
		v.Add("capture", "CAPTURE_ONLY_FOR_CARD_PAYMENT")
	}
	if p.CaptureAt != nil {
		v.Add("capture_at", "CAPTURE_ONLY_FOR_CARD_PAYMENT")
	}
	if p.ThreeDS != nil || p.ExternalThreeDS != nil {
		v.Add("three_ds", "ONLY_FOR_CARD_PAYMENT")
	}
	return v.Err()
}

// instrument: a wallet has no card; the processor is given nothing of it.
func (walletMethod) instrument(*core, *payment.TransactionToken) (payment.CardDetails, error) {
	return payment.CardDetails{}, nil
}

// authorize opens a wallet payment for a pending charge: the charge
// awaits the shopper, who pays on the wallet's page until the payment
// expires.
func (walletMethod) authorize(ctx context.Context, s *core, w payment.Work, _ *payment.Charge, tok *payment.TransactionToken, _ payment.CardDetails) error {
	return s.awaitShopper(ctx, w, func(ch *payment.Charge, _ time.Time) (*payment.Approval, time.Duration) {
		return &payment.Approval{
			Kind: payment.ApprovalWallet, ResourceType: payment.ResourceCharge, ResourceID: ch.ID, StoreID: ch.StoreID,
			MerchantID: ch.MerchantID, Mode: ch.Mode, Brand: tok.Data.Brand, CallMethod: tok.Data.CallMethod,
			Amount: ch.RequestedAmount, Currency: ch.Currency,
		}, s.walletExpiry
	})
}

func (walletMethod) approvalKind() payment.ApprovalKind { return payment.ApprovalWallet }

// approvalOutcome: the wallet's page offers Pay, Fail, Cancel and "Let it
// expire".
func (walletMethod) approvalOutcome(_ *payment.Approval, action payment.ApprovalAction, _ string) (payment.ApprovalStatus, error) {
	switch action {
	case payment.ActionPay:
		return payment.ApprovalSuccessful, nil
	case payment.ActionFail:
		return payment.ApprovalFailed, nil
	case payment.ActionCancel:
		return payment.ApprovalCanceled, nil
	case payment.ActionExpire:
		return payment.ApprovalExpired, nil
	}
	return "", payment.Invalid("action", payment.ReasonInvalidFormat)
}

// settleCharge: the charge succeeds (captured), or fails with 340
// (refused), 345 (cancelled: the charge is canceled) or 327 (expired).
func (walletMethod) settleCharge(ch *payment.Charge, _ *payment.Approval, outcome payment.ApprovalStatus) bool {
	switch outcome {
	case payment.ApprovalSuccessful:
		amount := ch.RequestedAmount
		ch.Status, ch.ChargedAmount, ch.CaptureState = payment.ChargeSuccessful, &amount, payment.CaptureDone
	case payment.ApprovalCanceled:
		ch.Status, ch.Error = payment.ChargeCanceled, payment.NewPaymentError(payment.ErrPaymentCanceled, "the shopper cancelled the payment")
	case payment.ApprovalExpired:
		ch.Status, ch.Error = payment.ChargeFailed, payment.NewPaymentError(payment.ErrConfirmationExpired, "the shopper did not pay in time")
	default:
		ch.Status, ch.Error = payment.ChargeFailed, payment.NewPaymentError(payment.ErrWalletRejected, "the wallet refused the payment")
	}
	return false
}

func (walletMethod) checkRefund(*payment.Charge, int64, int64) error { return nil }

func (walletMethod) checkCancel(*payment.Charge) error { return nil }
