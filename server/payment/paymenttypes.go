package payment

import "time"

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

// TokenData is what a token of a method other than card holds. Each
// method fills in and reads its own fields (charging's payment-method
// seam); the storage keeps it as one document, so that a new method needs
// no change of the storage. Tokens written before konbini and bank
// transfers hold only a wallet's fields, under the same names.
type TokenData struct {
	// Brand is a wallet's (online, qr_merchant) or bank's (bank_transfer).
	Brand string `json:"brand,omitempty"`
	// CallMethod, OSType and UserIdentifier say how an online wallet is
	// reached from the shopper's device.
	CallMethod     string `json:"call_method,omitempty"`
	OSType         string `json:"os_type,omitempty"`
	UserIdentifier string `json:"user_identifier,omitempty"`
	// CustomerName, ConvenienceStore and PhoneNumber are a konbini
	// shopper's: who pays, where, and the Japanese number the store knows
	// them by.
	CustomerName     string `json:"customer_name,omitempty"`
	ConvenienceStore string `json:"convenience_store,omitempty"`
	PhoneNumber      *Phone `json:"phone_number,omitempty"`
	// ExpirationPeriod is how long a konbini or bank-transfer shopper has
	// to pay once charged; ExpirationTimeShift the time of day the
	// deadline is moved to (TimeShift's format), "" for none.
	ExpirationPeriod    time.Duration `json:"expiration_period,omitempty"`
	ExpirationTimeShift string        `json:"expiration_time_shift,omitempty"`
	// VirtualAccount is the account a bank-transfer token's shopper pays
	// into, opened when the token is made.
	VirtualAccount *VirtualAccount `json:"virtual_account,omitempty"`
}
