// Package subscriptions holds the recurring payments: a plan on a
// recurring token, its scheduled payments and their retries, and what a
// merchant may change of it. Each payment is charged by the payment rules
// (charging.Service.PlaceCharge) in the transaction that makes it, and a
// charge's end carries the subscription on in the transaction that records
// it (charging.Service.FollowSubscriptionCharges).
package subscriptions

import (
	"context"
	"maps"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/payment/charging"
	"github.com/kessai/kessai/server/payment/outbox"
	"github.com/kessai/kessai/server/payment/workqueue"
)

// maxPaymentRetries is how often a failed payment is retried on its
// interval before it is left for the merchant (a new token, a payment
// marked paid, a cancellation).
const maxPaymentRetries = 5

// subscriptionTerms are a subscription's terms once checked.
type subscriptionTerms struct {
	currency payment.Currency
	cycle    payment.Cycle
	loc      *time.Location
	schedule payment.ScheduleSettings
}

// checkTerms validates the terms a subscription and a simulation share.
func checkTerms(p *payment.NewSubscription, today func(*time.Location) payment.Date) (subscriptionTerms, error) {
	var t subscriptionTerms
	if cur, ok := payment.LookupCurrency(p.Currency); ok && p.Amount > cur.MaxAmount {
		return t, payment.Errorf(payment.CodeChargeAmountTooHigh, "amount is above the maximum for "+cur.Code)
	}
	cur, err := payment.CheckAmount(p.Amount, p.Currency, "amount")
	if err != nil {
		return t, err
	}
	if p.Amount < cur.MinAmount {
		return t, payment.Errorf(payment.CodeChargeAmountTooLow, "amount is below the minimum for "+cur.Code)
	}
	t.currency = cur
	var v payment.Validation
	if i := p.InitialAmount; i != nil {
		switch {
		case *i < 0:
			v.Add("initial_amount", "INVALID_AMOUNT")
		case *i > cur.MaxAmount:
			v.Add("initial_amount", payment.ReasonNumberMax)
		case *i > 0 && *i < cur.MinAmount:
			return t, payment.Errorf(payment.CodeChargeAmountTooLow, "initial_amount is below the minimum for "+cur.Code)
		}
	}
	switch {
	case p.Period != "" && p.CyclicalPeriod != "":
		v.Add("cyclical_period", "CANNOT_SET_BOTH")
	case p.Period != "":
		c, ok := payment.PeriodCycle(p.Period)
		if !ok {
			v.Add("period", payment.ReasonInvalidFormat)
		}
		t.cycle = c
	case p.CyclicalPeriod != "":
		c, ok := payment.ParseCycle(p.CyclicalPeriod)
		if !ok {
			v.Add("cyclical_period", payment.ReasonInvalidFormat)
		}
		t.cycle = c
	default:
		v.Add("period", payment.ReasonRequired)
	}
	sch := p.Schedule
	if sch.ZoneID == "" {
		sch.ZoneID = payment.DefaultSubscriptionTZ
	}
	t.loc = loadZone(sch.ZoneID)
	if t.loc == nil {
		v.Add("schedule_settings.zone_id", "INVALID_TIMEZONE")
	}
	if sch.RetryInterval != "" {
		if _, ok := payment.ParseRetryInterval(sch.RetryInterval); !ok {
			v.Add("schedule_settings.retry_interval", payment.ReasonInvalidFormat)
		}
	}
	switch sch.TerminationMode {
	case "":
		sch.TerminationMode = payment.TerminateImmediately
	case payment.TerminateImmediately, payment.TerminateNextPayment:
	default:
		v.Add("schedule_settings.termination_mode", payment.ReasonInvalidFormat)
	}
	if sch.StartOn != nil && t.loc != nil && sch.StartOn.Before(today(t.loc)) {
		v.Add("schedule_settings.start_on", "DATE_IN_THE_PAST")
	}
	if p.Plan != nil {
		checkPlan(&v, p)
	}
	if err := v.Err(); err != nil {
		return t, err
	}
	t.schedule = sch
	return t, nil
}

// loadZone loads an IANA zone by name; nil when there is none ("Local"
// is this machine's, not a zone a merchant can mean).
func loadZone(name string) *time.Location {
	if len(name) > 64 || name == "Local" || strings.ContainsAny(name, "\\\x00") {
		return nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil
	}
	return loc
}

func checkPlan(v *payment.Validation, p *payment.NewSubscription) {
	pl := p.Plan
	switch pl.PlanType {
	case payment.PlanFixedCycles:
		if pl.FixedCycles < payment.MinPlanCycles || pl.FixedCycles > payment.MaxPlanCycles {
			v.Add("subscription_plan.fixed_cycles", "INVALID_CYCLES_COUNT")
		}
		pl.FixedCycleAmount = 0
	case payment.PlanFixedCycleAmount:
		first := p.Amount
		if p.InitialAmount != nil {
			first = *p.InitialAmount
		}
		// At least two payments, at most the plan's bound: the total also
		// stays far from int64's limits.
		if pl.FixedCycleAmount <= first || pl.FixedCycleAmount > first+p.Amount*(payment.MaxPlanCycles-1) {
			v.Add("subscription_plan.fixed_cycle_amount", "INVALID_AMOUNT")
		}
		pl.FixedCycles = 0
	case "":
		v.Add("subscription_plan.plan_type", payment.ReasonRequired)
	default:
		v.Add("subscription_plan.plan_type", payment.ReasonInvalidFormat)
	}
}

// Service holds the recurring payments: a plan on a recurring token,
// its scheduled payments, each charged by the payment rules when due, and
// what the merchant may change of it.
type Service struct {
	db      *outbox.DB
	charges *charging.Service
	clock   payment.Clock
	// publicOrigin is the gateway's own origin, for the redirects of a
	// first charge (NewCharge.Check).
	publicOrigin string
}

// New returns the subscriptions over db, charged through
// charges: it follows their charges' ends (FollowSubscriptionCharges) and
// registers the scheduled payments with work.
func New(db *outbox.DB, work *workqueue.Queue, charges *charging.Service, clock payment.Clock, cfg payment.Config) *Service {
	s := &Service{db: db, charges: charges, clock: clock, publicOrigin: strings.TrimRight(cfg.PublicOrigin, "/")}
	charges.FollowSubscriptionCharges(s.subscriptionChargeEnded)
	work.Handle(payment.WorkSubscriptionPayment, workqueue.Handler{Run: s.chargePayment})
	return s
}

// today is the day it is now in loc, by the service's clock.
func (s *Service) today(loc *time.Location) payment.Date {
	return payment.DateOf(s.clock.Now(), loc)
}

// firstPayment sets a new subscription's anchor and returns its first payment
// (not yet stored), and whether that payment is charged at once.
func firstPayment(sub *payment.Subscription, loc *time.Location, now time.Time) (*payment.ScheduledPayment, bool) {
	today := payment.DateOf(now, loc)
	cyc := sub.Cycle()
	switch {
	case sub.Schedule.StartOn != nil:
		sub.Anchor = *sub.Schedule.StartOn
	case sub.InitialAmount != nil:
		sub.Anchor = payment.Schedule{Anchor: today, Cycle: cyc}.Due(1)
	default:
		sub.Anchor = today
	}
	amount, last := payment.PaymentTerms(sub.Amount, sub.InitialAmount, sub.Plan, 0, 0)
	p := &payment.ScheduledPayment{
		ID: payment.NewID(), SubscriptionID: sub.ID, StoreID: sub.StoreID, MerchantID: sub.MerchantID, Mode: sub.Mode,
		ZoneID: sub.Schedule.ZoneID, Amount: amount, Currency: sub.Currency, IsLastPayment: last,
		CreatedOn: now, UpdatedOn: now,
	}
	if sub.InitialAmount != nil {
		p.Cycle, p.DueDate = -1, today
	} else {
		p.Cycle, p.DueDate = 0, sub.Anchor
	}
	return p, p.DueDate == today && amount > 0
}

// subscriptionToken checks the token a subscription is to charge.
func subscriptionToken(tok *payment.TransactionToken, c *payment.Caller, storeID uuid.UUID, now time.Time, first bool) error {
	switch {
	case tok.MerchantID != c.MerchantID():
		return payment.NotFound("transaction token")
	case tok.StoreID != storeID:
		return payment.Errorf(payment.CodeTokenForWrongStore, "the transaction token belongs to another store")
	case tok.Mode != c.Mode():
		return payment.Errorf(payment.CodeProcessingModeMismatch, "the transaction token was made in another mode")
	case !tok.Active:
		return payment.Errorf(payment.CodeTokenExpired, "the transaction token was deleted")
	case first && tok.Type != payment.SubscriptionToken,
		!first && tok.Type != payment.SubscriptionToken && tok.Type != payment.Recurring:
		return payment.Errorf(payment.CodeNotSubscriptionToken, "subscriptions need a subscription token")
	case first && tok.Used:
		return payment.Errorf(payment.CodeTransactionAlreadyDone, "this subscription token already has its subscription")
	case !c.WithSecret() && !(first && payment.BrowserMayCharge(tok, now)):
		return payment.Errorf(payment.CodeInvalidPermissions, "this operation requires the app token's secret")
	}
	return nil
}

// CreateSubscription makes a subscription on a subscription token. Its
// first payment, when due now, is charged in the same transaction, as
// POST /charges would (with the subscription's 3-D Secure); the scheduler
// charges the rest.
func (s *Service) CreateSubscription(ctx context.Context, c *payment.Caller, p payment.NewSubscription) (*payment.Subscription, error) {
	storeID, err := payment.CallerStore(c)
	if err != nil {
		return nil, err
	}
	if p.TokenID == uuid.Nil {
		return nil, payment.Invalid("transaction_token_id", payment.ReasonRequired)
	}
	if p.InstallmentPlan != nil {
		return nil, payment.Errorf(payment.CodeInstallmentsNotEnabled, "the acquirer offers no card installments")
	}
	terms, err := checkTerms(&p, s.today)
	if err != nil {
		return nil, err
	}
	if err := p.Charge.Check(c, s.publicOrigin); err != nil {
		return nil, err
	}
	if p.FirstChargeCaptureAfter != "" {
		d, ok := payment.ParseISODuration(p.FirstChargeCaptureAfter)
		if !ok || !p.FirstChargeAuthorizationOnly || d != (payment.IsoDuration{Days: d.Days}) || d.Days < 1 || d.Days > 6 {
			return nil, payment.Invalid("first_charge_capture_after", payment.ReasonInvalidFormat)
		}
	}
	now := s.clock.Now()
	sub := &payment.Subscription{
		ID: payment.NewID(), StoreID: storeID, MerchantID: c.MerchantID(), TokenID: p.TokenID, Mode: c.Mode(),
		Amount: p.Amount, Currency: terms.currency.Code, InitialAmount: p.InitialAmount,
		Period: p.Period, CyclicalPeriod: p.CyclicalPeriod, Schedule: terms.schedule, Plan: p.Plan,
		Status: payment.SubscriptionCurrent, Descriptor: p.Charge.Descriptor, OnlyDirectCurrency: p.Charge.OnlyDirectCurrency,
		FirstChargeAuthorizationOnly: p.FirstChargeAuthorizationOnly, FirstChargeCaptureAfter: p.FirstChargeCaptureAfter,
		Metadata: p.Charge.Metadata, FromBrowser: !c.WithSecret(), CreatedOn: now, UpdatedOn: now,
	}
	if p.Charge.ThreeDS != nil {
		sub.ThreeDS = payment.ThreeDSSettings{Mode: p.Charge.ThreeDS.Mode, RedirectEndpoint: p.Charge.ThreeDS.RedirectEndpoint, RedirectID: p.Charge.ThreeDS.RedirectID}
	}
	pay, chargeNow := firstPayment(sub, terms.loc, now)
	sub.NextPaymentID = pay.ID
	err = s.db.Update(ctx, func(tx *outbox.Tx) error {
		tok, err := tx.Token(ctx, p.TokenID)
		if err != nil {
			return err
		}
		if err := subscriptionToken(tok, c, storeID, now, true); err != nil {
			return err
		}
		// Its first charge takes the subscription's 3-D Secure, now or
		// when the scheduler makes it.
		if err := payment.BrowserThreeDS(ctx, tx, c, storeID, "three_ds.mode", p.Charge.ThreeDSMode()); err != nil {
			return err
		}
		// First, before the branches below: whichever way the first
		// payment goes, the subscription is what the key made.
		if err := payment.RecordEffect(ctx, tx, p.Idempotency, payment.IdempotentEffect{Kind: payment.EffectSubscription, StoreID: sub.StoreID, ID: sub.ID}); err != nil {
			return err
		}
		sub.Email, sub.CardLastFour = tok.Email, tok.Card.LastFour
		if chargeNow {
			sub.Status = payment.SubscriptionUnverified
		}
		if err := tx.CreateSubscription(ctx, sub); err != nil {
			return err
		}
		if err := tx.CreateScheduledPayment(ctx, pay); err != nil {
			return err
		}
		if err := s.announceSubscription(ctx, tx, payment.EventSubscriptionCreated, sub); err != nil {
			return err
		}
		if !chargeNow {
			// Marking the token used is no change the merchant made: no
			// event.
			tok.Used, tok.UpdatedOn = true, now
			if err := tx.UpdateToken(ctx, tok); err != nil {
				return err
			}
			if pay.Amount == 0 {
				// A free first period: paid as it starts.
				return s.paymentPaid(ctx, tx, sub, pay, now)
			}
			return tx.EnqueueWork(ctx, payment.WorkSubscriptionPayment, pay.ID, pay.ChargeAt(terms.loc))
		}
		ch := s.subscriptionCharge(sub, pay, now)
		ch.ThreeDS, ch.RedirectEndpoint, ch.IPAddress = sub.ThreeDS, p.Charge.RedirectEndpoint, p.Charge.IPAddress
		if e := p.Charge.ExternalThreeDS; e != nil && !e.Empty() {
			if err := s.charges.SealExternalThreeDS(ch, e); err != nil {
				return err
			}
		}
		if p.FirstChargeAuthorizationOnly {
			ch.Capture = false
			if d, ok := payment.ParseISODuration(p.FirstChargeCaptureAfter); ok {
				at := now.AddDate(0, 0, d.Days)
				ch.CaptureAt = &at
			}
		}
		pay.ChargeID, pay.Attempts = ch.ID, 1
		if err := tx.UpdateScheduledPayment(ctx, pay); err != nil {
			return err
		}
		return s.charges.PlaceCharge(ctx, tx, charging.ChargeOrder{Charge: ch, Caller: c})
	})
	if err != nil {
		return nil, err
	}
	s.db.WakeWorker()
	return s.withNextPayment(ctx, sub)
}

// subscriptionCharge is the charge of a payment: a charge of the
// subscription's token like any other, tied to the subscription.
func (s *Service) subscriptionCharge(sub *payment.Subscription, pay *payment.ScheduledPayment, now time.Time) *payment.Charge {
	return &payment.Charge{
		ID: payment.NewID(), StoreID: sub.StoreID, MerchantID: sub.MerchantID, TokenID: sub.TokenID,
		SubscriptionID: sub.ID, PaymentID: pay.ID, Mode: sub.Mode, RequestedAmount: pay.Amount,
		Currency: sub.Currency, Capture: true, OnlyDirectCurrency: sub.OnlyDirectCurrency,
		Descriptor: sub.Descriptor, Status: payment.ChargePending, Metadata: maps.Clone(sub.Metadata),
		CreatedOn: now, UpdatedOn: now,
	}
}

// withNextPayment fills in a subscription's next payment.
func (s *Service) withNextPayment(ctx context.Context, sub *payment.Subscription) (*payment.Subscription, error) {
	err := s.db.View(ctx, func(tx payment.Tx) error { return loadNextPayment(ctx, tx, sub) })
	return sub, err
}

func loadNextPayment(ctx context.Context, tx payment.Tx, sub *payment.Subscription) error {
	sub.NextPayment = nil
	if sub.NextPaymentID == uuid.Nil || sub.Status.Ended() {
		return nil
	}
	p, err := tx.ScheduledPayment(ctx, sub.NextPaymentID)
	if err != nil {
		return err
	}
	sub.NextPayment = p
	return nil
}

// visibleSubscription returns a subscription of storeID the caller may
// see (uuid.Nil: of any store the caller sees). A browser sees only one
// it made itself moments ago, while its shopper waits on the first
// charge.
func (s *Service) visibleSubscription(ctx context.Context, tx payment.Tx, c *payment.Caller, storeID, id uuid.UUID) (*payment.Subscription, error) {
	sub, err := tx.Subscription(ctx, id)
	if err != nil {
		return nil, err
	}
	if storeID == uuid.Nil {
		storeID = sub.StoreID
	}
	if _, err := payment.VisibleStore(ctx, tx, c, storeID); err != nil {
		return nil, payment.NotFound("subscription")
	}
	if sub.StoreID != storeID || sub.Mode != c.Mode() {
		return nil, payment.NotFound("subscription")
	}
	if !c.WithSecret() {
		age := s.clock.Now().Sub(sub.CreatedOn)
		if !sub.FromBrowser || age < 0 || age > payment.BrowserChargeWindow {
			return nil, payment.Errorf(payment.CodeInvalidPermissions, "reading a subscription requires the app token's secret")
		}
	}
	if err := loadNextPayment(ctx, tx, sub); err != nil {
		return nil, err
	}
	return sub, nil
}

// Subscription returns a subscription. With wait > 0 it is a long poll:
// while it is unverified (its first charge under way) it waits up to wait
// for that to change.
func (s *Service) Subscription(ctx context.Context, c *payment.Caller, storeID, id uuid.UUID, wait time.Duration) (*payment.Subscription, error) {
	var sub *payment.Subscription
	read := func() error {
		return s.db.View(ctx, func(tx payment.Tx) error {
			var err error
			sub, err = s.visibleSubscription(ctx, tx, c, storeID, id)
			return err
		})
	}
	err := s.db.LongPoll(ctx, id, wait, read, func() (string, bool) {
		return sub.Stage(), sub.Status == payment.SubscriptionUnverified
	})
	return sub, err
}

// Subscriptions lists subscriptions of one store, or of every store the
// caller sees.
func (s *Service) Subscriptions(ctx context.Context, c *payment.Caller, storeID uuid.UUID, f payment.SubscriptionFilter, p payment.ListParams) (payment.Page[*payment.Subscription], error) {
	if err := c.RequireSecret(); err != nil {
		return payment.Page[*payment.Subscription]{}, err
	}
	var ok bool
	if f.Mode, ok = c.OwnMode(f.Mode); !ok {
		return payment.EmptyPage[*payment.Subscription](p), nil
	}
	var page payment.Page[*payment.Subscription]
	err := s.db.View(ctx, func(tx payment.Tx) error {
		scope, err := payment.ListScope(ctx, tx, c, storeID)
		if err != nil {
			return err
		}
		f.MerchantID, f.StoreID = scope.MerchantID, scope.StoreID
		if page, err = tx.ListSubscriptions(ctx, f, p); err != nil {
			return err
		}
		for _, sub := range page.Items {
			if err := loadNextPayment(ctx, tx, sub); err != nil {
				return err
			}
		}
		return nil
	})
	return page, err
}
