package payment

// PaymentTypeQRMerchant is the payment type of merchant-presented QR
// codes: the shopper scans the code the merchant shows.
const PaymentTypeQRMerchant = "qr_merchant"

// QRMerchantBrands are the merchant-presented QR brands the sandbox
// simulates.
var QRMerchantBrands = []string{"pay_pay_merchant", "alipay_merchant_qr", "we_chat_mpm", "rakuten_pay_merchant", "d_barai_merchant"}
