package charging

import (
	"time"

	"github.com/kessai/kessai/server/payment"
)

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

// onlineMethod is an online wallet (payment_type online): a wallet
// (walletMethod) whose token also says how the shopper's device reaches
// it (call_method, os_type), and whose shopper is sent to the wallet's
// page by the charge's issuer token.
type onlineMethod struct{ walletMethod }

func (onlineMethod) paymentType() string { return payment.PaymentTypeOnline }

func (onlineMethod) traits() methodTraits { return methodTraits{awaits: awaitsIssuerToken} }

func (onlineMethod) checkToken(v *payment.Validation, p *payment.NewToken, _ time.Time) {
	if w := checkWallet(v, p, payment.OnlineBrands); w != nil {
		checkCallMethod(v, p, w)
	}
	forbidThreeDS(v, p)
}

// checkCallMethod validates how the shopper's device reaches the wallet,
// and fills in the default call method.
func checkCallMethod(v *payment.Validation, p *payment.NewToken, w *payment.TokenData) {
	if w.CallMethod == "" {
		w.CallMethod = defaultCallMethod
	}
	cm, ok := callMethods[w.CallMethod]
	if !ok {
		v.Add("call_method", payment.ReasonInvalidFormat)
	}
	switch {
	case w.OSType == "" && cm.needsOS:
		v.Add("os_type", payment.ReasonRequired)
	case w.OSType != "" && w.OSType != "ios" && w.OSType != "android":
		v.Add("os_type", payment.ReasonInvalidFormat)
	}
	payment.CheckText(v, "user_identifier", w.UserIdentifier, maxUserIdentifierLen)
	// WeChat Pay in a browser needs the shopper's IP address (the
	// reference).
	if w.Brand == "we_chat_online" && (w.CallMethod == "web" || w.CallMethod == "http_get") && p.IPAddress == "" {
		v.Add("ip_address", payment.ReasonRequired)
	}
}

// issuerToken is the wallet page's URL to open (http_get,
// http_get_mobile, web) or to post the payload to (http_post), or for an
// app (sdk, app) the opaque token the wallet's SDK takes, which the
// sandbox's page also takes in place of its key.
func (onlineMethod) issuerToken(origin string, ch *payment.Charge, ap *payment.Approval) *payment.IssuerToken {
	page := origin + payment.WalletPagePath + ap.Key
	it := &payment.IssuerToken{IssuerToken: page, CallMethod: ap.CallMethod, Payload: map[string]string{}, PaymentType: payment.PaymentTypeOnline}
	switch ap.CallMethod {
	case "http_post":
		it.Payload = map[string]string{"resource_id": ch.ID.String(), "resource_type": payment.ResourceCharge}
	case "sdk", "app":
		it.IssuerToken = ap.Key
	}
	return it
}

func (onlineMethod) qrImage(string, *payment.Approval) string { return "" }
