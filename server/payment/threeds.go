package payment

import (
	"strings"

	"github.com/google/uuid"
)

// ThreeDSStatus is where a 3-D Secure authentication is (UnivaPay's
// data.three_ds.status on tokens; Kessai shows it on charges too).
type ThreeDSStatus string

// The 3-D Secure statuses.
const (
	ThreeDSPending    ThreeDSStatus = "pending"
	ThreeDSAwaiting   ThreeDSStatus = "awaiting"
	ThreeDSSuccessful ThreeDSStatus = "successful"
	ThreeDSFailed     ThreeDSStatus = "failed"
)

// ThreeDSProfile is what a card's issuer does about 3-D Secure; the
// acquirer knows it (the sandbox from its test cards).
type ThreeDSProfile struct {
	// Enrolled cards can be authenticated at all.
	Enrolled bool
	// Challenge: the issuer challenges the shopper even when the merchant
	// only asked for 3-D Secure where needed (normal, if_available).
	Challenge bool
	// Mandatory: the issuer requires 3-D Secure even when the charge
	// asked for none.
	Mandatory bool
}

// ExternalThreeDS is the result of an authentication the merchant ran with
// its own 3-D Secure server (an external MPI), sent with the charge
// (three_ds mode "provided"). The authentication value is sealed at rest,
// as card data is.
type ExternalThreeDS struct {
	ECI                 string `json:"eci"`
	DSTransactionID     string `json:"ds_transaction_id"`
	ServerTransactionID string `json:"server_transaction_id"`
	MessageVersion      string `json:"message_version"`
	TransactionStatus   string `json:"transaction_status"`
	AuthenticationValue Sealed `json:"authentication_value"`
}

// ExternalThreeDSInput is ExternalThreeDS as the merchant sends it.
type ExternalThreeDSInput struct {
	AuthenticationValue string
	ECI                 string
	DSTransactionID     string
	ServerTransactionID string
	MessageVersion      string
	TransactionStatus   string
}

func (e *ExternalThreeDSInput) Empty() bool { return *e == ExternalThreeDSInput{} }

// check validates external MPI data: all six fields or none (the
// reference), each well formed, and an authentication that succeeded (Y)
// or was attempted (A): any other status means the shopper was not
// authenticated, and such a charge must not go on as if it had been.
func (e *ExternalThreeDSInput) check(v *Validation) {
	req := func(field, value string) bool {
		if value == "" {
			v.Add("three_ds."+field, ReasonRequired)
			return false
		}
		return true
	}
	if req("authentication_value", e.AuthenticationValue) &&
		(len(e.AuthenticationValue) > 64 || strings.Trim(e.AuthenticationValue, base64Alphabet) != "") {
		v.Add("three_ds.authentication_value", "INVALID_FORMAT_BASE64")
	}
	if req("eci", e.ECI) && (len(e.ECI) != 2 || strings.Trim(e.ECI, "0123456789") != "") {
		v.Add("three_ds.eci", ReasonInvalidFormat)
	}
	for field, id := range map[string]string{"ds_transaction_id": e.DSTransactionID, "server_transaction_id": e.ServerTransactionID} {
		if req(field, id) {
			if _, err := uuid.Parse(id); err != nil || len(id) != 36 {
				v.Add("three_ds."+field, ReasonInvalidUUID)
			}
		}
	}
	if req("message_version", e.MessageVersion) && !validMessageVersion(e.MessageVersion) {
		v.Add("three_ds.message_version", ReasonInvalidFormat)
	}
	if req("transaction_status", e.TransactionStatus) && e.TransactionStatus != "Y" && e.TransactionStatus != "A" {
		v.Add("three_ds.transaction_status", "INVALID_THREE_DS_STATUS")
	}
}

const base64Alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=-_"

// validMessageVersion accepts EMV 3-D Secure versions: 2.1.0, 2.2.0, 2.3.1…
func validMessageVersion(s string) bool {
	parts := strings.Split(s, ".")
	if len(parts) != 3 || parts[0] != "2" {
		return false
	}
	for _, p := range parts[1:] {
		if p == "" || len(p) > 2 || strings.Trim(p, "0123456789") != "" {
			return false
		}
	}
	return true
}

// threeDSStrength orders the 3-D Secure modes by what they hold the shopper
// to, weakest first. It is the one ordering of modes: a browser may ask for
// any mode at least as strong as its store asks (browserMayAskThreeDS),
// never a weaker one; the merchant's server (with the secret) for any.
var threeDSStrength = map[string]int{
	// The gateway authenticates no one: skipped, or done by the merchant's
	// own 3-D Secure server (an external MPI), whose result only the
	// merchant's server can vouch for.
	"skip": 0, "provided": 0,
	// None asked: only a card whose issuer requires it is challenged.
	"": 1,
	// Every enrolled card authenticated, challenged where its issuer
	// wants.
	"if_available": 2, "normal": 2,
	// Every enrolled card challenged, but a card that is not enrolled
	// goes on without. (force also challenges a token authenticated
	// before, which require does not; as a floor what counts is what a
	// mode lets through, and force lets the unenrolled card through.)
	"force": 3,
	// Every enrolled card challenged; one that is not enrolled fails.
	"require": 4,
}

// storeThreeDSMode is what a store asks of every card charge: require when
// its three_ds_required is on (as threeDSDecision takes it), none ("")
// otherwise.
func storeThreeDSMode(st StoreSettings) string {
	if st.ThreeDSRequired {
		return "require"
	}
	return ""
}

// browserMayAskThreeDS reports whether a browser (an app token without its
// secret) may ask for 3-D Secure mode in a store with settings st: no
// weaker than the store's mode. The weakest a store asks is none, above
// skip and provided, so those two are a merchant's server's alone
// whatever the store. A charge without a mode takes the store's.
// Otherwise anyone who reads a page's public app token could pay without
// the authentication the merchant requires, by naming a weaker mode or by
// sending made-up results of its own 3-D Secure server.
func browserMayAskThreeDS(mode string, st StoreSettings) bool {
	floor := storeThreeDSMode(st)
	if mode == "" {
		mode = floor
	}
	strength, known := threeDSStrength[mode]
	return known && strength >= threeDSStrength[floor]
}

// CheckThreeDSMode refuses a browser's 3-D Secure mode weaker than its
// store's (browserMayAskThreeDS), naming field; a merchant's server may
// ask for any.
func (c *Caller) CheckThreeDSMode(field, mode string, st *Store) error {
	if c.WithSecret() || browserMayAskThreeDS(mode, st.Settings) {
		return nil
	}
	return Invalid(field, ReasonForbiddenParameter)
}

// IssuerToken tells the shopper's browser or app where to go to approve a
// payment (UnivaPay's issuer token): a URL to open or to post Payload to,
// or for an app an opaque token its SDK takes.
type IssuerToken struct {
	IssuerToken string
	CallMethod  string
	// ContentType is how Payload is posted (3-D Secure only).
	ContentType string
	Payload     map[string]string
	PaymentType string
	// Account is a bank transfer's virtual account, which the wire shows
	// beside the issuer token.
	Account *VirtualAccount
}

// The gateway's paths of the sandbox's approval pages; web/sandboxpages serves
// them. A key follows each.
const (
	ThreeDSPagePath = "/sandbox/3ds/"
	WalletPagePath  = "/sandbox/wallet/"
	// SlipPagePath is a konbini's or bank transfer's instructions page.
	SlipPagePath = "/sandbox/pay/"
	// WalletQRSuffix follows a wallet page's path for the PNG of its QR
	// code.
	WalletQRSuffix = "/qr.png"
)

// TokenThreeDSRequest asks for a token's card to be authenticated.
type TokenThreeDSRequest struct {
	Mode             string
	RedirectEndpoint string
	RedirectID       string
}

// WorkTokenThreeDS starts the 3-D Secure authentication of a token.
const WorkTokenThreeDS WorkKind = "token_three_ds"
