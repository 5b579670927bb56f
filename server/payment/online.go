package payment

// PaymentTypeOnline is the payment type of online wallets: the shopper
// pays in the wallet's app or page (PayPay, Alipay, WeChat Pay…).
const PaymentTypeOnline = "online"

// OnlineBrands are the online wallets the sandbox simulates, each with a
// page of its own look (web/sandboxpages).
var OnlineBrands = []string{"pay_pay_online", "alipay_online", "alipay_plus_online", "we_chat_online", "d_barai_online"}
