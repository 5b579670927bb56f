// Package sandbox is Kessai's built-in test acquirer. It decides every
// outcome from the card number (and the e-mail's forced-failure
// convention) as the README's Sandbox section lists, so that developers who know
// UnivaPay's, Stripe's or PAY.JP's test cards find theirs working. It
// keeps no state: the same operation always gets the same answer, which
// makes every call idempotent.
package sandbox

import (
	"context"
	"regexp"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
)

// Processor is the sandbox acquirer.
type Processor struct {
	// Latency is how long every acquirer call takes, to make the
	// asynchronous flow visible (and testable: a crash while calls are in
	// flight). Zero answers at once.
	Latency time.Duration
}

var _ payment.Processor = Processor{}

// wait simulates the acquirer's latency.
func (p Processor) wait(ctx context.Context) error {
	if p.Latency <= 0 {
		return nil
	}
	t := time.NewTimer(p.Latency)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// outcome is what a test card does.
type outcome struct {
	authorize *payment.PaymentError // refusal at authorisation
	capture   *payment.PaymentError // refusal at capture
	refund    *payment.PaymentError // refusal of refunds
}

func refused(code int, detail string) *payment.PaymentError {
	return payment.NewPaymentError(code, detail)
}

// cards are the test cards with a behaviour of their own. Every other valid
// number succeeds.
var cards = map[string]outcome{
	"4000020000000000": {},
	"4242424242424242": {refund: refused(payment.ErrRefundFailed, "refunds of this test card fail")},
	"4111111111111111": {authorize: refused(payment.ErrCardRejected, "declined")},
	"5555555555554444": {},
	"3530111333300000": {},
	"378282246310005":  {},
	"30569309025904":   {},
	"4000000000000002": {authorize: refused(payment.ErrCardRejected, "generic_decline")},
	"4000000000009995": {authorize: refused(payment.ErrCardRejected, "insufficient_funds")},
	"4000000000000069": {authorize: refused(304, "expired_card")},
	"4000000000000127": {authorize: refused(305, "incorrect_cvc")},
	"4000000000000119": {authorize: refused(payment.ErrProcessingError, "processing_error")},
	"4000000000009987": {authorize: refused(314, "lost_card")},
	"4000000000009979": {authorize: refused(314, "stolen_card")},
	"4100000000000019": {authorize: refused(319, "fraudulent")},
	"4000000000000341": {capture: refused(payment.ErrChargeExpired, "the authorisation expired before capture")},
	// 3-D Secure cards (threeDSCards has their issuers' ways): 1629 is
	// declined once authenticated.
	"4000002760003184": {},
	"4000008400001629": {authorize: refused(payment.ErrRejectedAfter3DS, "declined after authentication")},
	"4000000000003220": {},
	"4000000000003063": {},
	"4000000000003055": {},
	"4000000000003097": {},
}

// threeDSCards are the test cards whose issuer does more than authenticate
// without a challenge: every other card is enrolled and frictionless.
var threeDSCards = map[string]payment.ThreeDSProfile{
	"4000002760003184": {Enrolled: true, Challenge: true},
	"4000008400001629": {Enrolled: true, Challenge: true},
	"4000000000003220": {Enrolled: true, Challenge: true, Mandatory: true},
	"4000000000003063": {Enrolled: true, Challenge: true, Mandatory: true},
	"4000000000003097": {Enrolled: false},
}

// ThreeDS answers what the card's issuer does about 3-D Secure.
func (Processor) ThreeDS(card payment.CardDetails) payment.ThreeDSProfile {
	if p, ok := threeDSCards[card.Number]; ok {
		return p
	}
	return payment.ThreeDSProfile{Enrolled: true}
}

// forcedFailure is UnivaPay's convention: a token whose e-mail is
// test+charge-failure-NNN@… fails every charge with payment error NNN.
var forcedFailure = regexp.MustCompile(`^test\+charge-failure-(\d{3})@`)

func forced(email string) *payment.PaymentError {
	m := forcedFailure.FindStringSubmatch(email)
	if m == nil {
		return nil
	}
	code, _ := strconv.Atoi(m[1])
	if code < 301 || code > 363 || !payment.KnownPaymentErrorCode(code) {
		return nil
	}
	return refused(code, "forced by the token's e-mail address")
}

// Authorize decides an authorisation.
func (p Processor) Authorize(ctx context.Context, req payment.AuthorizeRequest) (payment.ProcessorResult, error) {
	if err := p.wait(ctx); err != nil {
		return payment.ProcessorResult{}, err
	}
	if e := forced(req.Email); e != nil {
		return payment.ProcessorResult{Error: e}, nil
	}
	o := cards[req.Card.Number]
	if o.authorize != nil {
		return payment.ProcessorResult{Error: o.authorize}, nil
	}
	if req.Capture && o.capture != nil {
		// Authorised and captured in one step: the capture's refusal is
		// the charge's.
		return payment.ProcessorResult{Error: o.capture}, nil
	}
	return payment.ProcessorResult{Reference: "sandbox-auth-" + req.ChargeID.String()}, nil
}

// Capture decides a capture.
func (p Processor) Capture(ctx context.Context, chargeID uuid.UUID, card payment.CardDetails, _ int64, _ string) (payment.ProcessorResult, error) {
	if err := p.wait(ctx); err != nil {
		return payment.ProcessorResult{}, err
	}
	if o := cards[card.Number]; o.capture != nil {
		return payment.ProcessorResult{Error: o.capture}, nil
	}
	return payment.ProcessorResult{Reference: "sandbox-capture-" + chargeID.String()}, nil
}

// Refund decides a refund.
func (p Processor) Refund(ctx context.Context, refundID uuid.UUID, card payment.CardDetails, _ int64, _ string) (payment.ProcessorResult, error) {
	if err := p.wait(ctx); err != nil {
		return payment.ProcessorResult{}, err
	}
	if o := cards[card.Number]; o.refund != nil {
		return payment.ProcessorResult{Error: o.refund}, nil
	}
	return payment.ProcessorResult{Reference: "sandbox-refund-" + refundID.String()}, nil
}

// Void always succeeds: the sandbox's authorisations never expire on their
// own.
func (p Processor) Void(ctx context.Context, cancelID uuid.UUID, _ payment.CardDetails) (payment.ProcessorResult, error) {
	if err := p.wait(ctx); err != nil {
		return payment.ProcessorResult{}, err
	}
	return payment.ProcessorResult{Reference: "sandbox-void-" + cancelID.String()}, nil
}

// IsTestCard reports whether number is one of the sandbox's listed cards.
func (Processor) IsTestCard(number string) bool {
	_, ok := cards[number]
	return ok
}

// SupportsLive is false: the sandbox never moves real money.
func (Processor) SupportsLive() bool { return false }
