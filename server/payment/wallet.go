package payment

import (
	"context"
	"slices"
	"time"

	"github.com/google/uuid"
)

// The payment types of tokens besides cards: an online wallet (the shopper
// pays in the wallet's app or page: PayPay, Alipay, WeChat Pay…) and a
// merchant-presented QR code (the shopper scans the code the merchant
// shows).
const (
	PaymentTypeOnline     = "online"
	PaymentTypeQRMerchant = "qr_merchant"
)

// OnlineBrands are the online wallets the sandbox simulates, each with a
// page of its own look (web/hosted).
var OnlineBrands = []string{"pay_pay_online", "alipay_online", "alipay_plus_online", "we_chat_online", "d_barai_online"}

// QRMerchantBrands are the merchant-presented QR brands the sandbox
// simulates.
var QRMerchantBrands = []string{"pay_pay_merchant", "alipay_merchant_qr", "we_chat_mpm", "rakuten_pay_merchant", "d_barai_merchant"}

// callMethods are how the shopper's device reaches an online wallet
// (UnivaPay's call_method); needsOS marks those that hand over to an app,
// which must know the phone's system (os_type).
var callMethods = map[string]struct{ needsOS bool }{
	"http_get": {}, "http_get_mobile": {true}, "http_post": {}, "sdk": {true}, "web": {}, "app": {true},
}

// defaultCallMethod is the call method of a token that names none, as the
// Node SDK's default.
const defaultCallMethod = "http_post"

// maxUserIdentifierLen bounds an online token's user_identifier (the
// shopper's id at the wallet, e.g. WeChat's open_id).
const maxUserIdentifierLen = 128

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

// checkWallet validates a new online or QR-merchant token. Both pay once
// (one_time only: the shopper approves each payment in the wallet), and
// neither holds card data.
func checkWallet(v *Validation, p *NewToken) {
	if p.Type != OneTime {
		v.Add("type", "ONE_TIME_ONLY_ALLOWED")
	}
	if p.Card != nil {
		v.Add("data.card_number", "FORBIDDEN_PARAMETER")
	}
	w := p.Wallet
	if w == nil {
		v.Add("data", ReasonRequired)
		return
	}
	brands := OnlineBrands
	if p.PaymentType == PaymentTypeQRMerchant {
		brands = QRMerchantBrands
	}
	switch {
	case w.Brand == "":
		v.Add("brand", ReasonRequired)
	case !slices.Contains(brands, w.Brand):
		v.Add("brand", ReasonInvalidFormat)
	}
	if p.PaymentType == PaymentTypeQRMerchant {
		if w.CallMethod != "" || w.OSType != "" || w.UserIdentifier != "" {
			v.Add("call_method", "FORBIDDEN_PARAMETER")
		}
		return
	}
	if w.CallMethod == "" {
		w.CallMethod = defaultCallMethod
	}
	cm, ok := callMethods[w.CallMethod]
	if !ok {
		v.Add("call_method", ReasonInvalidFormat)
	}
	switch {
	case w.OSType == "" && cm.needsOS:
		v.Add("os_type", ReasonRequired)
	case w.OSType != "" && w.OSType != "ios" && w.OSType != "android":
		v.Add("os_type", ReasonInvalidFormat)
	}
	checkText(v, "user_identifier", w.UserIdentifier, maxUserIdentifierLen)
	// WeChat Pay in a browser needs the shopper's IP address (the
	// reference).
	if w.Brand == "we_chat_online" && (w.CallMethod == "web" || w.CallMethod == "http_get") && p.IPAddress == "" {
		v.Add("ip_address", ReasonRequired)
	}
}

// isWallet reports whether a payment type is paid in a wallet.
func isWallet(paymentType string) bool {
	return paymentType == PaymentTypeOnline || paymentType == PaymentTypeQRMerchant
}

// TokenPaymentType is the payment type of the charge's token.
func (ch *Charge) TokenPaymentType() string {
	if ch.PaymentType == "" {
		return PaymentTypeCard
	}
	return ch.PaymentType
}

// checkWalletCharge refuses what a wallet charge cannot do: authorise
// without capturing, and 3-D Secure, both card matters.
func checkWalletCharge(p *NewCharge) error {
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

// startWalletPayment opens a wallet payment for a pending charge on an
// online or QR-merchant token: the charge awaits the shopper, who pays on
// the wallet's page until the payment expires.
func (s *Service) startWalletPayment(ctx context.Context, w Work, tok *TransactionToken) error {
	err := s.update(ctx, func(tx *writeTx) error {
		if err := tx.CompleteWork(ctx, w); err != nil {
			return err
		}
		ch, err := tx.Charge(ctx, w.ID)
		if err != nil || ch.Status != ChargePending {
			return err
		}
		now := s.clock.Now()
		ch.Status, ch.UpdatedOn = ChargeAwaiting, now
		if err := s.moveCharge(ctx, tx, ch, ChargePending); err != nil {
			return err
		}
		ap := &Approval{
			Kind: ApprovalWallet, ResourceType: ResourceCharge, ResourceID: ch.ID, StoreID: ch.StoreID,
			MerchantID: ch.MerchantID, Mode: ch.Mode, Brand: tok.Wallet.Brand, CallMethod: tok.Wallet.CallMethod,
			Amount: ch.RequestedAmount, Currency: ch.Currency,
		}
		if err := startApproval(ctx, tx, ap, s.walletExpiry, now); err != nil {
			return err
		}
		return tx.PutLedgerEntry(ctx, chargeLedgerEntry(ch))
	})
	if err == nil {
		s.changes.notify(w.ID)
	}
	return err
}

// ChargeIssuerToken returns how the shopper pays an online charge that
// awaits them (GET …/charges/{id}/issuer_token): the wallet page's URL to
// open (http_get, http_get_mobile, web) or to post the payload to
// (http_post), or for an app (sdk, app) the opaque token the wallet's SDK
// takes, which the sandbox's page also takes in place of its key.
func (s *Service) ChargeIssuerToken(ctx context.Context, c *Caller, storeID, id uuid.UUID) (*IssuerToken, error) {
	var it *IssuerToken
	err := s.view(ctx, func(tx Tx) error {
		ch, err := s.visibleCharge(ctx, tx, c, storeID, id)
		if err != nil {
			return err
		}
		if err := s.chargeApprovalCaller(c, ch); err != nil {
			return err
		}
		if ch.TokenPaymentType() != PaymentTypeOnline {
			return Invalid("transaction_token_id", "NOT_ONLINE_CHARGE")
		}
		if ch.Status == ChargePending {
			return Invalid("status", "ISSUER_TOKEN_EMPTY")
		}
		ap, err := awaitingApproval(ctx, tx, ch.ID, ch.Status == ChargeAwaiting)
		if err != nil {
			return err
		}
		page := s.publicOrigin + WalletPagePath + ap.Key
		it = &IssuerToken{IssuerToken: page, CallMethod: ap.CallMethod, Payload: map[string]string{}, PaymentType: PaymentTypeOnline}
		switch ap.CallMethod {
		case "http_post":
			it.Payload = map[string]string{"resource_id": ch.ID.String(), "resource_type": ResourceCharge}
		case "sdk", "app":
			it.IssuerToken = ap.Key
		}
		return nil
	})
	return it, err
}

// ChargeQR is the code a merchant shows for a QR-merchant charge: Ready
// once the wallet's payment is open, with the address of its PNG.
type ChargeQR struct {
	Ready    bool
	ImageURL string
}

// ChargeQR returns the QR code of a merchant-presented QR charge (GET
// …/charges/{id}/qr).
func (s *Service) ChargeQR(ctx context.Context, c *Caller, storeID, id uuid.UUID) (*ChargeQR, error) {
	var qr *ChargeQR
	err := s.view(ctx, func(tx Tx) error {
		ch, err := s.visibleCharge(ctx, tx, c, storeID, id)
		if err != nil {
			return err
		}
		if err := s.chargeApprovalCaller(c, ch); err != nil {
			return err
		}
		if ch.TokenPaymentType() != PaymentTypeQRMerchant {
			return Invalid("transaction_token_id", "NOT_QR_CHARGE")
		}
		if ch.Status == ChargePending {
			qr = &ChargeQR{}
			return nil
		}
		ap, err := awaitingApproval(ctx, tx, ch.ID, ch.Status == ChargeAwaiting)
		if err != nil {
			return err
		}
		qr = &ChargeQR{Ready: true, ImageURL: s.publicOrigin + WalletPagePath + ap.Key + WalletQRSuffix}
		return nil
	})
	return qr, err
}

// withdrawAwaiting ends a charge that awaits its shopper because the
// merchant cancelled it (a cancel of an awaiting charge): its approval
// ends canceled and the charge canceled, without an error of the
// shopper's.
func (s *Service) withdrawAwaiting(ctx context.Context, tx *writeTx, ch *Charge, now time.Time) error {
	ap, err := tx.ApprovalFor(ctx, ch.ID)
	if err != nil && !IsNotFound(err) {
		return err
	}
	if err == nil && ap.Status == ApprovalAwaiting {
		ap.Status, ap.UpdatedOn = ApprovalCanceled, now
		if err := tx.UpdateApproval(ctx, ap); err != nil {
			return err
		}
	}
	if ch.ThreeDS.Status == ThreeDSAwaiting {
		ch.ThreeDS.Status = ThreeDSFailed
	}
	ch.Status, ch.UpdatedOn = ChargeCanceled, now
	if err := s.moveCharge(ctx, tx, ch, ChargeAwaiting); err != nil {
		return err
	}
	if err := tx.PutLedgerEntry(ctx, chargeLedgerEntry(ch)); err != nil {
		return err
	}
	return tx.EraseTokenCVC(ctx, ch.TokenID)
}
