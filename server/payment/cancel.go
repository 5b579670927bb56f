package payment

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// Cancel voids an authorisation (UnivaPay's wire format); its charge ends
// canceled.
type Cancel struct {
	ID         uuid.UUID
	StoreID    uuid.UUID
	MerchantID uuid.UUID
	ChargeID   uuid.UUID
	Mode       Mode
	Status     OperationStatus
	Error      *PaymentError
	Metadata   Metadata
	CreatedOn  time.Time
	UpdatedOn  time.Time
}

// NewCancel asks for a cancel.
type NewCancel struct {
	Metadata Metadata
	// Idempotency is the reservation of the request's Idempotency-Key
	// (nil: none), on which the cancel is recorded in its transaction.
	Idempotency *IdempotencyRef
}

// CreateCancel asks for an authorised charge to be voided. Only an
// authorisation that is neither captured nor being captured, and has no
// cancel under way, can be. A charge still awaiting its shopper (in a
// wallet, or at a 3-D Secure challenge) is withdrawn at once: nothing was
// authorised, so the acquirer has nothing to void.
func (s *Service) CreateCancel(ctx context.Context, c *Caller, storeID, chargeID uuid.UUID, p NewCancel) (*Cancel, error) {
	metadata := p.Metadata
	if err := c.requireSecret(); err != nil {
		return nil, err
	}
	if err := metadata.check("metadata"); err != nil {
		return nil, err
	}
	var cn *Cancel
	err := s.update(ctx, func(tx *writeTx) error {
		var err error
		if cn, err = s.placeCancel(ctx, tx, c, storeID, chargeID, metadata); err != nil {
			return err
		}
		return recordEffect(ctx, tx, p.Idempotency,
			IdempotentEffect{Kind: EffectCancel, StoreID: cn.StoreID, ChargeID: cn.ChargeID, ID: cn.ID})
	})
	if err != nil {
		return nil, err
	}
	s.wakeWorker()
	s.changes.notify(chargeID)
	return cn, nil
}

// placeCancel records a cancel of a charge, in the caller's transaction:
// done at once for a charge awaiting its shopper (the cancel finished, the
// charge withdrawn), pending with the work that voids it for an
// authorisation.
func (s *Service) placeCancel(ctx context.Context, tx *writeTx, c *Caller, storeID, chargeID uuid.UUID, metadata Metadata) (*Cancel, error) {
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
	if ch.Status == ChargeAwaiting && ch.ThreeDS.Status != ThreeDSSuccessful {
		cn := &Cancel{
			ID: NewID(), StoreID: ch.StoreID, MerchantID: ch.MerchantID, ChargeID: ch.ID, Mode: ch.Mode,
			Status: OperationSuccessful, Metadata: metadata, CreatedOn: now, UpdatedOn: now,
		}
		if err := tx.CreateCancel(ctx, cn); err != nil {
			return nil, err
		}
		tx.noteSettled(SettledCancel, string(cn.Status), cn.Error)
		if err := tx.announce(ctx, EventCancelFinished, cn); err != nil {
			return nil, err
		}
		return cn, s.withdrawAwaiting(ctx, tx, ch, now)
	}
	if ch.Status != ChargeAuthorized || ch.CaptureState != CaptureNone {
		return nil, Errorf(CodeCancelNotAllowed, "only an uncaptured authorisation can be canceled")
	}
	open, err := tx.PendingCancelFor(ctx, ch.ID)
	if err != nil {
		return nil, err
	}
	if open {
		return nil, Errorf(CodeCancelNotAllowed, "a cancel of this charge is already under way")
	}
	cn := &Cancel{
		ID: NewID(), StoreID: ch.StoreID, MerchantID: ch.MerchantID, ChargeID: ch.ID, Mode: ch.Mode,
		Status: OperationPending, Metadata: metadata, CreatedOn: now, UpdatedOn: now,
	}
	if err := tx.CreateCancel(ctx, cn); err != nil {
		return nil, err
	}
	return cn, tx.enqueueWork(ctx, WorkCancel, cn.ID, now)
}

func (s *Service) visibleCancel(ctx context.Context, tx Tx, c *Caller, storeID, chargeID, id uuid.UUID) (*Cancel, error) {
	ch, err := s.visibleCharge(ctx, tx, c, storeID, chargeID)
	if err != nil {
		return nil, err
	}
	return tx.Cancel(ctx, ch.StoreID, ch.ID, id)
}

// Cancel returns a cancel, long-polling while it is pending.
func (s *Service) Cancel(ctx context.Context, c *Caller, storeID, chargeID, id uuid.UUID, wait time.Duration) (*Cancel, error) {
	if err := c.requireSecret(); err != nil {
		return nil, err
	}
	var cn *Cancel
	read := func() error {
		return s.view(ctx, func(tx Tx) error {
			var err error
			cn, err = s.visibleCancel(ctx, tx, c, storeID, chargeID, id)
			return err
		})
	}
	err := s.longPoll(ctx, id, wait, read, func() (string, bool) { return string(cn.Status), cn.Status == OperationPending })
	return cn, err
}

// Cancels lists a charge's cancels.
func (s *Service) Cancels(ctx context.Context, c *Caller, storeID, chargeID uuid.UUID, p ListParams) (Page[*Cancel], error) {
	if err := c.requireSecret(); err != nil {
		return Page[*Cancel]{}, err
	}
	var page Page[*Cancel]
	err := s.view(ctx, func(tx Tx) error {
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
func (s *Service) UpdateCancel(ctx context.Context, c *Caller, storeID, chargeID, id uuid.UUID, metadata Metadata) (*Cancel, error) {
	if err := c.requireSecret(); err != nil {
		return nil, err
	}
	var cn *Cancel
	err := s.update(ctx, func(tx *writeTx) error {
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
func (s *Service) withdrawAwaiting(ctx context.Context, tx *writeTx, ch *Charge, now time.Time) error {
	ap, err := tx.ApprovalFor(ctx, ch.ID)
	if err != nil && !IsNotFound(err) {
		return err
	}
	if err == nil && ap.Status == ApprovalAwaiting {
		ap.Status, ap.UpdatedOn = ApprovalCanceled, now
		if err := tx.UpdateApproval(ctx, ap); err != nil {
			return err
		}
	}
	if ch.ThreeDS.Status == ThreeDSAwaiting {
		ch.ThreeDS.Status = ThreeDSFailed
	}
	ch.Status, ch.UpdatedOn = ChargeCanceled, now
	if err := s.moveCharge(ctx, tx, ch, ChargeAwaiting); err != nil {
		return err
	}
	if err := tx.PutLedgerEntry(ctx, chargeLedgerEntry(ch)); err != nil {
		return err
	}
	return tx.EraseTokenCVC(ctx, ch.TokenID)
}
