package subscriptions

import (
	"context"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/payment/outbox"
)

// changeableSubscription reads a subscription the caller may change: its
// secret, and the subscription not ended.
func (s *Service) changeableSubscription(ctx context.Context, tx payment.Tx, c *payment.Caller, storeID, id uuid.UUID) (*payment.Subscription, error) {
	if err := c.RequireSecret(); err != nil {
		return nil, err
	}
	sub, err := s.visibleSubscription(ctx, tx, c, storeID, id)
	if err != nil {
		return nil, err
	}
	switch sub.Status {
	case payment.SubscriptionCanceled:
		return nil, payment.Errorf(payment.CodeCannotChangeCanceled, "the subscription is canceled")
	case payment.SubscriptionCompleted:
		return nil, payment.Errorf(payment.CodeSubscriptionEnded, "the subscription has completed")
	}
	return sub, nil
}

// terminationMode is the mode a cancel or suspension asked for, or the
// subscription's own.
func terminationMode(asked string, sub *payment.Subscription) (string, error) {
	switch asked {
	case "":
		return sub.Schedule.TerminationMode, nil
	case payment.TerminateImmediately, payment.TerminateNextPayment:
		return asked, nil
	}
	return "", payment.Invalid("schedule_settings.termination_mode", payment.ReasonInvalidFormat)
}

// terminate ends (canceled) or pauses (suspended) a subscription at once,
// or on its next payment's due date instead of charging it.
func (s *Service) terminate(ctx context.Context, tx *outbox.Tx, sub *payment.Subscription, status payment.SubscriptionStatus, mode string) error {
	now := s.clock.Now()
	if mode == payment.TerminateNextPayment && sub.NextPayment != nil && sub.Status != payment.SubscriptionSuspended {
		pay := sub.NextPayment
		pay.TerminateWithStatus, pay.UpdatedOn = status, now
		if err := tx.UpdateScheduledPayment(ctx, pay); err != nil {
			return err
		}
		sub.UpdatedOn = now
		return tx.UpdateSubscription(ctx, sub)
	}
	return s.endSubscription(ctx, tx, sub, status, now)
}

// CancelSubscription cancels a subscription (DELETE): at once, or on its
// next payment's due date (termination_mode on_next_payment). A charge
// already under way is not withdrawn.
func (s *Service) CancelSubscription(ctx context.Context, c *payment.Caller, storeID, id uuid.UUID, mode string) error {
	return s.db.Update(ctx, func(tx *outbox.Tx) error {
		sub, err := s.changeableSubscription(ctx, tx, c, storeID, id)
		if err != nil {
			return err
		}
		if mode, err = terminationMode(mode, sub); err != nil {
			return err
		}
		return s.terminate(ctx, tx, sub, payment.SubscriptionCanceled, mode)
	})
}

// SuspendSubscription pauses a current or unpaid subscription: nothing is
// charged until it is unsuspended.
func (s *Service) SuspendSubscription(ctx context.Context, c *payment.Caller, storeID, id uuid.UUID, mode string) (*payment.Subscription, error) {
	var sub *payment.Subscription
	err := s.db.Update(ctx, func(tx *outbox.Tx) error {
		var err error
		if sub, err = s.changeableSubscription(ctx, tx, c, storeID, id); err != nil {
			return err
		}
		if sub.Status != payment.SubscriptionCurrent && sub.Status != payment.SubscriptionUnpaid {
			return payment.Invalid("status", "INVALID_STATUS_TRANSITION")
		}
		if mode, err = terminationMode(mode, sub); err != nil {
			return err
		}
		if err := s.terminate(ctx, tx, sub, payment.SubscriptionSuspended, mode); err != nil {
			return err
		}
		return loadNextPayment(ctx, tx, sub)
	})
	return sub, err
}

// UnsuspendSubscription resumes a suspended subscription (or withdraws a
// suspension set for its next payment). Cycles that fell due while it was
// suspended are not charged: its next payment moves to the first due date
// from today. A payment that had failed before is tried again at once,
// and the subscription is unpaid until it succeeds.
func (s *Service) UnsuspendSubscription(ctx context.Context, c *payment.Caller, storeID, id uuid.UUID, mode string) (*payment.Subscription, error) {
	var sub *payment.Subscription
	err := s.db.Update(ctx, func(tx *outbox.Tx) error {
		var err error
		if sub, err = s.changeableSubscription(ctx, tx, c, storeID, id); err != nil {
			return err
		}
		if mode != "" {
			if sub.Schedule.TerminationMode, err = terminationMode(mode, sub); err != nil {
				return err
			}
		}
		if err := s.resume(ctx, tx, sub); err != nil {
			return err
		}
		return loadNextPayment(ctx, tx, sub)
	})
	if err == nil {
		s.db.WakeWorker()
	}
	return sub, err
}

func (s *Service) resume(ctx context.Context, tx *outbox.Tx, sub *payment.Subscription) error {
	now := s.clock.Now()
	pay := sub.NextPayment
	switch {
	case sub.Status != payment.SubscriptionSuspended && pay != nil && pay.TerminateWithStatus == payment.SubscriptionSuspended:
		pay.TerminateWithStatus, pay.UpdatedOn = "", now
		if err := tx.UpdateScheduledPayment(ctx, pay); err != nil {
			return err
		}
	case sub.Status != payment.SubscriptionSuspended:
		return payment.Invalid("status", "INVALID_STATUS_TRANSITION")
	case pay == nil:
		sub.Status = payment.SubscriptionCurrent
	default:
		loc := sub.Location()
		if pay.Attempts > 0 {
			sub.Status = payment.SubscriptionUnpaid
			day := payment.DateOf(now, loc)
			pay.RetryAt, pay.RetryDate = &now, &day
		} else {
			sub.Status = payment.SubscriptionCurrent
			if today := payment.DateOf(now, loc); pay.DueDate.Before(today) && pay.Cycle >= 0 {
				if n, due := sub.PaymentSchedule().FirstOnOrAfter(today); n > pay.Cycle {
					pay.Cycle, pay.DueDate = n, due
				}
			}
		}
		pay.TerminateWithStatus, pay.UpdatedOn = "", now
		if err := tx.UpdateScheduledPayment(ctx, pay); err != nil {
			return err
		}
		if err := tx.RescheduleWork(ctx, payment.WorkSubscriptionPayment, pay.ID, pay.ChargeAt(loc)); err != nil {
			return err
		}
	}
	sub.UpdatedOn = now
	return tx.UpdateSubscription(ctx, sub)
}

// UpdateSubscription applies a PATCH to a subscription.
func (s *Service) UpdateSubscription(ctx context.Context, c *payment.Caller, storeID, id uuid.UUID, u payment.SubscriptionUpdate) (*payment.Subscription, error) {
	var sub *payment.Subscription
	err := s.db.Update(ctx, func(tx *outbox.Tx) error {
		var err error
		if sub, err = s.changeableSubscription(ctx, tx, c, storeID, id); err != nil {
			return err
		}
		if err := s.applySubscriptionUpdate(ctx, tx, c, sub, u); err != nil {
			return err
		}
		return loadNextPayment(ctx, tx, sub)
	})
	if err == nil {
		s.db.WakeWorker()
	}
	return sub, err
}

func (s *Service) applySubscriptionUpdate(ctx context.Context, tx *outbox.Tx, c *payment.Caller, sub *payment.Subscription, u payment.SubscriptionUpdate) error {
	var v payment.Validation
	if u.Amount != nil {
		cur, _ := payment.LookupCurrency(sub.Currency)
		switch {
		case sub.Limited():
			v.Add("amount", "NOT_UPDATABLE_FOR_LIMITED_PLAN")
		case *u.Amount < cur.MinAmount || *u.Amount > cur.MaxAmount:
			v.Add("amount", "INVALID_AMOUNT")
		}
	}
	if u.TerminationMode != nil {
		if _, err := terminationMode(*u.TerminationMode, sub); err != nil || *u.TerminationMode == "" {
			v.Add("schedule_settings.termination_mode", payment.ReasonInvalidFormat)
		}
	}
	if u.RetryInterval != nil && *u.RetryInterval != "" {
		if _, ok := payment.ParseRetryInterval(*u.RetryInterval); !ok {
			v.Add("schedule_settings.retry_interval", payment.ReasonInvalidFormat)
		}
	}
	if u.ZoneID != nil && *u.ZoneID != sub.Schedule.ZoneID {
		v.Add("schedule_settings.zone_id", "NOT_UPDATABLE")
	}
	if shown := sub.StartsOn(); u.StartOn != nil && (shown == nil || *u.StartOn != *shown) {
		v.Add("schedule_settings.start_on", "NOT_UPDATABLE")
	}
	if u.Status != nil {
		switch *u.Status {
		case payment.SubscriptionSuspended, payment.SubscriptionUnpaid, payment.SubscriptionCurrent:
		default:
			v.Add("status", payment.ReasonInvalidFormat)
		}
	}
	if u.Descriptor != nil {
		nc := payment.NewCharge{Descriptor: *u.Descriptor}
		if err := nc.Check(c, s.publicOrigin); err != nil {
			return err
		}
	}
	if err := v.Err(); err != nil {
		return err
	}
	now := s.clock.Now()
	if u.Metadata != nil {
		m, err := sub.Metadata.Merge(u.Metadata)
		if err != nil {
			return err
		}
		sub.Metadata = m
	}
	if u.Amount != nil {
		sub.Amount = *u.Amount
	}
	if u.TerminationMode != nil {
		sub.Schedule.TerminationMode = *u.TerminationMode
	}
	if u.RetryInterval != nil {
		sub.Schedule.RetryInterval = *u.RetryInterval
	}
	if u.PreserveEndOfMonth != nil {
		sub.Schedule.PreserveEndOfMonth = *u.PreserveEndOfMonth
	}
	if u.Descriptor != nil {
		sub.Descriptor = *u.Descriptor
	}
	if u.OnlyDirectCurrency != nil {
		sub.OnlyDirectCurrency = *u.OnlyDirectCurrency
	}
	sub.UpdatedOn = now
	if err := tx.UpdateSubscription(ctx, sub); err != nil {
		return err
	}
	if u.NextPayment != nil {
		if sub.NextPayment == nil {
			return payment.Invalid("next_payment", "NO_NEXT_PAYMENT")
		}
		if err := s.applyPaymentUpdate(ctx, tx, sub, sub.NextPayment, *u.NextPayment); err != nil {
			return err
		}
	}
	if u.TokenID != nil {
		if err := s.changeToken(ctx, tx, c, sub, *u.TokenID); err != nil {
			return err
		}
	}
	if u.Status != nil {
		switch {
		case *u.Status == payment.SubscriptionSuspended && sub.Status != payment.SubscriptionSuspended:
			if sub.Status != payment.SubscriptionCurrent && sub.Status != payment.SubscriptionUnpaid {
				return payment.Invalid("status", "INVALID_STATUS_TRANSITION")
			}
			return s.terminate(ctx, tx, sub, payment.SubscriptionSuspended, payment.TerminateImmediately)
		case *u.Status != payment.SubscriptionSuspended && sub.Status == payment.SubscriptionSuspended:
			return s.resume(ctx, tx, sub)
		}
	}
	return nil
}

// ChangeSubscriptionToken replaces the token a subscription charges
// (PATCH …/token). An unpaid subscription's failed payment is tried again
// at once on the new token.
func (s *Service) ChangeSubscriptionToken(ctx context.Context, c *payment.Caller, storeID, id, tokenID uuid.UUID) (*payment.Subscription, error) {
	if tokenID == uuid.Nil {
		return nil, payment.Invalid("transaction_token_id", payment.ReasonRequired)
	}
	var sub *payment.Subscription
	err := s.db.Update(ctx, func(tx *outbox.Tx) error {
		var err error
		if sub, err = s.changeableSubscription(ctx, tx, c, storeID, id); err != nil {
			return err
		}
		if err := s.changeToken(ctx, tx, c, sub, tokenID); err != nil {
			return err
		}
		return loadNextPayment(ctx, tx, sub)
	})
	if err == nil {
		s.db.WakeWorker()
	}
	return sub, err
}

func (s *Service) changeToken(ctx context.Context, tx *outbox.Tx, c *payment.Caller, sub *payment.Subscription, tokenID uuid.UUID) error {
	if tokenID == sub.TokenID {
		return nil
	}
	tok, err := tx.Token(ctx, tokenID)
	if err != nil {
		if payment.IsNotFound(err) {
			return payment.Invalid("transaction_token_id", "NOT_FOUND")
		}
		return err
	}
	now := s.clock.Now()
	if err := subscriptionToken(tok, c, sub.StoreID, now, false); err != nil {
		return err
	}
	if tok.Type == payment.SubscriptionToken && tok.Used {
		return payment.Errorf(payment.CodeTransactionAlreadyDone, "this subscription token already has its subscription")
	}
	// Marking the token used is no change the merchant made: no event.
	tok.Used, tok.UpdatedOn = true, now
	if err := tx.UpdateToken(ctx, tok); err != nil {
		return err
	}
	sub.TokenID, sub.Email, sub.CardLastFour, sub.UpdatedOn = tok.ID, tok.Email, tok.Card.LastFour, now
	if err := tx.UpdateSubscription(ctx, sub); err != nil {
		return err
	}
	pay := sub.NextPayment
	if sub.Status != payment.SubscriptionUnpaid || pay == nil || pay.Attempts == 0 {
		return nil
	}
	// The failed payment, on the new card, now.
	day := payment.DateOf(now, sub.Location())
	pay.RetryAt, pay.RetryDate, pay.UpdatedOn = &now, &day, now
	if err := tx.UpdateScheduledPayment(ctx, pay); err != nil {
		return err
	}
	return tx.RescheduleWork(ctx, payment.WorkSubscriptionPayment, pay.ID, now)
}

func (s *Service) applyPaymentUpdate(ctx context.Context, tx *outbox.Tx, sub *payment.Subscription, pay *payment.ScheduledPayment, u payment.PaymentUpdate) error {
	loc := sub.Location()
	now := s.clock.Now()
	var v payment.Validation
	switch {
	case pay.IsPaid:
		return payment.Invalid("is_paid", "PAYMENT_ALREADY_PAID")
	case pay.ID != sub.NextPaymentID:
		return payment.Invalid("id", "NOT_THE_NEXT_PAYMENT")
	}
	if u.DueDate != nil && u.DueDate.Before(payment.DateOf(now, loc)) {
		v.Add("due_date", "DATE_IN_THE_PAST")
	}
	if t := u.TerminateWithStatus; t != nil && *t != "" && *t != payment.SubscriptionSuspended && *t != payment.SubscriptionCanceled {
		v.Add("terminate_with_status", payment.ReasonInvalidFormat)
	}
	if u.RetryInterval != nil && *u.RetryInterval != "" {
		if _, ok := payment.ParseRetryInterval(*u.RetryInterval); !ok {
			v.Add("retry_interval", payment.ReasonInvalidFormat)
		}
	}
	if u.Amount != nil {
		cur, _ := payment.LookupCurrency(sub.Currency)
		switch {
		case sub.Limited():
			v.Add("next_payment.amount", "NOT_UPDATABLE_FOR_LIMITED_PLAN")
		case *u.Amount < cur.MinAmount || *u.Amount > cur.MaxAmount:
			v.Add("next_payment.amount", "INVALID_AMOUNT")
		}
	}
	if err := v.Err(); err != nil {
		return err
	}
	inFlight := false
	if pay.ChargeID != uuid.Nil {
		ch, err := tx.Charge(ctx, pay.ChargeID)
		if err != nil {
			return err
		}
		inFlight = !ch.Status.Final()
	}
	if inFlight && (u.IsPaid != nil && *u.IsPaid || u.Amount != nil || u.DueDate != nil) {
		return payment.Invalid("id", "PAYMENT_BEING_CHARGED")
	}
	if u.DueDate != nil {
		pay.DueDate, pay.RetryAt, pay.RetryDate = *u.DueDate, nil, nil
	}
	if u.TerminateWithStatus != nil {
		pay.TerminateWithStatus = *u.TerminateWithStatus
	}
	if u.RetryInterval != nil {
		pay.RetryInterval = *u.RetryInterval
	}
	if u.Amount != nil {
		pay.Amount = *u.Amount
	}
	pay.UpdatedOn = now
	if u.IsPaid != nil && *u.IsPaid {
		return s.paymentPaid(ctx, tx, sub, pay, now)
	}
	if err := tx.UpdateScheduledPayment(ctx, pay); err != nil {
		return err
	}
	if u.DueDate != nil && !inFlight {
		return tx.RescheduleWork(ctx, payment.WorkSubscriptionPayment, pay.ID, pay.ChargeAt(loc))
	}
	return nil
}

// subscriptionPayment reads one payment of a subscription the caller sees.
func (s *Service) subscriptionPayment(ctx context.Context, tx payment.Tx, sub *payment.Subscription, paymentID uuid.UUID) (*payment.ScheduledPayment, error) {
	pay, err := tx.ScheduledPayment(ctx, paymentID)
	if err != nil {
		return nil, err
	}
	if pay.SubscriptionID != sub.ID {
		return nil, payment.NotFound("scheduled payment")
	}
	return pay, nil
}

// SubscriptionPayment returns one scheduled payment.
func (s *Service) SubscriptionPayment(ctx context.Context, c *payment.Caller, storeID, id, paymentID uuid.UUID) (*payment.ScheduledPayment, error) {
	var pay *payment.ScheduledPayment
	err := s.db.View(ctx, func(tx payment.Tx) error {
		sub, err := s.visibleSubscription(ctx, tx, c, storeID, id)
		if err != nil {
			return err
		}
		pay, err = s.subscriptionPayment(ctx, tx, sub, paymentID)
		return err
	})
	return pay, err
}

// UpdateSubscriptionPayment applies a PATCH to the subscription's next
// payment (a paid one cannot change).
func (s *Service) UpdateSubscriptionPayment(ctx context.Context, c *payment.Caller, storeID, id, paymentID uuid.UUID, u payment.PaymentUpdate) (*payment.ScheduledPayment, error) {
	if u.Amount != nil {
		return nil, payment.Invalid("amount", "NOT_UPDATABLE")
	}
	var pay *payment.ScheduledPayment
	err := s.db.Update(ctx, func(tx *outbox.Tx) error {
		sub, err := s.changeableSubscription(ctx, tx, c, storeID, id)
		if err != nil {
			return err
		}
		if pay, err = s.subscriptionPayment(ctx, tx, sub, paymentID); err != nil {
			return err
		}
		return s.applyPaymentUpdate(ctx, tx, sub, pay, u)
	})
	if err == nil {
		s.db.WakeWorker()
	}
	return pay, err
}

// SubscriptionPayments lists a subscription's scheduled payments.
func (s *Service) SubscriptionPayments(ctx context.Context, c *payment.Caller, storeID, id uuid.UUID, p payment.ListParams) (payment.Page[*payment.ScheduledPayment], error) {
	var page payment.Page[*payment.ScheduledPayment]
	err := s.db.View(ctx, func(tx payment.Tx) error {
		sub, err := s.visibleSubscription(ctx, tx, c, storeID, id)
		if err != nil {
			return err
		}
		page, err = tx.ListScheduledPayments(ctx, sub.ID, p)
		return err
	})
	return page, err
}

// SubscriptionCharges lists the charges of a subscription, or of one of
// its payments (paymentID not uuid.Nil). A browser may read those of a
// subscription it made moments ago: the widget waits on the first charge.
func (s *Service) SubscriptionCharges(ctx context.Context, c *payment.Caller, storeID, id, paymentID uuid.UUID, p payment.ListParams) (payment.Page[*payment.Charge], error) {
	var page payment.Page[*payment.Charge]
	err := s.db.View(ctx, func(tx payment.Tx) error {
		sub, err := s.visibleSubscription(ctx, tx, c, storeID, id)
		if err != nil {
			return err
		}
		f := payment.ChargeFilter{MerchantID: sub.MerchantID, StoreID: sub.StoreID, Mode: sub.Mode, SubscriptionID: sub.ID}
		if paymentID != uuid.Nil {
			if _, err := s.subscriptionPayment(ctx, tx, sub, paymentID); err != nil {
				return err
			}
			f.PaymentID = paymentID
		}
		page, err = tx.ListCharges(ctx, f, p)
		return err
	})
	return page, err
}

// LatestSubscriptionCharge is a subscription's newest charge.
func (s *Service) LatestSubscriptionCharge(ctx context.Context, c *payment.Caller, storeID, id uuid.UUID) (*payment.Charge, error) {
	page, err := s.SubscriptionCharges(ctx, c, storeID, id, uuid.Nil, payment.ListParams{Limit: 1, Direction: payment.Desc})
	if err != nil {
		return nil, err
	}
	if len(page.Items) == 0 {
		return nil, payment.NotFound("charge")
	}
	return page.Items[0], nil
}

// simulatedUnlimited is how many payments a simulation of a subscription
// without a plan lists: a year of monthly ones.
const simulatedUnlimited = 12

// SimulatePlan lists the payments a subscription on these terms would
// make, from today (POST …/subscriptions/simulate_plan): every payment of
// a limited plan, the first twelve of an unlimited one.
func (s *Service) SimulatePlan(ctx context.Context, c *payment.Caller, storeID uuid.UUID, paymentType string, p payment.NewSubscription) ([]*payment.ScheduledPayment, error) {
	if storeID != uuid.Nil {
		if err := s.db.View(ctx, func(tx payment.Tx) error {
			_, err := payment.VisibleStore(ctx, tx, c, storeID)
			return err
		}); err != nil {
			return nil, err
		}
	}
	if paymentType != "" && !s.charges.SubscribedWith(paymentType) {
		return nil, payment.Errorf(payment.CodeNonSubscriptionPayment, "subscriptions are charged to cards")
	}
	if p.InstallmentPlan != nil {
		if p.Plan != nil {
			return nil, payment.Invalid("installment_plan", "CANNOT_SET_BOTH")
		}
		p.Plan = p.InstallmentPlan
	}
	terms, err := checkTerms(&p, s.today)
	if err != nil {
		return nil, err
	}
	now := s.clock.Now()
	sub := &payment.Subscription{
		Amount: p.Amount, Currency: terms.currency.Code, InitialAmount: p.InitialAmount,
		Period: p.Period, CyclicalPeriod: p.CyclicalPeriod, Schedule: terms.schedule, Plan: p.Plan,
	}
	pay, _ := firstPayment(sub, terms.loc, now)
	out := []*payment.ScheduledPayment{pay}
	for !pay.IsLastPayment && (sub.Limited() || len(out) < simulatedUnlimited) {
		sub.PaymentsMade++
		sub.AmountPaid += pay.Amount
		pay = s.nextPayment(sub, pay, now)
		out = append(out, pay)
	}
	for _, p := range out {
		p.ID, p.RetryInterval = uuid.Nil, terms.schedule.RetryInterval
	}
	return out, nil
}
