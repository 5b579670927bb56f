package charging

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/payment/outbox"
)

// CreateCancel asks for an authorised charge to be voided. Only an
// authorisation that is neither captured nor being captured, and has no
// cancel under way, can be. A charge still awaiting its shopper (in a
// wallet, or at a 3-D Secure challenge) is withdrawn at once: nothing was
// authorised, so the acquirer has nothing to void.
func (s *Refunds) CreateCancel(ctx context.Context, c *payment.Caller, storeID, chargeID uuid.UUID, p payment.NewCancel) (*payment.Cancel, error) {
	metadata := p.Metadata
	if err := c.RequireSecret(); err != nil {
		return nil, err
	}
	if err := metadata.Check("metadata"); err != nil {
		return nil, err
	}
	var cn *payment.Cancel
	err := s.db.Update(ctx, func(tx *outbox.Tx) error {
		var err error
		if cn, err = s.placeCancel(ctx, tx, c, storeID, chargeID, metadata); err != nil {
			return err
		}
		return payment.RecordEffect(ctx, tx, p.Idempotency,
			payment.IdempotentEffect{Kind: payment.EffectCancel, StoreID: cn.StoreID, ChargeID: cn.ChargeID, ID: cn.ID})
	})
	if err != nil {
		return nil, err
	}
	s.db.WakeWorker()
	s.db.Changed(chargeID)
	return cn, nil
}

// placeCancel records a cancel of a charge, in the caller's transaction:
// done at once for a charge awaiting its shopper (the cancel finished, the
// charge withdrawn), pending with the work that voids it for an
// authorisation.
func (s *Refunds) placeCancel(ctx context.Context, tx *outbox.Tx, c *payment.Caller, storeID, chargeID uuid.UUID, metadata payment.Metadata) (*payment.Cancel, error) {
	ch, err := s.visibleCharge(ctx, tx, c, storeID, chargeID)
	if err != nil {
		return nil, err
	}
	m, err := methodOf(ch.PaymentType)
	if err != nil {
		return nil, err
	}
	if err := m.checkCancel(ch); err != nil {
		return nil, err
	}
	now := s.clock.Now()
	if ch.Status == payment.ChargeAwaiting && ch.ThreeDS.Status != payment.ThreeDSSuccessful {
		cn := &payment.Cancel{
			ID: payment.NewID(), StoreID: ch.StoreID, MerchantID: ch.MerchantID, ChargeID: ch.ID, Mode: ch.Mode,
			Status: payment.OperationSuccessful, Metadata: metadata, CreatedOn: now, UpdatedOn: now,
		}
		if err := tx.CreateCancel(ctx, cn); err != nil {
			return nil, err
		}
		tx.NoteSettled(payment.SettledCancel, string(cn.Status), cn.Error)
		if err := tx.Announce(ctx, payment.EventCancelFinished, cn); err != nil {
			return nil, err
		}
		return cn, s.withdrawAwaiting(ctx, tx, ch, now)
	}
	if ch.Status != payment.ChargeAuthorized || ch.CaptureState != payment.CaptureNone {
		return nil, payment.Errorf(payment.CodeCancelNotAllowed, "only an uncaptured authorisation can be canceled")
	}
	open, err := tx.PendingCancelFor(ctx, ch.ID)
	if err != nil {
		return nil, err
	}
	if open {
		return nil, payment.Errorf(payment.CodeCancelNotAllowed, "a cancel of this charge is already under way")
	}
	cn := &payment.Cancel{
		ID: payment.NewID(), StoreID: ch.StoreID, MerchantID: ch.MerchantID, ChargeID: ch.ID, Mode: ch.Mode,
		Status: payment.OperationPending, Metadata: metadata, CreatedOn: now, UpdatedOn: now,
	}
	if err := tx.CreateCancel(ctx, cn); err != nil {
		return nil, err
	}
	return cn, tx.EnqueueWork(ctx, payment.WorkCancel, cn.ID, now)
}

func (s *Refunds) visibleCancel(ctx context.Context, tx payment.Tx, c *payment.Caller, storeID, chargeID, id uuid.UUID) (*payment.Cancel, error) {
	ch, err := s.visibleCharge(ctx, tx, c, storeID, chargeID)
	if err != nil {
		return nil, err
	}
	return tx.Cancel(ctx, ch.StoreID, ch.ID, id)
}

// Cancel returns a cancel, long-polling while it is pending.
func (s *Refunds) Cancel(ctx context.Context, c *payment.Caller, storeID, chargeID, id uuid.UUID, wait time.Duration) (*payment.Cancel, error) {
	if err := c.RequireSecret(); err != nil {
		return nil, err
	}
	var cn *payment.Cancel
	read := func() error {
		return s.db.View(ctx, func(tx payment.Tx) error {
			var err error
			cn, err = s.visibleCancel(ctx, tx, c, storeID, chargeID, id)
			return err
		})
	}
	err := s.db.LongPoll(ctx, id, wait, read, func() (string, bool) { return string(cn.Status), cn.Status == payment.OperationPending })
	return cn, err
}

// Cancels lists a charge's cancels.
func (s *Refunds) Cancels(ctx context.Context, c *payment.Caller, storeID, chargeID uuid.UUID, p payment.ListParams) (payment.Page[*payment.Cancel], error) {
	if err := c.RequireSecret(); err != nil {
		return payment.Page[*payment.Cancel]{}, err
	}
	var page payment.Page[*payment.Cancel]
	err := s.db.View(ctx, func(tx payment.Tx) error {
		if _, err := s.visibleCharge(ctx, tx, c, storeID, chargeID); err != nil {
			return err
		}
		var err error
		page, err = tx.ListCancels(ctx, chargeID, p)
		return err
	})
	return page, err
}

// UpdateCancel merges metadata into a cancel.
func (s *Refunds) UpdateCancel(ctx context.Context, c *payment.Caller, storeID, chargeID, id uuid.UUID, metadata payment.Metadata) (*payment.Cancel, error) {
	if err := c.RequireSecret(); err != nil {
		return nil, err
	}
	var cn *payment.Cancel
	err := s.db.Update(ctx, func(tx *outbox.Tx) error {
		var err error
		if cn, err = s.visibleCancel(ctx, tx, c, storeID, chargeID, id); err != nil {
			return err
		}
		if cn.Metadata, err = cn.Metadata.Merge(metadata); err != nil {
			return err
		}
		// Metadata is no change of status: no event.
		cn.UpdatedOn = s.clock.Now()
		return tx.UpdateCancel(ctx, cn)
	})
	return cn, err
}

// withdrawAwaiting ends a charge that awaits its shopper because the
// merchant cancelled it (a cancel of an awaiting charge): its approval
// ends canceled and the charge canceled, without an error of the
// shopper's.
func (s *Refunds) withdrawAwaiting(ctx context.Context, tx *outbox.Tx, ch *payment.Charge, now time.Time) error {
	ap, err := tx.ApprovalFor(ctx, ch.ID)
	if err != nil && !payment.IsNotFound(err) {
		return err
	}
	if err == nil && ap.Status == payment.ApprovalAwaiting {
		ap.Status, ap.UpdatedOn = payment.ApprovalCanceled, now
		if err := tx.UpdateApproval(ctx, ap); err != nil {
			return err
		}
	}
	if ch.ThreeDS.Status == payment.ThreeDSAwaiting {
		ch.ThreeDS.Status = payment.ThreeDSFailed
	}
	ch.Status, ch.UpdatedOn = payment.ChargeCanceled, now
	if err := s.moveCharge(ctx, tx, ch, payment.ChargeAwaiting); err != nil {
		return err
	}
	if err := tx.PutLedgerEntry(ctx, chargeLedgerEntry(ch)); err != nil {
		return err
	}
	return tx.EraseTokenCVC(ctx, ch.TokenID)
}
