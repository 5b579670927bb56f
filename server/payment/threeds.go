package payment

import (
	"context"
	"strings"
	"time"

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

func (e *ExternalThreeDSInput) empty() bool { return *e == ExternalThreeDSInput{} }

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

// sealExternalThreeDS records a merchant's own 3-D Secure result on a
// charge, its authentication value sealed.
func (s *Service) sealExternalThreeDS(ch *Charge, e *ExternalThreeDSInput) error {
	ch.ThreeDS.Mode = "provided"
	ext := &ExternalThreeDS{
		ECI: e.ECI, DSTransactionID: e.DSTransactionID, ServerTransactionID: e.ServerTransactionID,
		MessageVersion: e.MessageVersion, TransactionStatus: e.TransactionStatus,
	}
	var err error
	if ext.AuthenticationValue, err = s.vault.Seal([]byte(e.AuthenticationValue), authValueAssociated(ch.ID)); err != nil {
		return err
	}
	ch.ThreeDS.External = ext
	return nil
}

// authValueAssociated binds a sealed 3-D Secure authentication value to
// its charge.
func authValueAssociated(id uuid.UUID) []byte { return append([]byte("cavv:"), id[:]...) }

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

// checkThreeDSMode refuses a browser's 3-D Secure mode weaker than its
// store's (browserMayAskThreeDS), naming field; a merchant's server may
// ask for any.
func (c *Caller) checkThreeDSMode(field, mode string, st *Store) error {
	if c.withSecret || browserMayAskThreeDS(mode, st.Settings) {
		return nil
	}
	return Invalid(field, ReasonForbiddenParameter)
}

// browserThreeDS is checkThreeDSMode in the caller's transaction for a
// store that is not at hand: only a browser's request needs it read.
func browserThreeDS(ctx context.Context, tx Tx, c *Caller, storeID uuid.UUID, field, mode string) error {
	if c.withSecret {
		return nil
	}
	st, err := tx.Store(ctx, storeID)
	if err != nil {
		return err
	}
	return c.checkThreeDSMode(field, mode, st)
}

// tokenThreeDSMode is the mode a token's 3-D Secure runs in (tokenThreeDS):
// its own, or normal without one.
func tokenThreeDSMode(mode string) string {
	if mode == "" {
		return "normal"
	}
	return mode
}

// threeDSStep is what 3-D Secure does for one card payment.
type threeDSStep int

const (
	threeDSNone         threeDSStep = iota // no 3-D Secure
	threeDSFrictionless                    // authenticated without the shopper
	threeDSChallenge                       // the shopper must answer a challenge
	threeDSNotEnrolled                     // required, and the card cannot do it: 356
)

// threeDSDecision is the README's 3-D Secure rule. mode is the charge's
// (or the token's) three_ds.mode, "" when it sent none; storeRequires is
// the store's three_ds_required setting; authenticated says the card was
// authenticated when its recurring token was made.
//
//   - skip (secret only) and provided (external MPI) do nothing here;
//   - without a mode, only a store that requires 3-D Secure (as require)
//     or a card whose issuer requires it (a challenge) bring it in;
//   - a card that is not enrolled fails under require, and goes on without
//     3-D Secure otherwise;
//   - force and require challenge every enrolled card; normal and
//     if_available only the cards whose issuer challenges;
//   - a token authenticated before needs no new challenge unless forced.
func threeDSDecision(mode string, storeRequires, authenticated bool, p ThreeDSProfile) threeDSStep {
	switch mode {
	case "skip", "provided":
		return threeDSNone
	case "":
		switch {
		case storeRequires:
			mode = "require"
		case p.Mandatory && p.Enrolled && !authenticated:
			return threeDSChallenge
		default:
			return threeDSNone
		}
	}
	switch {
	case !p.Enrolled && mode == "require":
		return threeDSNotEnrolled
	case !p.Enrolled:
		return threeDSNone
	case authenticated && mode != "force":
		return threeDSFrictionless
	case mode == "force" || mode == "require" || p.Challenge:
		return threeDSChallenge
	}
	return threeDSFrictionless
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
}

// The gateway's paths of the sandbox's approval pages; web/sandboxpages serves
// them. A key follows each.
const (
	ThreeDSPagePath = "/sandbox/3ds/"
	WalletPagePath  = "/sandbox/wallet/"
	// WalletQRSuffix follows a wallet page's path for the PNG of its QR
	// code.
	WalletQRSuffix = "/qr.png"
)

const threeDSContentType = "application/x-www-form-urlencoded; charset=UTF-8"

func (s *Service) threeDSIssuerToken(ap *Approval) *IssuerToken {
	return &IssuerToken{
		IssuerToken: s.publicOrigin + ThreeDSPagePath + ap.Key,
		CallMethod:  "http_post",
		ContentType: threeDSContentType,
		Payload:     map[string]string{"resource_id": ap.ResourceID.String(), "resource_type": ap.ResourceType},
		PaymentType: PaymentTypeCard,
	}
}

// ChargeThreeDSIssuerToken returns where the shopper answers a charge's
// 3-D Secure challenge, once the charge is awaiting it.
func (s *Service) ChargeThreeDSIssuerToken(ctx context.Context, c *Caller, storeID, id uuid.UUID) (*IssuerToken, error) {
	var it *IssuerToken
	err := s.view(ctx, func(tx Tx) error {
		ch, _, err := s.awaitedCharge(ctx, tx, c, storeID, id, awaitsChallenge, "ONLY_FOR_CARD_PAYMENT")
		if err != nil {
			return err
		}
		switch ch.Status {
		case ChargePending:
			return Invalid("status", "ISSUER_TOKEN_EMPTY")
		case ChargeAwaiting:
			if ch.ThreeDS.Status != ThreeDSAwaiting {
				return Invalid("status", "INVALID_CHARGE_STATUS")
			}
		}
		ap, err := awaitingApproval(ctx, tx, ch.ID, ch.Status == ChargeAwaiting)
		if err != nil {
			return err
		}
		it = s.threeDSIssuerToken(ap)
		return nil
	})
	return it, err
}

// tokenThreeDSCaller checks that c may work with a token's 3-D Secure: a
// merchant's server (with the secret), or the browser that has just made
// the token, as for its first charge.
func (s *Service) tokenThreeDSCaller(c *Caller, tok *TransactionToken) error {
	if c.withSecret || madeByBrowserJustNow(tok, s.clock.Now()) {
		return nil
	}
	return Errorf(CodeInvalidPermissions, "this operation requires the app token's secret")
}

// TokenThreeDSIssuerToken returns where the shopper answers a token's
// 3-D Secure challenge, once it is awaiting it.
func (s *Service) TokenThreeDSIssuerToken(ctx context.Context, c *Caller, storeID, id uuid.UUID) (*IssuerToken, error) {
	var it *IssuerToken
	err := s.view(ctx, func(tx Tx) error {
		tok, err := s.visibleToken(ctx, tx, c, storeID, id)
		if err != nil {
			return err
		}
		if err := s.tokenThreeDSCaller(c, tok); err != nil {
			return err
		}
		if tok.PaymentType != PaymentTypeCard || !tok.ThreeDS.Enabled {
			return Invalid("three_ds", "ONLY_FOR_CARD_PAYMENT")
		}
		if tok.ThreeDS.Status == ThreeDSPending {
			return Invalid("status", "ISSUER_TOKEN_EMPTY")
		}
		ap, err := awaitingApproval(ctx, tx, tok.ID, tok.ThreeDS.Status == ThreeDSAwaiting)
		if err != nil {
			return err
		}
		it = s.threeDSIssuerToken(ap)
		return nil
	})
	return it, err
}

// TokenThreeDSRequest asks for a token's card to be authenticated.
type TokenThreeDSRequest struct {
	Mode             string
	RedirectEndpoint string
	RedirectID       string
}

// EnableTokenThreeDS asks for 3-D Secure on a card token (POST
// …/tokens/{id}/three_ds): its data.three_ds.status goes pending, then
// awaiting (the shopper answers a challenge), then successful or failed;
// a later charge on a token authenticated so needs no challenge of its
// own. Asking again while it is under way or done changes nothing; after
// a failure it starts over.
func (s *Service) EnableTokenThreeDS(ctx context.Context, c *Caller, storeID, id uuid.UUID, r TokenThreeDSRequest) (*TransactionToken, error) {
	var v Validation
	if r.Mode != "" && !tokenThreeDSModes[r.Mode] {
		v.Add("mode", ReasonInvalidFormat)
	}
	checkRedirect(&v, c, s.publicOrigin, "redirect_endpoint", r.RedirectEndpoint)
	checkText(&v, "redirect_id", r.RedirectID, maxRedirectIDLen)
	if err := v.Err(); err != nil {
		return nil, err
	}
	var tok *TransactionToken
	err := s.update(ctx, func(tx *writeTx) error {
		var err error
		if tok, err = s.visibleToken(ctx, tx, c, storeID, id); err != nil {
			return err
		}
		if err := s.tokenThreeDSCaller(c, tok); err != nil {
			return err
		}
		if err := browserThreeDS(ctx, tx, c, storeID, "mode", tokenThreeDSMode(r.Mode)); err != nil {
			return err
		}
		switch {
		case tok.PaymentType != PaymentTypeCard:
			return Invalid("three_ds", "ONLY_FOR_CARD_PAYMENT")
		case !tok.Active:
			return Errorf(CodeTokenExpired, "the transaction token was deleted")
		case tok.ThreeDS.Enabled && tok.ThreeDS.Status != ThreeDSFailed && tok.ThreeDS.Status != "":
			return nil
		}
		now := s.clock.Now()
		// Pending is no news: the token's event comes when it settles or
		// awaits its shopper.
		tok.ThreeDS = ThreeDSSettings{
			Enabled: true, Mode: r.Mode, RedirectEndpoint: r.RedirectEndpoint, RedirectID: r.RedirectID,
			Status: ThreeDSPending,
		}
		tok.UpdatedOn = now
		if err := tx.UpdateToken(ctx, tok); err != nil {
			return err
		}
		return tx.enqueueWork(ctx, WorkTokenThreeDS, tok.ID, now)
	})
	if err != nil {
		return nil, err
	}
	return tok, nil
}

// DisableTokenThreeDS turns a token's 3-D Secure off (DELETE
// …/tokens/{id}/three_ds). A challenge still open is left to run out: its
// outcome no longer changes the token.
func (s *Service) DisableTokenThreeDS(ctx context.Context, c *Caller, storeID, id uuid.UUID) error {
	return s.update(ctx, func(tx *writeTx) error {
		tok, err := s.visibleToken(ctx, tx, c, storeID, id)
		if err != nil {
			return err
		}
		if err := c.requireSecret(); err != nil {
			return err
		}
		if !tok.ThreeDS.Enabled && tok.ThreeDS.Status == "" {
			return nil
		}
		// Turned off, the token's 3-D Secure has no status to tell of.
		tok.ThreeDS = ThreeDSSettings{Mode: tok.ThreeDS.Mode}
		tok.UpdatedOn = s.clock.Now()
		return tx.UpdateToken(ctx, tok)
	})
}

// WorkTokenThreeDS starts the 3-D Secure authentication of a token.
const WorkTokenThreeDS WorkKind = "token_three_ds"

// tokenThreeDS asks the issuer (the acquirer's profile of the card) what
// a token's authentication takes, and starts the challenge, or settles it
// at once when it needs none.
func (s *Service) tokenThreeDS(ctx context.Context, w Work) error {
	var tok *TransactionToken
	if err := s.view(ctx, func(tx Tx) error {
		var err error
		tok, err = tx.Token(ctx, w.ID)
		return err
	}); err != nil {
		return err
	}
	if tok.ThreeDS.Status != ThreeDSPending {
		return s.completeWork(ctx, w)
	}
	card, err := s.openCard(tok)
	if err != nil {
		return err
	}
	profile := s.processor.ThreeDS(card)
	err = s.update(ctx, func(tx *writeTx) error {
		if err := tx.CompleteWork(ctx, w); err != nil {
			return err
		}
		tok, err := tx.Token(ctx, w.ID)
		if err != nil || tok.ThreeDS.Status != ThreeDSPending {
			return err
		}
		now := s.clock.Now()
		switch threeDSDecision(tokenThreeDSMode(tok.ThreeDS.Mode), false, false, profile) {
		case threeDSChallenge:
			tok.ThreeDS.Status = ThreeDSAwaiting
			ap := &Approval{
				Kind: ApprovalThreeDS, ResourceType: ResourceToken, ResourceID: tok.ID, StoreID: tok.StoreID,
				MerchantID: tok.MerchantID, Mode: tok.Mode, LastFour: tok.Card.LastFour,
			}
			if err := startApproval(ctx, tx, ap, challengeExpiry, now); err != nil {
				return err
			}
		case threeDSNone:
			if profile.Enrolled { // skip: nothing was asked of the issuer
				tok.ThreeDS.Status, tok.ThreeDS.Exempted = ThreeDSSuccessful, true
				break
			}
			fallthrough
		case threeDSNotEnrolled:
			tok.ThreeDS.Status = ThreeDSFailed
			tok.ThreeDS.Error = NewPaymentError(ErrCardNotEnrolled, "the card is not enrolled in 3-D Secure")
		case threeDSFrictionless:
			tok.ThreeDS.Status = ThreeDSSuccessful
		}
		tok.UpdatedOn = now
		if err := tx.UpdateToken(ctx, tok); err != nil {
			return err
		}
		if tok.ThreeDS.Status == ThreeDSPending {
			return nil
		}
		// Awaiting its shopper, or settled: news either way.
		return tx.announce(ctx, EventTokenThreeDSUpdated, tok)
	})
	if err == nil {
		s.changes.notify(w.ID)
	}
	return err
}

// startChallenge puts a charge in wait of its 3-D Secure challenge, in the
// worker's transaction.
func (s *Service) startChallenge(ctx context.Context, tx *writeTx, ch *Charge, now time.Time) error {
	ch.Status, ch.ThreeDS.Status, ch.UpdatedOn = ChargeAwaiting, ThreeDSAwaiting, now
	if err := s.moveCharge(ctx, tx, ch, ChargePending); err != nil {
		return err
	}
	ap := &Approval{
		Kind: ApprovalThreeDS, ResourceType: ResourceCharge, ResourceID: ch.ID, StoreID: ch.StoreID,
		MerchantID: ch.MerchantID, Mode: ch.Mode, Amount: ch.RequestedAmount, Currency: ch.Currency,
		LastFour: ch.CardLastFour,
	}
	if err := startApproval(ctx, tx, ap, challengeExpiry, now); err != nil {
		return err
	}
	return tx.PutLedgerEntry(ctx, chargeLedgerEntry(ch))
}
