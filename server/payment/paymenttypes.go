package payment

// The payment types a token may have, and what a wallet's token holds.
// How a charge on each proceeds is charging's payment-method seam
// (charging/method.go).

// PaymentTypeCard is the payment type of card tokens.
const PaymentTypeCard = "card"

// PaymentTypeOnline is the payment type of online wallets: the shopper
// pays in the wallet's app or page (PayPay, Alipay, WeChat Pay…).
const PaymentTypeOnline = "online"

// OnlineBrands are the online wallets the sandbox simulates, each with a
// page of its own look (web/sandboxpages).
var OnlineBrands = []string{"pay_pay_online", "alipay_online", "alipay_plus_online", "we_chat_online", "d_barai_online"}

// PaymentTypeQRMerchant is the payment type of merchant-presented QR
// codes: the shopper scans the code the merchant shows.
const PaymentTypeQRMerchant = "qr_merchant"

// QRMerchantBrands are the merchant-presented QR brands the sandbox
// simulates.
var QRMerchantBrands = []string{"pay_pay_merchant", "alipay_merchant_qr", "we_chat_mpm", "rakuten_pay_merchant", "d_barai_merchant"}

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
