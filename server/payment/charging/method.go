package charging

import (
	"context"
	"fmt"
	"time"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/payment/outbox"
)

// A paymentMethod is one way a shopper pays: the payment_type of a token
// and of its charges (card, an online wallet, a merchant-presented QR
// code). Whatever differs between the ways is said by the method, once:
// the shared code (tokens, charges, the worker, approvals, refunds and
// cancels) asks the method of a token or charge (methodOf) and never
// compares payment types.
//
// To add a method:
//   - write a file with a type that implements paymentMethod, and add it
//     to paymentMethods;
//   - give its token data fields of payment.TokenData (the storage keeps
//     that as one document: no engine changes);
//   - give the API its wire shapes, and the sandbox the page of its
//     approval kind (what the shopper is shown while the charge awaits
//     them, and the actions approvalOutcome takes).
//
// Konbini and bank transfer were added so (konbini.go, banktransfer.go,
// over what they share in slip.go); a bank transfer's deposits are an
// optional part of the seam (depositTaker).
//
// A method whose charges wait for their shopper does so through
// awaitShopper: the charge awaits, with an Approval of the method's kind
// that the shopper's page acts on (ActOnApproval) and that the gateway
// ends at its time (WorkApprovalExpiry); settleCharge then says what the
// outcome makes of the charge. Nothing else of the domain changes.
type paymentMethod interface {
	// paymentType is the payment_type of its tokens and charges.
	paymentType() string
	// traits are what the method is, as opposed to what it does.
	traits() methodTraits

	// checkToken validates what a new token of this type carries beyond
	// the fields every token has, adding what is wrong to v (the rules
	// of its data, the token types it takes).
	checkToken(v *payment.Validation, p *payment.NewToken, now time.Time)
	// newToken fills in what a token of this type stores (tok has the
	// fields every token has) from a request checkToken passed, before
	// the token's transaction: a card is sealed here.
	newToken(s *core, c *payment.Caller, p *payment.NewToken, tok *payment.TransactionToken) error
	// admitToken applies the store's rules to a new token of this type in
	// its transaction, before it is written.
	admitToken(ctx context.Context, s *core, tx *outbox.Tx, c *payment.Caller, st *payment.Store, tok *payment.TransactionToken) error
	// startToken queues what a new token needs next (a card's CVV check
	// and 3-D Secure), in its transaction, after it is written.
	startToken(ctx context.Context, tx *outbox.Tx, tok *payment.TransactionToken, now time.Time) error

	// checkCharge says whether a charge on tok may be made at now as p
	// asks (capture, capture_at, 3-D Secure, currency, amount); p is nil
	// for a subscription's charge, which the gateway makes itself.
	checkCharge(tok *payment.TransactionToken, p *payment.NewCharge, now time.Time) error
	// instrument is what the processor is given of a token for its calls
	// (a card's number, opened from the vault; nothing for a wallet).
	instrument(s *core, tok *payment.TransactionToken) (payment.CardDetails, error)
	// authorize carries a charge ready for it (readyToAuthorize) on, as
	// the worker's item w: to the processor's answer, or to awaiting its
	// shopper (awaitShopper). It completes w in the transaction that
	// records what it did; an error has the item tried again.
	authorize(ctx context.Context, s *core, w payment.Work, ch *payment.Charge, tok *payment.TransactionToken, card payment.CardDetails) error

	// approvalKind is the kind of the approvals its shopper acts on.
	approvalKind() payment.ApprovalKind
	// approvalOutcome is what the shopper's action (with code, a
	// challenge's answer) makes of an awaiting approval of this method's
	// kind that has not expired: a final status, or ApprovalAwaiting
	// when it still waits; an action the page does not offer is
	// INVALID_FORMAT.
	approvalOutcome(ap *payment.Approval, action payment.ApprovalAction, code string) (payment.ApprovalStatus, error)
	// settleCharge applies the outcome of the approval ap to ch, a charge
	// that awaited it: its status, error and amounts, or, when it goes on
	// to its authorisation instead (a passed challenge), only what
	// changed, and then authorize is true. How an awaiting charge
	// expires is here: the error of ApprovalExpired.
	settleCharge(ch *payment.Charge, ap *payment.Approval, outcome payment.ApprovalStatus) (authorize bool)
	// issuerToken is where the shopper of a charge awaiting the approval
	// ap goes (GET …/charges/{id}/issuer_token), for a method whose
	// traits say awaitsIssuerToken; origin is the gateway's.
	issuerToken(origin string, ch *payment.Charge, ap *payment.Approval) *payment.IssuerToken
	// qrImage is the address of the QR code the merchant shows for the
	// approval ap (GET …/charges/{id}/qr), for a method whose traits say
	// awaitsMerchantQR.
	qrImage(origin string, ap *payment.Approval) string

	// checkRefund says why amount cannot be refunded of a successful
	// charge of this type of which refunded is already refunded, nil
	// when it can as far as the method goes (the shared rules bound
	// every refund by the charged amount).
	checkRefund(ch *payment.Charge, amount, refunded int64) error
	// checkCancel says why a charge of this type cannot be canceled, nil
	// when the shared rules decide (an awaiting charge is withdrawn, an
	// authorisation voided).
	checkCancel(ch *payment.Charge) error
}

// methodTraits are what a payment method is.
type methodTraits struct {
	// email: its tokens need the shopper's e-mail address (a wallet
	// knows its shopper).
	email bool
	// subscriptions: subscriptions may be made on its tokens.
	subscriptions bool
	// duplicates: the duplicate-charge rule guards its recurring tokens.
	duplicates bool
	// awaits is how the shopper of a charge awaiting them is reached.
	awaits awaitKind
	// deadline: its charges await their shopper until a payment deadline
	// that the merchant may read (…/expiry/latest) and extend.
	deadline bool
}

// awaitKind is how the shopper of an awaiting charge is reached, which
// decides the routes that answer for the charge.
type awaitKind int

const (
	// awaitsChallenge: a 3-D Secure challenge, whose issuer token is the
	// card's (…/three_ds/issuer_token).
	awaitsChallenge awaitKind = iota
	// awaitsIssuerToken: the shopper is sent to the issuer token
	// (…/issuer_token): a wallet's page, or the method's instructions.
	awaitsIssuerToken
	// awaitsMerchantQR: the merchant shows a QR code (…/qr) that the
	// shopper scans.
	awaitsMerchantQR
)

// paymentMethods are the payment types Kessai takes, in the order the
// approval kinds are looked up in.
var paymentMethods = []paymentMethod{cardMethod{}, onlineMethod{}, qrMerchantMethod{}, konbiniMethod{}, bankTransferMethod{}}

// lookupMethod is the method of a payment type, if Kessai takes it.
func lookupMethod(paymentType string) (paymentMethod, bool) {
	for _, m := range paymentMethods {
		if m.paymentType() == paymentType {
			return m, true
		}
	}
	return nil, false
}

// methodOf is the method of a stored token's or charge's payment type
// ("" is a card: charges from before wallets). A type this version does
// not know (written by a newer one) is an error, for the work that needs
// it to be left to an instance that knows it.
func methodOf(paymentType string) (paymentMethod, error) {
	if paymentType == "" {
		paymentType = payment.PaymentTypeCard
	}
	m, ok := lookupMethod(paymentType)
	if !ok {
		return nil, fmt.Errorf("unknown payment type %q", paymentType)
	}
	return m, nil
}

// approvalMethod is the method whose shoppers act on approvals of kind.
func approvalMethod(kind payment.ApprovalKind) (paymentMethod, error) {
	for _, m := range paymentMethods {
		if m.approvalKind() == kind {
			return m, nil
		}
	}
	return nil, fmt.Errorf("unknown approval kind %q", kind)
}

// awaitShopper puts a pending charge in wait of its shopper, as the
// worker's authorize item w of a method that does not authorise at once:
// the charge awaits (moveCharge, with its effects), with the approval
// that approval describes for it at now, which the gateway ends after
// ttl. approval may also set what the charge shows of it (a deadline's
// capture_at) before the charge is written.
func (s *core) awaitShopper(ctx context.Context, w payment.Work, approval func(ch *payment.Charge, now time.Time) (ap *payment.Approval, ttl time.Duration)) error {
	err := s.db.Update(ctx, func(tx *outbox.Tx) error {
		if err := tx.CompleteWork(ctx, w); err != nil {
			return err
		}
		ch, err := tx.Charge(ctx, w.ID)
		if err != nil || ch.Status != payment.ChargePending {
			return err
		}
		now := s.clock.Now()
		ap, ttl := approval(ch, now)
		ch.Status, ch.UpdatedOn = payment.ChargeAwaiting, now
		if err := s.moveCharge(ctx, tx, ch, payment.ChargePending); err != nil {
			return err
		}
		if err := startApproval(ctx, tx, ap, ttl, now); err != nil {
			return err
		}
		return tx.PutLedgerEntry(ctx, chargeLedgerEntry(ch))
	})
	if err == nil {
		s.db.Changed(w.ID)
	}
	return err
}

// SubscribedWith reports whether a subscription may be paid with tokens of
// paymentType (its method's traits).
func (s *Service) SubscribedWith(paymentType string) bool {
	m, ok := lookupMethod(paymentType)
	return ok && m.traits().subscriptions
}
