package payment

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// OperationStatus is the status of a refund or a cancel.
type OperationStatus string

// Refund and cancel statuses (UnivaPay's wire format).
const (
	OperationPending    OperationStatus = "pending"
	OperationSuccessful OperationStatus = "successful"
	OperationFailed     OperationStatus = "failed"
	OperationError      OperationStatus = "error"
)

// refundReasons are the reasons a merchant may give; the others of the
// enum (chargebacks, system failures) are set by Kessai itself.
var refundReasons = map[string]bool{"duplicate": true, "fraud": true, "customer_request": true}

// Refund gives back part or all of a successful charge (UnivaPay's wire format).
type Refund struct {
	ID         uuid.UUID
	StoreID    uuid.UUID
	MerchantID uuid.UUID
	ChargeID   uuid.UUID
	Mode       Mode
	Status     OperationStatus
	Amount     int64
	Currency   string
	Reason     string
	Message    string
	Error      *PaymentError
	Metadata   Metadata
	CreatedOn  time.Time
	UpdatedOn  time.Time
}

// NewRefund asks for a refund.
type NewRefund struct {
	Amount   int64
	Currency string
	Reason   string
	Message  string
	Metadata Metadata
	// Idempotency is the reservation of the request's Idempotency-Key
	// (nil: none), on which the refund is recorded in its transaction.
	Idempotency *IdempotencyRef
}

// CreateRefund records a refund as pending and queues the work that asks
// the acquirer (waking the worker); its event (refund.finished) is
// recorded when the worker settles it. Refunds may be partial and
// repeated, up to the charged amount counting every refund that has not
// failed.
func (s *Service) CreateRefund(ctx context.Context, c *Caller, storeID, chargeID uuid.UUID, p NewRefund) (*Refund, error) {
	if err := c.requireSecret(); err != nil {
		return nil, err
	}
	if _, err := checkAmount(p.Amount, p.Currency, "amount"); err != nil {
		return nil, err
	}
	var v Validation
	if p.Reason != "" && !refundReasons[p.Reason] {
		v.Add("reason", ReasonInvalidFormat)
	}
	checkNote(&v, "message", p.Message, maxMessageLen)
	if err := v.Err(); err != nil {
		return nil, err
	}
	if err := p.Metadata.check("metadata"); err != nil {
		return nil, err
	}
	var r *Refund
	err := s.update(ctx, func(tx *writeTx) error {
		ch, err := s.visibleCharge(ctx, tx, c, storeID, chargeID)
		if err != nil {
			return err
		}
		if ch.Status != ChargeSuccessful || ch.ChargedAmount == nil {
			return Errorf(CodeCannotRefundUnsuccessful, "only successful charges can be refunded")
		}
		m, err := methodOf(ch.PaymentType)
		if err != nil {
			return err
		}
		if err := m.checkRefund(ch); err != nil {
			return err
		}
		if !sameCurrency(p.Currency, ch.Currency) {
			return Errorf(CodeCurrencyMustMatchCharge, "refund currency differs from the charge's")
		}
		refunded, err := tx.RefundedAmount(ctx, ch.ID)
		if err != nil {
			return err
		}
		// Both are bounded and refunded never exceeds the charged amount,
		// so the subtraction cannot overflow where a sum could.
		if p.Amount > *ch.ChargedAmount-refunded {
			return Errorf(CodeRefundExceedsCharge, "refunds would exceed the charged amount")
		}
		now := s.clock.Now()
		r = &Refund{
			ID: NewID(), StoreID: ch.StoreID, MerchantID: ch.MerchantID, ChargeID: ch.ID, Mode: ch.Mode,
			Status: OperationPending, Amount: p.Amount, Currency: ch.Currency, Reason: p.Reason,
			Message: p.Message, Metadata: p.Metadata, CreatedOn: now, UpdatedOn: now,
		}
		if err := tx.CreateRefund(ctx, r); err != nil {
			return err
		}
		if err := tx.enqueueWork(ctx, WorkRefund, r.ID, now); err != nil {
			return err
		}
		if err := tx.PutLedgerEntry(ctx, refundLedgerEntry(r)); err != nil {
			return err
		}
		return recordEffect(ctx, tx, p.Idempotency, IdempotentEffect{Kind: EffectRefund, StoreID: r.StoreID, ChargeID: r.ChargeID, ID: r.ID})
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

func (s *Service) visibleRefund(ctx context.Context, tx Tx, c *Caller, storeID, chargeID, id uuid.UUID) (*Refund, error) {
	ch, err := s.visibleCharge(ctx, tx, c, storeID, chargeID)
	if err != nil {
		return nil, err
	}
	return tx.Refund(ctx, ch.StoreID, ch.ID, id)
}

// Refund returns a refund, long-polling like Charge while it is pending.
func (s *Service) Refund(ctx context.Context, c *Caller, storeID, chargeID, id uuid.UUID, wait time.Duration) (*Refund, error) {
	if err := c.requireSecret(); err != nil {
		return nil, err
	}
	var r *Refund
	read := func() error {
		return s.view(ctx, func(tx Tx) error {
			var err error
			r, err = s.visibleRefund(ctx, tx, c, storeID, chargeID, id)
			return err
		})
	}
	err := s.longPoll(ctx, id, wait, read, func() (string, bool) { return string(r.Status), r.Status == OperationPending })
	return r, err
}

// Refunds lists a charge's refunds.
func (s *Service) Refunds(ctx context.Context, c *Caller, storeID, chargeID uuid.UUID, p ListParams) (Page[*Refund], error) {
	if err := c.requireSecret(); err != nil {
		return Page[*Refund]{}, err
	}
	var page Page[*Refund]
	err := s.view(ctx, func(tx Tx) error {
		if _, err := s.visibleCharge(ctx, tx, c, storeID, chargeID); err != nil {
			return err
		}
		var err error
		page, err = tx.ListRefunds(ctx, chargeID, p)
		return err
	})
	return page, err
}

// RefundUpdate changes a refund's descriptive fields.
type RefundUpdate struct {
	Reason   *string
	Message  *string
	Metadata Metadata
}

// UpdateRefund applies a PATCH to a refund.
func (s *Service) UpdateRefund(ctx context.Context, c *Caller, storeID, chargeID, id uuid.UUID, u RefundUpdate) (*Refund, error) {
	if err := c.requireSecret(); err != nil {
		return nil, err
	}
	var v Validation
	if u.Reason != nil && *u.Reason != "" && !refundReasons[*u.Reason] {
		v.Add("reason", ReasonInvalidFormat)
	}
	if u.Message != nil {
		checkNote(&v, "message", *u.Message, maxMessageLen)
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	var r *Refund
	err := s.update(ctx, func(tx *writeTx) error {
		var err error
		if r, err = s.visibleRefund(ctx, tx, c, storeID, chargeID, id); err != nil {
			return err
		}
		if u.Reason != nil {
			r.Reason = *u.Reason
		}
		if u.Message != nil {
			r.Message = *u.Message
		}
		if r.Metadata, err = r.Metadata.Merge(u.Metadata); err != nil {
			return err
		}
		// Descriptive fields are no change of status: no event.
		r.UpdatedOn = s.clock.Now()
		return tx.UpdateRefund(ctx, r)
	})
	return r, err
}
