package payment

import (
	"context"
	"crypto/rand"
	"time"

	"github.com/google/uuid"
)

// ApprovalKind is what a shopper approves away from the merchant's page.
type ApprovalKind string

// The kinds of approval: a 3-D Secure challenge at the card issuer's
// access control server, and a payment in a wallet's app or page.
const (
	ApprovalThreeDS ApprovalKind = "three_ds"
	ApprovalWallet  ApprovalKind = "wallet"
)

// ApprovalStatus is where an approval is.
type ApprovalStatus string

// The approval statuses: waiting for the shopper, then one outcome.
const (
	ApprovalAwaiting   ApprovalStatus = "awaiting"
	ApprovalSuccessful ApprovalStatus = "successful"
	ApprovalFailed     ApprovalStatus = "failed"
	ApprovalCanceled   ApprovalStatus = "canceled"
	ApprovalExpired    ApprovalStatus = "expired"
)

// The resources an approval is for, as the issuer tokens' payload names
// them (resource_type).
const (
	ResourceCharge = "charge"
	ResourceToken  = "transaction_token"
)

// Approval is a step a shopper takes on a page that is not the merchant's:
// a 3-D Secure challenge, or paying in a wallet. Its Key is the secret
// part of that page's address: whoever holds it (the shopper's browser,
// the phone that scanned the page's QR code) may act on it, and nobody
// else can guess it. The page is the sandbox's; with a real acquirer it is
// the issuer's or the wallet's.
//
// An approval ends once, by the shopper (pay, fail, cancel, answer the
// challenge) or by the gateway at ExpiresOn: a page left open cannot keep
// a charge waiting for ever.
type Approval struct {
	Key          string
	Kind         ApprovalKind
	ResourceType string
	ResourceID   uuid.UUID
	StoreID      uuid.UUID
	MerchantID   uuid.UUID
	Mode         Mode
	// Brand and CallMethod are the wallet's (ApprovalWallet).
	Brand      string
	CallMethod string
	// Amount and Currency are what the page shows (zero for a token's
	// 3-D Secure); LastFour is the card's, for a challenge.
	Amount   int64
	Currency string
	LastFour string
	// Tries counts the wrong one-time codes given to a challenge.
	Tries     int
	Status    ApprovalStatus
	ExpiresOn time.Time
	CreatedOn time.Time
	UpdatedOn time.Time
}

// Expired reports whether the approval has run out of time at now.
func (a *Approval) Expired(now time.Time) bool { return !now.Before(a.ExpiresOn) }

// TriesLeft is how many more one-time codes a challenge takes before a
// wrong one fails it, for its page to say.
func (a *Approval) TriesLeft() int { return max(0, maxChallengeTries-a.Tries) }

// Sandbox approval rules (the README's Sandbox section).
const (
	// ChallengeCode is the one-time code that passes a sandbox challenge.
	ChallengeCode = "123456"
	// maxChallengeTries wrong codes fail the authentication.
	maxChallengeTries = 3
	// challengeExpiry is how long a challenge stays open.
	challengeExpiry = 10 * time.Minute
	// defaultWalletExpiry is how long a wallet payment waits for the
	// shopper unless Config.WalletExpiry says otherwise.
	defaultWalletExpiry = 5 * time.Minute
)

// newApprovalKey returns an approval's key: 128 random bits in 26
// characters of base32, safe in a URL path.
func newApprovalKey() string { return rand.Text() }

// WorkApprovalExpiry ends an approval the shopper left unfinished, at its
// ExpiresOn; the item's object is the approval's resource.
const WorkApprovalExpiry WorkKind = "approval_expiry"

// ApprovalAction is what a shopper does on an approval's page.
type ApprovalAction string

// The actions: a wallet's Pay, Fail, Cancel and "Let it expire"; a
// challenge's answer (with its code) and Cancel.
const (
	ActionPay    ApprovalAction = "pay"
	ActionFail   ApprovalAction = "fail"
	ActionCancel ApprovalAction = "cancel"
	ActionExpire ApprovalAction = "expire"
	ActionAnswer ApprovalAction = "answer"
)

// ApprovalPage is what the page of an approval shows: the approval, the
// store's name, and where the shopper goes once it has ended.
type ApprovalPage struct {
	Approval
	StoreName string
	// RedirectEndpoint and RedirectID are the merchant's return address
	// for the shopper (the charge's redirect or 3-D Secure endpoint).
	RedirectEndpoint string
	RedirectID       string
	// FrameDomains are the domains of the store's app tokens of the
	// approval's mode: the merchant's pages that may show the approval's
	// page in a frame (besides the gateway's own widget).
	FrameDomains []string
}

// Approval returns the page of the approval with key. Holding the key is
// the authority: the page is the shopper's, not the merchant's. An
// approval whose time has run out is shown as expired even before the
// worker has ended it.
func (s *Service) Approval(ctx context.Context, key string) (*ApprovalPage, error) {
	var page *ApprovalPage
	err := s.view(ctx, func(tx Tx) error {
		var err error
		page, err = s.approvalPage(ctx, tx, key)
		return err
	})
	if err != nil {
		return nil, err
	}
	if page.Status == ApprovalAwaiting && page.Expired(s.clock.Now()) {
		page.Status = ApprovalExpired
	}
	return page, nil
}

func (s *Service) approvalPage(ctx context.Context, tx Tx, key string) (*ApprovalPage, error) {
	if !validApprovalKey(key) {
		return nil, NotFound("approval")
	}
	ap, err := tx.Approval(ctx, key)
	if err != nil {
		return nil, err
	}
	st, err := tx.Store(ctx, ap.StoreID)
	if err != nil {
		return nil, err
	}
	page := &ApprovalPage{Approval: *ap, StoreName: st.Name}
	if page.FrameDomains, err = storeDomains(ctx, tx, st, ap.Mode); err != nil {
		return nil, err
	}
	switch ap.ResourceType {
	case ResourceCharge:
		ch, err := tx.Charge(ctx, ap.ResourceID)
		if err != nil {
			return nil, err
		}
		page.RedirectEndpoint = ch.RedirectEndpoint
		if ap.Kind == ApprovalThreeDS && ch.ThreeDS.RedirectEndpoint != "" {
			page.RedirectEndpoint = ch.ThreeDS.RedirectEndpoint
		}
		page.RedirectID = ch.ThreeDS.RedirectID
	case ResourceToken:
		tok, err := tx.Token(ctx, ap.ResourceID)
		if err != nil {
			return nil, err
		}
		page.RedirectEndpoint, page.RedirectID = tok.ThreeDS.RedirectEndpoint, tok.ThreeDS.RedirectID
	}
	return page, nil
}

// storeDomains are the domains of a store's active app tokens of mode.
func storeDomains(ctx context.Context, tx Tx, st *Store, mode Mode) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	p := ListParams{Limit: MaxLimit, Direction: Asc}
	for {
		page, err := tx.ListAppTokens(ctx, AppTokenFilter{MerchantID: st.MerchantID, StoreID: st.ID}, p)
		if err != nil {
			return nil, err
		}
		for _, t := range page.Items {
			if !t.Active() || t.Mode != mode {
				continue
			}
			for _, d := range t.Domains {
				if !seen[d] {
					seen[d] = true
					out = append(out, d)
				}
			}
		}
		if !page.HasMore || len(page.Items) == 0 {
			return out, nil
		}
		p.Cursor = page.Items[len(page.Items)-1].ID
	}
}

func validApprovalKey(key string) bool {
	if len(key) != 26 {
		return false
	}
	for _, r := range key {
		if !('A' <= r && r <= 'Z' || '2' <= r && r <= '7') {
			return false
		}
	}
	return true
}

// ActOnApproval carries out a shopper's action on an approval's page and
// returns the page as it is afterwards. Acting on an approval that has
// ended answers its outcome unchanged (a second click, the phone and the
// desktop both pressing Pay); one whose time ran out ends as expired,
// whatever the action.
//
// A wallet's actions are pay, fail, cancel and expire. A challenge's are
// answer, with the one-time code (ChallengeCode passes; the third wrong
// one fails the authentication), and cancel.
func (s *Service) ActOnApproval(ctx context.Context, key string, action ApprovalAction, code string) (*ApprovalPage, error) {
	var page *ApprovalPage
	var settled bool
	err := s.update(ctx, func(tx *writeTx) error {
		settled = false
		var err error
		if page, err = s.approvalPage(ctx, tx, key); err != nil {
			return err
		}
		if page.Status != ApprovalAwaiting {
			return nil
		}
		now := s.clock.Now()
		outcome, err := approvalOutcome(&page.Approval, action, code, now)
		if err != nil {
			return err
		}
		page.UpdatedOn = now
		if outcome == ApprovalAwaiting { // a wrong code, with tries left
			return tx.UpdateApproval(ctx, &page.Approval)
		}
		settled = true
		return s.settleApproval(ctx, tx, &page.Approval, outcome, now)
	})
	if err != nil {
		return nil, err
	}
	if settled {
		s.changes.notify(page.ResourceID)
		s.wakeWorker()
	}
	return page, nil
}

// approvalOutcome is what action does to an awaiting approval at now:
// expired once its time has run out, whatever the action; otherwise what
// the payment method of its kind makes of the action.
func approvalOutcome(ap *Approval, action ApprovalAction, code string, now time.Time) (ApprovalStatus, error) {
	if ap.Expired(now) {
		return ApprovalExpired, nil
	}
	m, err := approvalMethod(ap.Kind)
	if err != nil {
		return "", Invalid("action", ReasonInvalidFormat)
	}
	return m.approvalOutcome(ap, action, code)
}

// settleApproval ends an approval with outcome and applies it to its
// resource, in the caller's transaction:
//
//   - a charge: as its payment method says (paymentMethod.settleCharge),
//     it goes on to its authorisation (queued, the worker woken), or
//     ends through moveCharge, with its effects;
//   - a token's challenge: its 3-D Secure status becomes successful or
//     failed, and its three_ds event is recorded.
func (s *Service) settleApproval(ctx context.Context, tx *writeTx, ap *Approval, outcome ApprovalStatus, now time.Time) error {
	ap.Status, ap.UpdatedOn = outcome, now
	// The expiry item stays queued: when it comes due it finds the
	// approval ended and does nothing.
	if err := tx.UpdateApproval(ctx, ap); err != nil {
		return err
	}
	if ap.ResourceType == ResourceToken {
		tok, err := tx.Token(ctx, ap.ResourceID)
		if err != nil {
			return err
		}
		if tok.ThreeDS.Status != ThreeDSAwaiting {
			return nil
		}
		if outcome == ApprovalSuccessful {
			tok.ThreeDS.Status, tok.ThreeDS.Error = ThreeDSSuccessful, nil
		} else {
			tok.ThreeDS.Status = ThreeDSFailed
			tok.ThreeDS.Error = NewPaymentError(ErrThreeDSNotCompleted, "the 3-D Secure authentication was "+string(outcome))
		}
		tok.UpdatedOn = now
		if err := tx.UpdateToken(ctx, tok); err != nil {
			return err
		}
		return tx.announce(ctx, EventTokenThreeDSUpdated, tok)
	}
	ch, err := tx.Charge(ctx, ap.ResourceID)
	if err != nil {
		return err
	}
	if ch.Status != ChargeAwaiting {
		return nil
	}
	m, err := methodOf(ch.PaymentType)
	if err != nil {
		return err
	}
	if m.settleCharge(ch, ap, outcome) {
		// Still awaiting, now its authorisation: no event yet.
		ch.UpdatedOn = now
		if err := tx.UpdateCharge(ctx, ch); err != nil {
			return err
		}
		return tx.enqueueWork(ctx, WorkAuthorize, ch.ID, now)
	}
	ch.UpdatedOn = now
	if err := s.moveCharge(ctx, tx, ch, ChargeAwaiting); err != nil {
		return err
	}
	if err := tx.PutLedgerEntry(ctx, chargeLedgerEntry(ch)); err != nil {
		return err
	}
	// The charge ended without an authorisation: the CVC, kept for it,
	// is not kept any longer (a wallet token has none).
	return tx.EraseTokenCVC(ctx, ch.TokenID)
}

// startApproval records a new approval for a resource and queues its
// expiry, in the caller's transaction.
func startApproval(ctx context.Context, tx *writeTx, ap *Approval, ttl time.Duration, now time.Time) error {
	ap.Key = newApprovalKey()
	ap.Status = ApprovalAwaiting
	ap.ExpiresOn = now.Add(ttl)
	ap.CreatedOn, ap.UpdatedOn = now, now
	if err := tx.CreateApproval(ctx, ap); err != nil {
		return err
	}
	return tx.enqueueWork(ctx, WorkApprovalExpiry, ap.ResourceID, ap.ExpiresOn)
}

// expireApproval ends, at its time, the approval a resource waits on.
func (s *Service) expireApproval(ctx context.Context, w Work) error {
	var settled bool
	err := s.update(ctx, func(tx *writeTx) error {
		settled = false
		if err := tx.CompleteWork(ctx, w); err != nil {
			return err
		}
		ap, err := tx.ApprovalFor(ctx, w.ID)
		if IsNotFound(err) {
			return nil
		}
		if err != nil || ap.Status != ApprovalAwaiting {
			return err
		}
		now := s.clock.Now()
		if !ap.Expired(now) {
			// Claimed early (a clock behind another instance's): again at
			// its time.
			return tx.enqueueWork(ctx, WorkApprovalExpiry, ap.ResourceID, ap.ExpiresOn)
		}
		settled = true
		return s.settleApproval(ctx, tx, ap, ApprovalExpired, now)
	})
	if err == nil && settled {
		s.changes.notify(w.ID)
		s.wakeWorker()
	}
	return err
}
