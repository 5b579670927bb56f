package payment

import "time"

// PaymentTypeQRMerchant is the payment type of merchant-presented QR
// codes: the shopper scans the code the merchant shows.
const PaymentTypeQRMerchant = "qr_merchant"

// QRMerchantBrands are the merchant-presented QR brands the sandbox
// simulates.
var QRMerchantBrands = []string{"pay_pay_merchant", "alipay_merchant_qr", "we_chat_mpm", "rakuten_pay_merchant", "d_barai_merchant"}

// qrMerchantMethod is a merchant-presented QR code (payment_type
// qr_merchant): a wallet (walletMethod) whose token names the brand alone,
// and whose charge, while it awaits the shopper, is a QR code the merchant
// shows (the wallet page's, which the shopper's phone opens).
type qrMerchantMethod struct{ walletMethod }

func (qrMerchantMethod) paymentType() string { return PaymentTypeQRMerchant }

func (qrMerchantMethod) traits() methodTraits { return methodTraits{awaits: awaitsMerchantQR} }

func (qrMerchantMethod) checkToken(v *Validation, p *NewToken, _ time.Time) {
	if w := checkWallet(v, p, QRMerchantBrands); w != nil {
		if w.CallMethod != "" || w.OSType != "" || w.UserIdentifier != "" {
			v.Add("call_method", "FORBIDDEN_PARAMETER")
		}
	}
	forbidThreeDS(v, p)
}

// issuerToken: the shopper is not sent anywhere; the merchant shows the
// code (qrImage).
func (qrMerchantMethod) issuerToken(string, *Charge, *Approval) *IssuerToken { return nil }

func (qrMerchantMethod) qrImage(origin string, ap *Approval) string {
	return origin + WalletPagePath + ap.Key + WalletQRSuffix
}
