package charging

import (
	"context"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/payment/outbox"
	"github.com/kessai/kessai/server/payment/workqueue"
)

// handleWork registers the kinds of work the payment rules carry out.
func handleWork(q *workqueue.Queue, s *Service, t *Tokens, r *Refunds) {
	q.Handle(payment.WorkAuthorize, workqueue.Handler{Run: s.authorize})
	q.Handle(payment.WorkCapture, workqueue.Handler{Run: s.capture})
	q.Handle(payment.WorkRefund, workqueue.Handler{Run: r.refund})
	q.Handle(payment.WorkCancel, workqueue.Handler{Run: r.void})
	q.Handle(payment.WorkCVVAuthorize, workqueue.Handler{Run: t.cvvAuthorize})
	// Its own kind rather than a capture item due later: the merchant's
	// capture queues a capture item at once, and one of those already
	// queued for the charge would leave it waiting until capture_at.
	q.Handle(payment.WorkScheduledCapture, workqueue.Handler{Run: s.scheduledCapture})
	q.Handle(payment.WorkTokenThreeDS, workqueue.Handler{Run: t.tokenThreeDS})
	q.Handle(payment.WorkApprovalExpiry, workqueue.Handler{Run: s.expireApproval})
}

// chargeAndCard reads a charge, its token and what the processor is
// given of it (paymentMethod.instrument: a card, opened from the vault).
func (s *core) chargeAndCard(ctx context.Context, id uuid.UUID) (*payment.Charge, *payment.TransactionToken, payment.CardDetails, error) {
	var ch *payment.Charge
	var tok *payment.TransactionToken
	err := s.db.View(ctx, func(tx payment.Tx) error {
		var err error
		if ch, err = tx.Charge(ctx, id); err != nil {
			return err
		}
		tok, err = tx.Token(ctx, ch.TokenID)
		return err
	})
	if err != nil {
		return nil, nil, payment.CardDetails{}, err
	}
	m, err := methodOf(tok.PaymentType)
	if err != nil {
		return nil, nil, payment.CardDetails{}, err
	}
	card, err := m.instrument(s, tok)
	return ch, tok, card, err
}

// authorize carries a charge ready for its authorisation on, as its
// payment method does (paymentMethod.authorize): a card's to the
// acquirer's answer, after 3-D Secure where it is needed; a wallet's to
// awaiting its shopper.
func (s *Service) authorize(ctx context.Context, w payment.Work) error {
	ch, tok, card, err := s.chargeAndCard(ctx, w.ID)
	if err != nil {
		return err
	}
	if !ch.ReadyToAuthorize() {
		return s.work.Complete(ctx, w)
	}
	m, err := methodOf(tok.PaymentType)
	if err != nil {
		return err
	}
	return m.authorize(ctx, s.core, w, ch, tok, card)
}

func (s *Service) capture(ctx context.Context, w payment.Work) error {
	id := w.ID
	ch, _, card, err := s.chargeAndCard(ctx, id)
	if err != nil {
		return err
	}
	if ch.CaptureState != payment.CaptureRequested || ch.Status != payment.ChargeAuthorized {
		return s.work.Complete(ctx, w)
	}
	res, err := s.processor.Capture(ctx, ch.ID, card, ch.CaptureAmount, ch.Currency)
	if err != nil {
		return err
	}
	err = s.db.Update(ctx, func(tx *outbox.Tx) error {
		if err := tx.CompleteWork(ctx, w); err != nil {
			return err
		}
		ch, err := tx.Charge(ctx, id)
		if err != nil || ch.CaptureState != payment.CaptureRequested || ch.Status != payment.ChargeAuthorized {
			return err
		}
		if res.Error == nil {
			amount := ch.CaptureAmount
			ch.Status, ch.ChargedAmount, ch.CaptureState = payment.ChargeSuccessful, &amount, payment.CaptureDone
		} else {
			// Nothing was charged: the authorisation is gone with it.
			ch.Status, ch.Error, ch.CaptureState, ch.ChargedAmount = payment.ChargeFailed, res.Error, payment.CaptureNone, nil
		}
		ch.UpdatedOn = s.clock.Now()
		if err := s.moveCharge(ctx, tx, ch, payment.ChargeAuthorized); err != nil {
			return err
		}
		return tx.PutLedgerEntry(ctx, chargeLedgerEntry(ch))
	})
	if err == nil {
		s.db.Changed(id)
	}
	return err
}

// scheduledCapture asks, at a charge's capture_at, for the capture of the
// whole authorisation, as the merchant's capture would; the capture item it
// queues makes the acquirer call. A charge the merchant captured, voided,
// or asked to capture or void before then is left as it is: the merchant's
// own decision came first.
//
// The capture item is due at once; queuing it wakes the worker
// (requestCapture), so it does not wait for the next tick.
func (s *Service) scheduledCapture(ctx context.Context, w payment.Work) error {
	return s.db.Update(ctx, func(tx *outbox.Tx) error {
		if err := tx.CompleteWork(ctx, w); err != nil {
			return err
		}
		ch, err := tx.Charge(ctx, w.ID)
		if err != nil || ch.Status != payment.ChargeAuthorized || ch.CaptureState != payment.CaptureNone {
			return err
		}
		canceling, err := tx.PendingCancelFor(ctx, ch.ID)
		if err != nil || canceling {
			return err
		}
		return requestCapture(ctx, tx, ch, *ch.ChargedAmount, s.clock.Now())
	})
}

func (s *Refunds) refund(ctx context.Context, w payment.Work) error {
	id := w.ID
	var r *payment.Refund
	if err := s.db.View(ctx, func(tx payment.Tx) error {
		var err error
		r, err = tx.QueuedRefund(ctx, id)
		return err
	}); err != nil {
		return err
	}
	if r.Status != payment.OperationPending {
		return s.work.Complete(ctx, w)
	}
	_, _, card, err := s.chargeAndCard(ctx, r.ChargeID)
	if err != nil {
		return err
	}
	res, err := s.processor.Refund(ctx, r.ID, card, r.Amount, r.Currency)
	if err != nil {
		return err
	}
	err = s.db.Update(ctx, func(tx *outbox.Tx) error {
		if err := tx.CompleteWork(ctx, w); err != nil {
			return err
		}
		r, err := tx.QueuedRefund(ctx, id)
		if err != nil || r.Status != payment.OperationPending {
			return err
		}
		r.Status, r.Error = operationOutcome(res)
		r.UpdatedOn = s.clock.Now()
		if err := tx.UpdateRefund(ctx, r); err != nil {
			return err
		}
		tx.NoteSettled(payment.SettledRefund, string(r.Status), r.Error)
		if err := tx.Announce(ctx, payment.EventRefundFinished, r); err != nil {
			return err
		}
		return tx.PutLedgerEntry(ctx, refundLedgerEntry(r))
	})
	if err == nil {
		s.db.Changed(id)
		s.db.Changed(r.ChargeID)
	}
	return err
}

func (s *Refunds) void(ctx context.Context, w payment.Work) error {
	id := w.ID
	var cn *payment.Cancel
	if err := s.db.View(ctx, func(tx payment.Tx) error {
		var err error
		cn, err = tx.QueuedCancel(ctx, id)
		return err
	}); err != nil {
		return err
	}
	if cn.Status != payment.OperationPending {
		return s.work.Complete(ctx, w)
	}
	_, _, card, err := s.chargeAndCard(ctx, cn.ChargeID)
	if err != nil {
		return err
	}
	res, err := s.processor.Void(ctx, cn.ID, card)
	if err != nil {
		return err
	}
	err = s.db.Update(ctx, func(tx *outbox.Tx) error {
		if err := tx.CompleteWork(ctx, w); err != nil {
			return err
		}
		cn, err := tx.QueuedCancel(ctx, id)
		if err != nil || cn.Status != payment.OperationPending {
			return err
		}
		now := s.clock.Now()
		cn.Status, cn.Error = operationOutcome(res)
		if cn.Status == payment.OperationSuccessful {
			ch, err := tx.Charge(ctx, cn.ChargeID)
			if err != nil {
				return err
			}
			if ch.Status != payment.ChargeAuthorized || ch.CaptureState != payment.CaptureNone {
				// Captured meanwhile: the void came too late.
				cn.Status, cn.Error = payment.OperationFailed, payment.NewPaymentError(payment.ErrCancelUnavailable, "the charge was captured")
			} else {
				ch.Status, ch.UpdatedOn = payment.ChargeCanceled, now
				if err := s.moveCharge(ctx, tx, ch, payment.ChargeAuthorized); err != nil {
					return err
				}
				if err := tx.PutLedgerEntry(ctx, chargeLedgerEntry(ch)); err != nil {
					return err
				}
			}
		}
		cn.UpdatedOn = now
		if err := tx.UpdateCancel(ctx, cn); err != nil {
			return err
		}
		tx.NoteSettled(payment.SettledCancel, string(cn.Status), cn.Error)
		return tx.Announce(ctx, payment.EventCancelFinished, cn)
	})
	if err == nil {
		s.db.Changed(id)
		s.db.Changed(cn.ChargeID)
	}
	return err
}

func operationOutcome(res payment.ProcessorResult) (payment.OperationStatus, *payment.PaymentError) {
	switch {
	case res.Error == nil:
		return payment.OperationSuccessful, nil
	case res.Error.Code == payment.ErrProcessingError:
		return payment.OperationError, res.Error
	default:
		return payment.OperationFailed, res.Error
	}
}
