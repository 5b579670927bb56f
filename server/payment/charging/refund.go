package charging

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/payment/outbox"
)

// refundReasons are the reasons a merchant may give; the others of the
// enum (chargebacks, system failures) are set by Kessai itself.
var refundReasons = map[string]bool{"duplicate": true, "fraud": true, "customer_request": true}

// CreateRefund records a refund as pending and queues the work that asks
// the acquirer (waking the worker); its event (refund.finished) is
// recorded when the worker settles it. Refunds may be partial and
// repeated, up to the charged amount counting every refund that has not
// failed.
func (s *Refunds) CreateRefund(ctx context.Context, c *payment.Caller, storeID, chargeID uuid.UUID, p payment.NewRefund) (*payment.Refund, error) {
	if err := c.RequireSecret(); err != nil {
		return nil, err
	}
	if _, err := payment.CheckAmount(p.Amount, p.Currency, "amount"); err != nil {
		return nil, err
	}
	var v payment.Validation
	if p.Reason != "" && !refundReasons[p.Reason] {
		v.Add("reason", payment.ReasonInvalidFormat)
	}
	payment.CheckNote(&v, "message", p.Message, payment.MaxMessageLen)
	if err := v.Err(); err != nil {
		return nil, err
	}
	if err := p.Metadata.Check("metadata"); err != nil {
		return nil, err
	}
	var r *payment.Refund
	err := s.db.Update(ctx, func(tx *outbox.Tx) error {
		ch, err := s.visibleCharge(ctx, tx, c, storeID, chargeID)
		if err != nil {
			return err
		}
		if ch.Status != payment.ChargeSuccessful || ch.ChargedAmount == nil {
			return payment.Errorf(payment.CodeCannotRefundUnsuccessful, "only successful charges can be refunded")
		}
		if !sameCurrency(p.Currency, ch.Currency) {
			return payment.Errorf(payment.CodeCurrencyMustMatchCharge, "refund currency differs from the charge's")
		}
		refunded, err := tx.RefundedAmount(ctx, ch.ID)
		if err != nil {
			return err
		}
		m, err := methodOf(ch.PaymentType)
		if err != nil {
			return err
		}
		if err := m.checkRefund(ch, p.Amount, refunded); err != nil {
			return err
		}
		// Both are bounded and refunded never exceeds the charged amount,
		// so the subtraction cannot overflow where a sum could.
		if p.Amount > *ch.ChargedAmount-refunded {
			return payment.Errorf(payment.CodeRefundExceedsCharge, "refunds would exceed the charged amount")
		}
		now := s.clock.Now()
		r = &payment.Refund{
			ID: payment.NewID(), StoreID: ch.StoreID, MerchantID: ch.MerchantID, ChargeID: ch.ID, Mode: ch.Mode,
			Status: payment.OperationPending, Amount: p.Amount, Currency: ch.Currency, Reason: p.Reason,
			Message: p.Message, Metadata: p.Metadata, CreatedOn: now, UpdatedOn: now,
		}
		if err := tx.CreateRefund(ctx, r); err != nil {
			return err
		}
		if err := tx.EnqueueWork(ctx, payment.WorkRefund, r.ID, now); err != nil {
			return err
		}
		if err := tx.PutLedgerEntry(ctx, refundLedgerEntry(r)); err != nil {
			return err
		}
		return payment.RecordEffect(ctx, tx, p.Idempotency, payment.IdempotentEffect{Kind: payment.EffectRefund, StoreID: r.StoreID, ChargeID: r.ChargeID, ID: r.ID})
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

func (s *Refunds) visibleRefund(ctx context.Context, tx payment.Tx, c *payment.Caller, storeID, chargeID, id uuid.UUID) (*payment.Refund, error) {
	ch, err := s.visibleCharge(ctx, tx, c, storeID, chargeID)
	if err != nil {
		return nil, err
	}
	return tx.Refund(ctx, ch.StoreID, ch.ID, id)
}

// Refund returns a refund, long-polling like Charge while it is pending.
func (s *Refunds) Refund(ctx context.Context, c *payment.Caller, storeID, chargeID, id uuid.UUID, wait time.Duration) (*payment.Refund, error) {
	if err := c.RequireSecret(); err != nil {
		return nil, err
	}
	var r *payment.Refund
	read := func() error {
		return s.db.View(ctx, func(tx payment.Tx) error {
			var err error
			r, err = s.visibleRefund(ctx, tx, c, storeID, chargeID, id)
			return err
		})
	}
	err := s.db.LongPoll(ctx, id, wait, read, func() (string, bool) { return string(r.Status), r.Status == payment.OperationPending })
	return r, err
}

// Refunds lists a charge's refunds.
func (s *Refunds) Refunds(ctx context.Context, c *payment.Caller, storeID, chargeID uuid.UUID, p payment.ListParams) (payment.Page[*payment.Refund], error) {
	if err := c.RequireSecret(); err != nil {
		return payment.Page[*payment.Refund]{}, err
	}
	var page payment.Page[*payment.Refund]
	err := s.db.View(ctx, func(tx payment.Tx) error {
		if _, err := s.visibleCharge(ctx, tx, c, storeID, chargeID); err != nil {
			return err
		}
		var err error
		page, err = tx.ListRefunds(ctx, chargeID, p)
		return err
	})
	return page, err
}

// UpdateRefund applies a PATCH to a refund.
func (s *Refunds) UpdateRefund(ctx context.Context, c *payment.Caller, storeID, chargeID, id uuid.UUID, u payment.RefundUpdate) (*payment.Refund, error) {
	if err := c.RequireSecret(); err != nil {
		return nil, err
	}
	var v payment.Validation
	if u.Reason != nil && *u.Reason != "" && !refundReasons[*u.Reason] {
		v.Add("reason", payment.ReasonInvalidFormat)
	}
	if u.Message != nil {
		payment.CheckNote(&v, "message", *u.Message, payment.MaxMessageLen)
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	var r *payment.Refund
	err := s.db.Update(ctx, func(tx *outbox.Tx) error {
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
