package subscriptions

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/payment/charging"
	"github.com/kessai/kessai/server/payment/outbox"
)

// The scheduler charges subscriptions. It is not a loop of its own: each
// payment that falls due is an item of the work queue (with Work's
// guarantees: queued in the transaction that made the payment, claimed
// under a lease, never lost by a crash), due at the first instant of its
// due date in the subscription's zone, or at its retry. The item charges
// the payment in one transaction that also records the charge on the
// payment, so however many workers run, and whatever crashed when, a
// payment has at most one charge in flight and is never charged again once
// paid.
//
// A charge's end carries the subscription on (subscriptionChargeEnded),
// in the transaction that records it: paid, the next payment is made and
// queued; failed, the subscription is unpaid and the payment retried on
// its interval.

// chargePayment is the work of a payment that fell due.
func (s *Service) chargePayment(ctx context.Context, w payment.Work) error {
	now := s.clock.Now()
	err := s.db.Update(ctx, func(tx *outbox.Tx) error {
		if err := tx.CompleteWork(ctx, w); err != nil {
			return err
		}
		sub, pay, ok, err := s.duePayment(ctx, tx, w.ID)
		if err != nil || !ok {
			return err
		}
		if at := pay.ChargeAt(sub.Location()); now.Before(at) {
			// Its due date was moved later since the item was queued.
			return tx.RescheduleWork(ctx, payment.WorkSubscriptionPayment, pay.ID, at)
		}
		if pay.TerminateWithStatus != "" {
			if pay.TerminateWithStatus == payment.SubscriptionSuspended && pay.Cycle >= 0 {
				// The cycle the suspension took is not charged, even if
				// the subscription is resumed on its day.
				pay.Cycle++
				pay.DueDate, pay.UpdatedOn = sub.PaymentSchedule().Due(pay.Cycle), now
				if err := tx.UpdateScheduledPayment(ctx, pay); err != nil {
					return err
				}
			}
			return s.endSubscription(ctx, tx, sub, pay.TerminateWithStatus, now)
		}
		ch := s.subscriptionCharge(sub, pay, now)
		if sub.PaymentsMade > 0 {
			// The shopper is not there to authenticate a payment the
			// merchant starts: it is exempt from 3-D Secure, as card
			// networks allow for the payments that follow a first one.
			ch.ThreeDS.Mode = "skip"
		} else {
			// A first payment (a later start, or a first charge that
			// failed) is not exempt: the shopper's authentication of the
			// token, or the subscription's 3-D Secure, has to carry it.
			ch.ThreeDS = sub.ThreeDS
		}
		pay.ChargeID, pay.Attempts, pay.RetryDate, pay.RetryAt, pay.UpdatedOn = ch.ID, pay.Attempts+1, nil, nil, now
		if err := tx.UpdateScheduledPayment(ctx, pay); err != nil {
			return err
		}
		return s.charges.PlaceCharge(ctx, tx, charging.ChargeOrder{Charge: ch})
	})
	var refused *payment.Error
	if !errors.As(err, &refused) {
		return err
	}
	// The charge could not be made at all (the token deleted, no live
	// acquirer): a failed attempt, as a declined charge is.
	return s.db.Update(ctx, func(tx *outbox.Tx) error {
		if err := tx.CompleteWork(ctx, w); err != nil {
			return err
		}
		sub, pay, ok, err := s.duePayment(ctx, tx, w.ID)
		if err != nil || !ok {
			return err
		}
		pay.Attempts++
		return s.paymentFailed(ctx, tx, sub, pay, now)
	})
}

// duePayment reads a payment whose item runs and its subscription, and
// reports whether the payment is still to be charged: the one its
// subscription expects next (so unpaid), no charge of it in flight, and the
// subscription neither ended nor suspended.
func (s *Service) duePayment(ctx context.Context, tx payment.Tx, id uuid.UUID) (*payment.Subscription, *payment.ScheduledPayment, bool, error) {
	pay, err := tx.ScheduledPayment(ctx, id)
	if err != nil {
		if payment.IsNotFound(err) {
			return nil, nil, false, nil
		}
		return nil, nil, false, err
	}
	sub, err := tx.Subscription(ctx, pay.SubscriptionID)
	if err != nil {
		return nil, nil, false, err
	}
	// Once paid (or withdrawn by a cancel), a payment is no longer the one
	// its subscription expects.
	if sub.NextPaymentID != pay.ID || sub.Status.Ended() || sub.Status == payment.SubscriptionSuspended {
		return sub, pay, false, nil
	}
	if pay.ChargeID != uuid.Nil {
		ch, err := tx.Charge(ctx, pay.ChargeID)
		if err != nil {
			return nil, nil, false, err
		}
		if !ch.Status.Final() {
			return sub, pay, false, nil
		}
	}
	return sub, pay, true, nil
}

// subscriptionChargeEnded carries a subscription on when a charge of one
// of its payments ends (authorised counts as paid: a first charge that
// was only to be authorised). It runs in the transaction that records the
// charge's end.
func (s *Service) subscriptionChargeEnded(ctx context.Context, tx *outbox.Tx, ch *payment.Charge) error {
	pay, err := tx.ScheduledPayment(ctx, ch.PaymentID)
	if err != nil {
		return err
	}
	if pay.ChargeID != ch.ID || pay.IsPaid {
		return nil
	}
	sub, err := tx.Subscription(ctx, pay.SubscriptionID)
	if err != nil {
		return err
	}
	now := s.clock.Now()
	if ch.Status == payment.ChargeSuccessful || ch.Status == payment.ChargeAuthorized {
		return s.paymentPaid(ctx, tx, sub, pay, now)
	}
	return s.paymentFailed(ctx, tx, sub, pay, now)
}

// paymentPaid records a payment as paid and makes the next one, or
// completes the subscription when its plan ends with it.
func (s *Service) paymentPaid(ctx context.Context, tx *outbox.Tx, sub *payment.Subscription, pay *payment.ScheduledPayment, now time.Time) error {
	today := payment.DateOf(now, sub.Location())
	pay.IsPaid, pay.SuccessfulPaymentDate, pay.RetryDate, pay.RetryAt, pay.UpdatedOn = true, &today, nil, nil, now
	if err := tx.UpdateScheduledPayment(ctx, pay); err != nil {
		return err
	}
	sub.PaymentsMade++
	sub.AmountPaid += pay.Amount
	sub.UpdatedOn = now
	if sub.Status.Ended() || sub.NextPaymentID != pay.ID {
		// Canceled while the charge was under way: it is counted, and
		// nothing more is due.
		return tx.UpdateSubscription(ctx, sub)
	}
	completed := pay.IsLastPayment
	if completed {
		sub.Status = payment.SubscriptionCompleted
	} else {
		next := s.nextPayment(sub, pay, now)
		if err := tx.CreateScheduledPayment(ctx, next); err != nil {
			return err
		}
		if err := tx.RescheduleWork(ctx, payment.WorkSubscriptionPayment, next.ID, next.ChargeAt(sub.Location())); err != nil {
			return err
		}
		sub.NextPaymentID = next.ID
		if sub.Status == payment.SubscriptionUnverified || sub.Status == payment.SubscriptionUnpaid {
			sub.Status = payment.SubscriptionCurrent
		}
	}
	if err := tx.UpdateSubscription(ctx, sub); err != nil {
		return err
	}
	if pay.Amount > 0 {
		if err := s.announceSubscription(ctx, tx, payment.EventSubscriptionPayment, sub); err != nil {
			return err
		}
	}
	if completed {
		return s.announceSubscription(ctx, tx, payment.EventSubscriptionCompleted, sub)
	}
	return nil
}

// nextPayment is the payment that follows prev on the schedule.
func (s *Service) nextPayment(sub *payment.Subscription, prev *payment.ScheduledPayment, now time.Time) *payment.ScheduledPayment {
	cycle := prev.Cycle + 1
	amount, last := payment.PaymentTerms(sub.Amount, sub.InitialAmount, sub.Plan, sub.PaymentsMade, sub.AmountPaid)
	return &payment.ScheduledPayment{
		ID: payment.NewID(), SubscriptionID: sub.ID, StoreID: sub.StoreID, MerchantID: sub.MerchantID, Mode: sub.Mode,
		Cycle: cycle, DueDate: sub.PaymentSchedule().Due(cycle), ZoneID: sub.Schedule.ZoneID,
		Amount: amount, Currency: sub.Currency, IsLastPayment: last, CreatedOn: now, UpdatedOn: now,
	}
}

// paymentFailed records a failed attempt at a payment: the subscription
// is unpaid, and the payment is tried again after its retry interval, up
// to maxPaymentRetries times.
func (s *Service) paymentFailed(ctx context.Context, tx *outbox.Tx, sub *payment.Subscription, pay *payment.ScheduledPayment, now time.Time) error {
	if sub.Status.Ended() || sub.NextPaymentID != pay.ID {
		return nil
	}
	interval := pay.RetryInterval
	if interval == "" {
		interval = sub.Schedule.RetryInterval
	}
	pay.RetryDate, pay.RetryAt, pay.UpdatedOn = nil, nil, now
	if d, ok := payment.ParseRetryInterval(interval); ok && pay.Attempts <= maxPaymentRetries {
		at := now.Add(d)
		day := payment.DateOf(at, sub.Location())
		pay.RetryAt, pay.RetryDate = &at, &day
		if err := tx.RescheduleWork(ctx, payment.WorkSubscriptionPayment, pay.ID, at); err != nil {
			return err
		}
	}
	if err := tx.UpdateScheduledPayment(ctx, pay); err != nil {
		return err
	}
	if sub.Status != payment.SubscriptionSuspended {
		sub.Status = payment.SubscriptionUnpaid
	}
	sub.UpdatedOn = now
	if err := tx.UpdateSubscription(ctx, sub); err != nil {
		return err
	}
	return s.announceSubscription(ctx, tx, payment.EventSubscriptionFailure, sub)
}

// endSubscription suspends or cancels a subscription.
func (s *Service) endSubscription(ctx context.Context, tx *outbox.Tx, sub *payment.Subscription, status payment.SubscriptionStatus, now time.Time) error {
	if sub.NextPaymentID != uuid.Nil {
		pay, err := tx.ScheduledPayment(ctx, sub.NextPaymentID)
		if err != nil {
			return err
		}
		if pay.TerminateWithStatus != "" {
			pay.TerminateWithStatus, pay.UpdatedOn = "", now
			if err := tx.UpdateScheduledPayment(ctx, pay); err != nil {
				return err
			}
		}
	}
	sub.Status, sub.UpdatedOn = status, now
	if err := tx.UpdateSubscription(ctx, sub); err != nil {
		return err
	}
	name := payment.EventSubscriptionSuspended
	if status == payment.SubscriptionCanceled {
		name = payment.EventSubscriptionCanceled
	}
	return s.announceSubscription(ctx, tx, name, sub)
}

// announceSubscription records a subscription's event, its data the
// subscription as the API shows it now (with its next payment), and wakes
// its long polls once committed. Subscription events are named by the
// rules that cause them (a payment is not a change of status), so each
// rule announces its own.
func (s *Service) announceSubscription(ctx context.Context, tx *outbox.Tx, name string, sub *payment.Subscription) error {
	if err := loadNextPayment(ctx, tx, sub); err != nil {
		return err
	}
	tx.WakePolls(sub.ID)
	return tx.Announce(ctx, name, sub)
}
