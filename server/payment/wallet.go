package payment

import (
	"context"
	"slices"
	"time"
)

// WalletData is what an online or QR-merchant token holds: the wallet, and
// for online wallets how the shopper's device reaches it.
type WalletData struct {
	Brand          string `json:"brand"`
	CallMethod     string `json:"call_method,omitempty"`
	OSType         string `json:"os_type,omitempty"`
	UserIdentifier string `json:"user_identifier,omitempty"`
}

// WalletInput is WalletData as the client sends it.
type WalletInput = WalletData

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
func checkWallet(v *Validation, p *NewToken, brands []string) *WalletInput {
	if p.Type != OneTime {
		v.Add("type", "ONE_TIME_ONLY_ALLOWED")
	}
	if p.Card != nil {
		v.Add("data.card_number", "FORBIDDEN_PARAMETER")
	}
	w := p.Wallet
	if w == nil {
		v.Add("data", ReasonRequired)
		return nil
	}
	switch {
	case w.Brand == "":
		v.Add("brand", ReasonRequired)
	case !slices.Contains(brands, w.Brand):
		v.Add("brand", ReasonInvalidFormat)
	}
	return w
}

// forbidThreeDS refuses 3-D Secure on a wallet token, a card matter.
func forbidThreeDS(v *Validation, p *NewToken) {
	if p.ThreeDS != nil {
		v.Add("three_ds", "ONLY_FOR_CARD_PAYMENT")
	}
}

func (walletMethod) newToken(_ *Service, _ *Caller, p *NewToken, tok *TransactionToken) error {
	tok.Wallet = *p.Wallet
	return nil
}

// admitToken: a wallet token holds no card data, so none of the store's
// card rules has a part in it.
func (walletMethod) admitToken(context.Context, *Service, *writeTx, *Caller, *Store, *TransactionToken) error {
	return nil
}

func (walletMethod) startToken(context.Context, *writeTx, *TransactionToken, time.Time) error {
	return nil
}

// checkCharge refuses what a wallet charge cannot do: authorise without
// capturing, and 3-D Secure, both card matters.
func (walletMethod) checkCharge(_ *TransactionToken, p *NewCharge) error {
	var v Validation
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
func (walletMethod) instrument(*Service, *TransactionToken) (CardDetails, error) {
	return CardDetails{}, nil
}

// authorize opens a wallet payment for a pending charge: the charge
// awaits the shopper, who pays on the wallet's page until the payment
// expires.
func (walletMethod) authorize(ctx context.Context, s *Service, w Work, _ *Charge, tok *TransactionToken, _ CardDetails) error {
	return s.awaitShopper(ctx, w, func(ch *Charge) *Approval {
		return &Approval{
			Kind: ApprovalWallet, ResourceType: ResourceCharge, ResourceID: ch.ID, StoreID: ch.StoreID,
			MerchantID: ch.MerchantID, Mode: ch.Mode, Brand: tok.Wallet.Brand, CallMethod: tok.Wallet.CallMethod,
			Amount: ch.RequestedAmount, Currency: ch.Currency,
		}
	}, s.walletExpiry)
}

func (walletMethod) approvalKind() ApprovalKind { return ApprovalWallet }

// approvalOutcome: the wallet's page offers Pay, Fail, Cancel and "Let it
// expire".
func (walletMethod) approvalOutcome(_ *Approval, action ApprovalAction, _ string) (ApprovalStatus, error) {
	switch action {
	case ActionPay:
		return ApprovalSuccessful, nil
	case ActionFail:
		return ApprovalFailed, nil
	case ActionCancel:
		return ApprovalCanceled, nil
	case ActionExpire:
		return ApprovalExpired, nil
	}
	return "", Invalid("action", ReasonInvalidFormat)
}

// settleCharge: the charge succeeds (captured), or fails with 340
// (refused), 345 (cancelled: the charge is canceled) or 327 (expired).
func (walletMethod) settleCharge(ch *Charge, _ *Approval, outcome ApprovalStatus) bool {
	switch outcome {
	case ApprovalSuccessful:
		amount := ch.RequestedAmount
		ch.Status, ch.ChargedAmount, ch.CaptureState = ChargeSuccessful, &amount, CaptureDone
	case ApprovalCanceled:
		ch.Status, ch.Error = ChargeCanceled, NewPaymentError(ErrPaymentCanceled, "the shopper cancelled the payment")
	case ApprovalExpired:
		ch.Status, ch.Error = ChargeFailed, NewPaymentError(ErrConfirmationExpired, "the shopper did not pay in time")
	default:
		ch.Status, ch.Error = ChargeFailed, NewPaymentError(ErrWalletRejected, "the wallet refused the payment")
	}
	return false
}

func (walletMethod) checkRefund(*Charge) error { return nil }

func (walletMethod) checkCancel(*Charge) error { return nil }
