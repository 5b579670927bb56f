package charging

import (
	"time"

	"github.com/kessai/kessai/server/payment"
)

// qrMerchantMethod is a merchant-presented QR code (payment_type
// qr_merchant): a wallet (walletMethod) whose token names the brand alone,
// and whose charge, while it awaits the shopper, is a QR code the merchant
// shows (the wallet page's, which the shopper's phone opens).
type qrMerchantMethod struct{ walletMethod }

func (qrMerchantMethod) paymentType() string { return payment.PaymentTypeQRMerchant }

func (qrMerchantMethod) traits() methodTraits { return methodTraits{awaits: awaitsMerchantQR} }

func (qrMerchantMethod) checkToken(v *payment.Validation, p *payment.NewToken, _ time.Time) {
	if w := checkWallet(v, p, payment.QRMerchantBrands); w != nil {
		if w.CallMethod != "" || w.OSType != "" || w.UserIdentifier != "" {
			v.Add("call_method", "FORBIDDEN_PARAMETER")
		}
	}
	forbidThreeDS(v, p)
}

// issuerToken: the shopper is not sent anywhere; the merchant shows the
// code (qrImage).
func (qrMerchantMethod) issuerToken(string, *payment.Charge, *payment.Approval) *payment.IssuerToken {
	return nil
}

func (qrMerchantMethod) qrImage(origin string, ap *payment.Approval) string {
	return origin + payment.WalletPagePath + ap.Key + payment.WalletQRSuffix
}
