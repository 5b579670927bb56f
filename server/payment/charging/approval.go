package charging

import (
	"context"
	"crypto/rand"
	"time"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/payment/outbox"
)

// newApprovalKey returns an approval's key: 128 random bits in 26
// characters of base32, safe in a URL path.
func newApprovalKey() string { return rand.Text() }

// Approval returns the page of the approval with key. Holding the key is
// the authority: the page is the shopper's, not the merchant's. An
// approval whose time has run out is shown as expired even before the
// worker has ended it.
func (s *Service) Approval(ctx context.Context, key string) (*payment.ApprovalPage, error) {
	var page *payment.ApprovalPage
	err := s.db.View(ctx, func(tx payment.Tx) error {
		var err error
		page, err = s.approvalPage(ctx, tx, key)
		return err
	})
	if err != nil {
		return nil, err
	}
	if page.Status == payment.ApprovalAwaiting && page.Expired(s.clock.Now()) {
		page.Status = payment.ApprovalExpired
	}
	return page, nil
}

func (s *Service) approvalPage(ctx context.Context, tx payment.Tx, key string) (*payment.ApprovalPage, error) {
	if !validApprovalKey(key) {
		return nil, payment.NotFound("approval")
	}
	ap, err := tx.Approval(ctx, key)
	if err != nil {
		return nil, err
	}
	st, err := tx.Store(ctx, ap.StoreID)
	if err != nil {
		return nil, err
	}
	page := &payment.ApprovalPage{Approval: *ap, StoreName: st.Name}
	if page.FrameDomains, err = storeDomains(ctx, tx, st, ap.Mode); err != nil {
		return nil, err
	}
	switch ap.ResourceType {
	case payment.ResourceCharge:
		ch, err := tx.Charge(ctx, ap.ResourceID)
		if err != nil {
			return nil, err
		}
		page.RedirectEndpoint = ch.RedirectEndpoint
		if ap.Kind == payment.ApprovalThreeDS && ch.ThreeDS.RedirectEndpoint != "" {
			page.RedirectEndpoint = ch.ThreeDS.RedirectEndpoint
		}
		page.RedirectID = ch.ThreeDS.RedirectID
	case payment.ResourceToken:
		tok, err := tx.Token(ctx, ap.ResourceID)
		if err != nil {
			return nil, err
		}
		page.RedirectEndpoint, page.RedirectID = tok.ThreeDS.RedirectEndpoint, tok.ThreeDS.RedirectID
	}
	return page, nil
}

// storeDomains are the domains of a store's active app tokens of mode.
func storeDomains(ctx context.Context, tx payment.Tx, st *payment.Store, mode payment.Mode) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	p := payment.ListParams{Limit: payment.MaxLimit, Direction: payment.Asc}
	for {
		page, err := tx.ListAppTokens(ctx, payment.AppTokenFilter{MerchantID: st.MerchantID, StoreID: st.ID}, p)
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
func (s *Service) ActOnApproval(ctx context.Context, key string, action payment.ApprovalAction, code string) (*payment.ApprovalPage, error) {
	var page *payment.ApprovalPage
	var settled bool
	err := s.db.Update(ctx, func(tx *outbox.Tx) error {
		settled = false
		var err error
		if page, err = s.approvalPage(ctx, tx, key); err != nil {
			return err
		}
		if page.Status != payment.ApprovalAwaiting {
			return nil
		}
		now := s.clock.Now()
		outcome, err := approvalOutcome(&page.Approval, action, code, now)
		if err != nil {
			return err
		}
		page.UpdatedOn = now
		if outcome == payment.ApprovalAwaiting { // a wrong code, with tries left
			return tx.UpdateApproval(ctx, &page.Approval)
		}
		settled = true
		return s.settleApproval(ctx, tx, &page.Approval, outcome, now)
	})
	if err != nil {
		return nil, err
	}
	if settled {
		s.db.Changed(page.ResourceID)
		s.db.WakeWorker()
	}
	return page, nil
}

// approvalOutcome is what action does to an awaiting approval at now:
// expired once its time has run out, whatever the action; otherwise what
// the payment method of its kind makes of the action.
func approvalOutcome(ap *payment.Approval, action payment.ApprovalAction, code string, now time.Time) (payment.ApprovalStatus, error) {
	if ap.Expired(now) {
		return payment.ApprovalExpired, nil
	}
	m, err := approvalMethod(ap.Kind)
	if err != nil {
		return "", payment.Invalid("action", payment.ReasonInvalidFormat)
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
func (s *core) settleApproval(ctx context.Context, tx *outbox.Tx, ap *payment.Approval, outcome payment.ApprovalStatus, now time.Time) error {
	ap.Status, ap.UpdatedOn = outcome, now
	// The expiry item stays queued: when it comes due it finds the
	// approval ended and does nothing.
	if err := tx.UpdateApproval(ctx, ap); err != nil {
		return err
	}
	if ap.ResourceType == payment.ResourceToken {
		tok, err := tx.Token(ctx, ap.ResourceID)
		if err != nil {
			return err
		}
		if tok.ThreeDS.Status != payment.ThreeDSAwaiting {
			return nil
		}
		if outcome == payment.ApprovalSuccessful {
			tok.ThreeDS.Status, tok.ThreeDS.Error = payment.ThreeDSSuccessful, nil
		} else {
			tok.ThreeDS.Status = payment.ThreeDSFailed
			tok.ThreeDS.Error = payment.NewPaymentError(payment.ErrThreeDSNotCompleted, "the 3-D Secure authentication was "+string(outcome))
		}
		tok.UpdatedOn = now
		if err := tx.UpdateToken(ctx, tok); err != nil {
			return err
		}
		return tx.Announce(ctx, payment.EventTokenThreeDSUpdated, tok)
	}
	ch, err := tx.Charge(ctx, ap.ResourceID)
	if err != nil {
		return err
	}
	if ch.Status != payment.ChargeAwaiting {
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
		return tx.EnqueueWork(ctx, payment.WorkAuthorize, ch.ID, now)
	}
	ch.UpdatedOn = now
	if err := s.moveCharge(ctx, tx, ch, payment.ChargeAwaiting); err != nil {
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
func startApproval(ctx context.Context, tx *outbox.Tx, ap *payment.Approval, ttl time.Duration, now time.Time) error {
	ap.Key = newApprovalKey()
	ap.Status = payment.ApprovalAwaiting
	ap.ExpiresOn = now.Add(ttl)
	ap.CreatedOn, ap.UpdatedOn = now, now
	if err := tx.CreateApproval(ctx, ap); err != nil {
		return err
	}
	return tx.EnqueueWork(ctx, payment.WorkApprovalExpiry, ap.ResourceID, ap.ExpiresOn)
}

// expireApproval ends, at its time, the approval a resource waits on.
func (s *Service) expireApproval(ctx context.Context, w payment.Work) error {
	var settled bool
	err := s.db.Update(ctx, func(tx *outbox.Tx) error {
		settled = false
		if err := tx.CompleteWork(ctx, w); err != nil {
			return err
		}
		ap, err := tx.ApprovalFor(ctx, w.ID)
		if payment.IsNotFound(err) {
			return nil
		}
		if err != nil || ap.Status != payment.ApprovalAwaiting {
			return err
		}
		now := s.clock.Now()
		if !ap.Expired(now) {
			// Claimed early (a clock behind another instance's): again at
			// its time.
			return tx.EnqueueWork(ctx, payment.WorkApprovalExpiry, ap.ResourceID, ap.ExpiresOn)
		}
		settled = true
		return s.settleApproval(ctx, tx, ap, payment.ApprovalExpired, now)
	})
	if err == nil && settled {
		s.db.Changed(w.ID)
		s.db.WakeWorker()
	}
	return err
}
