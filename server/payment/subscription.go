package payment

import (
	"context"
	"maps"
	"strings"
	"time"

	"github.com/google/uuid"
)

// SubscriptionStatus is where a subscription is (UnivaPay's wire format).
//
//	unverified → current (its first charge succeeded) | unpaid (it failed)
//	current ⇄ unpaid (a payment failed; a later attempt succeeded)
//	current | unpaid → suspended → current | unpaid (unsuspended)
//	any of those → canceled; current → completed (a fixed plan's last payment)
//
// A subscription that charges nothing when it is made (a later start_on,
// or a free first period) starts current.
type SubscriptionStatus string

// The subscription statuses. unconfirmed belongs to UnivaPay's
// confirmation flow and authorized to its authorisation-only first
// charges (Node's and Java's enums): Kessai has neither status, and they
// are known so that filters naming them are valid.
const (
	SubscriptionUnverified  SubscriptionStatus = "unverified"
	SubscriptionUnconfirmed SubscriptionStatus = "unconfirmed"
	SubscriptionCurrent     SubscriptionStatus = "current"
	SubscriptionUnpaid      SubscriptionStatus = "unpaid"
	SubscriptionSuspended   SubscriptionStatus = "suspended"
	SubscriptionCanceled    SubscriptionStatus = "canceled"
	SubscriptionCompleted   SubscriptionStatus = "completed"
	SubscriptionAuthorized  SubscriptionStatus = "authorized"
)

// Valid reports whether st is a status of the wire format.
func (st SubscriptionStatus) Valid() bool {
	switch st {
	case SubscriptionUnverified, SubscriptionUnconfirmed, SubscriptionCurrent, SubscriptionUnpaid,
		SubscriptionSuspended, SubscriptionCanceled, SubscriptionCompleted, SubscriptionAuthorized:
		return true
	}
	return false
}

// Ended reports whether nothing more will happen to the subscription.
func (st SubscriptionStatus) Ended() bool {
	return st == SubscriptionCanceled || st == SubscriptionCompleted
}

// The subscription events (UnivaPay's names).
const (
	EventSubscriptionCreated   = "subscription_created"
	EventSubscriptionPayment   = "subscription_payment"
	EventSubscriptionFailure   = "subscription_failure"
	EventSubscriptionCanceled  = "subscription_canceled"
	EventSubscriptionSuspended = "subscription_suspended"
	EventSubscriptionCompleted = "subscription_completed"
)

// Termination modes: at once, or on the next payment's due date instead
// of charging it.
const (
	TerminateImmediately  = "immediate"
	TerminateNextPayment  = "on_next_payment"
	defaultSubscriptionTZ = "Asia/Tokyo"
)

// ScheduleSettings are when a subscription charges (the wire's
// schedule_settings).
type ScheduleSettings struct {
	// StartOn is the first recurring payment's day; nil: today, or one
	// cycle after an initial payment.
	StartOn *Date
	// ZoneID names the zone due dates are days of (IANA name).
	ZoneID             string
	PreserveEndOfMonth bool
	// RetryInterval is how long after a failed payment it is tried again
	// (ISO 8601, "" for never).
	RetryInterval   string
	TerminationMode string
}

// Plan types of subscription_plan.
const (
	PlanFixedCycles      = "fixed_cycles"
	PlanFixedCycleAmount = "fixed_cycle_amount"
)

// SubscriptionPlan limits a subscription: so many payments (fixed_cycles,
// the first included), or payments until a total is reached
// (fixed_cycle_amount; the last one takes only what is left).
type SubscriptionPlan struct {
	PlanType         string
	FixedCycles      int
	FixedCycleAmount int64
}

// Bounds of a plan: a limited subscription has at least two payments and
// at most 1,200 (a century of months).
const (
	minPlanCycles = 2
	maxPlanCycles = 1200
)

// Subscription charges a subscription token on a schedule (UnivaPay's
// wire format).
type Subscription struct {
	ID         uuid.UUID
	StoreID    uuid.UUID
	MerchantID uuid.UUID
	TokenID    uuid.UUID
	Mode       Mode
	// Amount is each payment's; InitialAmount, when set, is the first
	// one's instead, charged when the subscription is made (0: a free
	// first period).
	Amount        int64
	Currency      string
	InitialAmount *int64
	// Period or CyclicalPeriod: exactly one is set.
	Period         string
	CyclicalPeriod string
	Schedule       ScheduleSettings
	// Anchor is the first recurring payment's day.
	Anchor Date
	Plan   *SubscriptionPlan
	Status SubscriptionStatus
	// NextPaymentID is the payment due next (uuid.Nil once ended).
	NextPaymentID uuid.UUID
	// PaymentsMade and AmountPaid count the payments paid, for the plan.
	PaymentsMade int
	AmountPaid   int64

	ThreeDS                      ThreeDSSettings
	Descriptor                   string
	OnlyDirectCurrency           bool
	FirstChargeAuthorizationOnly bool
	FirstChargeCaptureAfter      string
	Metadata                     Metadata
	// FromBrowser: made with a browser token (the widget), which may read
	// it back while the shopper waits.
	FromBrowser bool
	// Email and CardLastFour are the token's, for searches.
	Email        string
	CardLastFour string
	CreatedOn    time.Time
	UpdatedOn    time.Time

	// NextPayment is the payment NextPaymentID names, filled in when the
	// subscription is read through the Service (nil once ended).
	NextPayment *ScheduledPayment
}

// cycle is the subscription's period as a cycle.
func (sub *Subscription) cycle() Cycle {
	if sub.CyclicalPeriod != "" {
		c, _ := readCycle(sub.CyclicalPeriod)
		return c
	}
	c, _ := PeriodCycle(sub.Period)
	return c
}

// location is the subscription's zone; a stored zone always loads.
func (sub *Subscription) location() *time.Location {
	loc, err := time.LoadLocation(sub.Schedule.ZoneID)
	if err != nil {
		return time.UTC
	}
	return loc
}

func (sub *Subscription) schedule() Schedule {
	return Schedule{Anchor: sub.Anchor, Cycle: sub.cycle(), PreserveEndOfMonth: sub.Schedule.PreserveEndOfMonth}
}

// limited reports whether a plan ends the subscription.
func (sub *Subscription) limited() bool { return sub.Plan != nil }

// paymentTerms returns the amount of the payment that follows made
// payments totalling paid, and whether the plan ends with it.
func paymentTerms(amount int64, initial *int64, plan *SubscriptionPlan, made int, paid int64) (int64, bool) {
	due := amount
	if made == 0 && initial != nil {
		due = *initial
	}
	if plan == nil {
		return due, false
	}
	if plan.PlanType == PlanFixedCycles {
		return due, made+1 >= plan.FixedCycles
	}
	left := plan.FixedCycleAmount - paid
	if due >= left {
		return left, true
	}
	return due, false
}

// CyclesLeft is how many payments a limited plan still has to make; ok
// is false for an unlimited subscription.
func (sub *Subscription) CyclesLeft() (int, bool) {
	if !sub.limited() {
		return 0, false
	}
	if sub.Status.Ended() {
		return 0, true
	}
	n, paid := sub.PaymentsMade, sub.AmountPaid
	for left := 0; ; left++ {
		amount, last := paymentTerms(sub.Amount, sub.InitialAmount, sub.Plan, n, paid)
		if last || left >= maxPlanCycles {
			return left + 1, true
		}
		n, paid = n+1, paid+amount
	}
}

// AmountLeft is what a limited plan still has to charge; ok is false for
// an unlimited subscription.
func (sub *Subscription) AmountLeft() (int64, bool) {
	if !sub.limited() {
		return 0, false
	}
	if sub.Status.Ended() {
		return 0, true
	}
	if sub.Plan.PlanType == PlanFixedCycleAmount {
		return sub.Plan.FixedCycleAmount - sub.AmountPaid, true
	}
	var total int64
	n, paid := sub.PaymentsMade, sub.AmountPaid
	for n < sub.Plan.FixedCycles {
		amount, _ := paymentTerms(sub.Amount, sub.InitialAmount, sub.Plan, n, paid)
		total += amount
		n, paid = n+1, paid+amount
	}
	return total, true
}

// stage is where the subscription is, for a long poll.
func (sub *Subscription) stage() string { return string(sub.Status) }

// ScheduledPayment is one payment of a subscription: made when the one
// before it was paid, charged on its due date (UnivaPay's scheduled
// payment). Each is charged by the scheduler's work item of the same id,
// so it is charged once however many schedulers run.
type ScheduledPayment struct {
	ID             uuid.UUID
	SubscriptionID uuid.UUID
	StoreID        uuid.UUID
	MerchantID     uuid.UUID
	Mode           Mode
	// Cycle is the payment's place on the schedule (Schedule.Due); -1 for
	// an initial payment, which is off it.
	Cycle    int
	DueDate  Date
	ZoneID   string
	Amount   int64
	Currency string
	IsPaid   bool
	// IsLastPayment: the plan ends with this payment.
	IsLastPayment         bool
	SuccessfulPaymentDate *Date
	// RetryDate is when a failed payment is tried again; nil when it is
	// not (yet) failed, or will not be retried.
	RetryDate *Date
	// RetryAt is the instant of the retry, which may fall within RetryDate.
	RetryAt *time.Time
	// RetryInterval overrides the subscription's for this payment.
	RetryInterval string
	// TerminateWithStatus (suspended or canceled) ends the subscription
	// on the due date instead of charging it.
	TerminateWithStatus SubscriptionStatus
	// Attempts counts the charges made for the payment; ChargeID is the
	// latest one.
	Attempts  int
	ChargeID  uuid.UUID
	CreatedOn time.Time
	UpdatedOn time.Time
}

// chargeAt is when the scheduler charges the payment.
func (p *ScheduledPayment) chargeAt(loc *time.Location) time.Time {
	if p.RetryAt != nil {
		return *p.RetryAt
	}
	return p.DueDate.Start(loc)
}

// SubscriptionFilter narrows a subscription list.
type SubscriptionFilter struct {
	MerchantID uuid.UUID
	StoreID    uuid.UUID
	Mode       Mode
	// Statuses: any of them (none: all).
	Statuses []SubscriptionStatus
	// Search matches the subscription's or its token's id, the token's
	// e-mail (in part, any ASCII case), its card's last four digits, or a
	// metadata value (whole).
	Search string
}

// WorkSubscriptionPayment charges a ScheduledPayment (the item's object)
// on its due date, or on its retry.
const WorkSubscriptionPayment WorkKind = "subscription_payment"

// maxPaymentRetries is how often a failed payment is retried on its
// interval before it is left for the merchant (a new token, a payment
// marked paid, a cancellation).
const maxPaymentRetries = 5

// NewSubscription asks for a subscription (POST /subscriptions).
type NewSubscription struct {
	TokenID        uuid.UUID
	Amount         int64
	Currency       string
	InitialAmount  *int64
	Period         string
	CyclicalPeriod string
	Schedule       ScheduleSettings
	Plan           *SubscriptionPlan
	// InstallmentPlan is the card issuer's installments, which the
	// sandbox acquirer does not offer.
	InstallmentPlan              *SubscriptionPlan
	FirstChargeAuthorizationOnly bool
	FirstChargeCaptureAfter      string
	// Charge holds what the first charge takes as a charge would:
	// descriptor, 3-D Secure, redirect, metadata, IP address.
	Charge NewCharge
	// Idempotency is the reservation of the request's Idempotency-Key
	// (nil: none), on which the subscription (with its first charge) is
	// recorded in its transaction.
	Idempotency *IdempotencyRef
}

// subscriptionTerms are a subscription's terms once checked.
type subscriptionTerms struct {
	currency Currency
	cycle    Cycle
	loc      *time.Location
	schedule ScheduleSettings
}

// checkTerms validates the terms a subscription and a simulation share.
func checkTerms(p *NewSubscription, today func(*time.Location) Date) (subscriptionTerms, error) {
	var t subscriptionTerms
	if cur, ok := LookupCurrency(p.Currency); ok && p.Amount > cur.MaxAmount {
		return t, Errorf(CodeChargeAmountTooHigh, "amount is above the maximum for "+cur.Code)
	}
	cur, err := checkAmount(p.Amount, p.Currency, "amount")
	if err != nil {
		return t, err
	}
	if p.Amount < cur.MinAmount {
		return t, Errorf(CodeChargeAmountTooLow, "amount is below the minimum for "+cur.Code)
	}
	t.currency = cur
	var v Validation
	if i := p.InitialAmount; i != nil {
		switch {
		case *i < 0:
			v.Add("initial_amount", "INVALID_AMOUNT")
		case *i > cur.MaxAmount:
			v.Add("initial_amount", ReasonNumberMax)
		case *i > 0 && *i < cur.MinAmount:
			return t, Errorf(CodeChargeAmountTooLow, "initial_amount is below the minimum for "+cur.Code)
		}
	}
	switch {
	case p.Period != "" && p.CyclicalPeriod != "":
		v.Add("cyclical_period", "CANNOT_SET_BOTH")
	case p.Period != "":
		c, ok := PeriodCycle(p.Period)
		if !ok {
			v.Add("period", ReasonInvalidFormat)
		}
		t.cycle = c
	case p.CyclicalPeriod != "":
		c, ok := ParseCycle(p.CyclicalPeriod)
		if !ok {
			v.Add("cyclical_period", ReasonInvalidFormat)
		}
		t.cycle = c
	default:
		v.Add("period", ReasonRequired)
	}
	sch := p.Schedule
	if sch.ZoneID == "" {
		sch.ZoneID = defaultSubscriptionTZ
	}
	t.loc = loadZone(sch.ZoneID)
	if t.loc == nil {
		v.Add("schedule_settings.zone_id", "INVALID_TIMEZONE")
	}
	if sch.RetryInterval != "" {
		if _, ok := ParseRetryInterval(sch.RetryInterval); !ok {
			v.Add("schedule_settings.retry_interval", ReasonInvalidFormat)
		}
	}
	switch sch.TerminationMode {
	case "":
		sch.TerminationMode = TerminateImmediately
	case TerminateImmediately, TerminateNextPayment:
	default:
		v.Add("schedule_settings.termination_mode", ReasonInvalidFormat)
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

func checkPlan(v *Validation, p *NewSubscription) {
	pl := p.Plan
	switch pl.PlanType {
	case PlanFixedCycles:
		if pl.FixedCycles < minPlanCycles || pl.FixedCycles > maxPlanCycles {
			v.Add("subscription_plan.fixed_cycles", "INVALID_CYCLES_COUNT")
		}
		pl.FixedCycleAmount = 0
	case PlanFixedCycleAmount:
		first := p.Amount
		if p.InitialAmount != nil {
			first = *p.InitialAmount
		}
		// At least two payments, at most the plan's bound: the total also
		// stays far from int64's limits.
		if pl.FixedCycleAmount <= first || pl.FixedCycleAmount > first+p.Amount*(maxPlanCycles-1) {
			v.Add("subscription_plan.fixed_cycle_amount", "INVALID_AMOUNT")
		}
		pl.FixedCycles = 0
	case "":
		v.Add("subscription_plan.plan_type", ReasonRequired)
	default:
		v.Add("subscription_plan.plan_type", ReasonInvalidFormat)
	}
}

// today is the day it is now in loc, by the service's clock.
func (s *Service) today(loc *time.Location) Date { return DateOf(s.clock.Now(), loc) }

// firstPayment sets a new subscription's anchor and returns its first payment
// (not yet stored), and whether that payment is charged at once.
func firstPayment(sub *Subscription, loc *time.Location, now time.Time) (*ScheduledPayment, bool) {
	today := DateOf(now, loc)
	cyc := sub.cycle()
	switch {
	case sub.Schedule.StartOn != nil:
		sub.Anchor = *sub.Schedule.StartOn
	case sub.InitialAmount != nil:
		sub.Anchor = Schedule{Anchor: today, Cycle: cyc}.Due(1)
	default:
		sub.Anchor = today
	}
	amount, last := paymentTerms(sub.Amount, sub.InitialAmount, sub.Plan, 0, 0)
	p := &ScheduledPayment{
		ID: NewID(), SubscriptionID: sub.ID, StoreID: sub.StoreID, MerchantID: sub.MerchantID, Mode: sub.Mode,
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
func subscriptionToken(tok *TransactionToken, c *Caller, storeID uuid.UUID, now time.Time, first bool) error {
	switch {
	case tok.MerchantID != c.MerchantID():
		return NotFound("transaction token")
	case tok.StoreID != storeID:
		return Errorf(CodeTokenForWrongStore, "the transaction token belongs to another store")
	case tok.Mode != c.token.Mode:
		return Errorf(CodeProcessingModeMismatch, "the transaction token was made in another mode")
	case !tok.Active:
		return Errorf(CodeTokenExpired, "the transaction token was deleted")
	case first && tok.Type != SubscriptionToken,
		!first && tok.Type != SubscriptionToken && tok.Type != Recurring:
		return Errorf(CodeNotSubscriptionToken, "subscriptions need a subscription token")
	case first && tok.Used:
		return Errorf(CodeTransactionAlreadyDone, "this subscription token already has its subscription")
	case !c.withSecret && !(first && browserMayCharge(tok, now)):
		return Errorf(CodeInvalidPermissions, "this operation requires the app token's secret")
	}
	return nil
}

// CreateSubscription makes a subscription on a subscription token. Its
// first payment, when due now, is charged in the same transaction, as
// POST /charges would (with the subscription's 3-D Secure); the scheduler
// charges the rest.
func (s *Service) CreateSubscription(ctx context.Context, c *Caller, p NewSubscription) (*Subscription, error) {
	storeID, err := storeCaller(c)
	if err != nil {
		return nil, err
	}
	if p.TokenID == uuid.Nil {
		return nil, Invalid("transaction_token_id", ReasonRequired)
	}
	if p.InstallmentPlan != nil {
		return nil, Errorf(CodeInstallmentsNotEnabled, "the acquirer offers no card installments")
	}
	terms, err := checkTerms(&p, s.today)
	if err != nil {
		return nil, err
	}
	if err := p.Charge.check(c, s.publicOrigin); err != nil {
		return nil, err
	}
	if p.FirstChargeCaptureAfter != "" {
		d, ok := parseISODuration(p.FirstChargeCaptureAfter)
		if !ok || !p.FirstChargeAuthorizationOnly || d != (isoDuration{days: d.days}) || d.days < 1 || d.days > 6 {
			return nil, Invalid("first_charge_capture_after", ReasonInvalidFormat)
		}
	}
	now := s.clock.Now()
	sub := &Subscription{
		ID: NewID(), StoreID: storeID, MerchantID: c.MerchantID(), TokenID: p.TokenID, Mode: c.token.Mode,
		Amount: p.Amount, Currency: terms.currency.Code, InitialAmount: p.InitialAmount,
		Period: p.Period, CyclicalPeriod: p.CyclicalPeriod, Schedule: terms.schedule, Plan: p.Plan,
		Status: SubscriptionCurrent, Descriptor: p.Charge.Descriptor, OnlyDirectCurrency: p.Charge.OnlyDirectCurrency,
		FirstChargeAuthorizationOnly: p.FirstChargeAuthorizationOnly, FirstChargeCaptureAfter: p.FirstChargeCaptureAfter,
		Metadata: p.Charge.Metadata, FromBrowser: !c.withSecret, CreatedOn: now, UpdatedOn: now,
	}
	if p.Charge.ThreeDS != nil {
		sub.ThreeDS = ThreeDSSettings{Mode: p.Charge.ThreeDS.Mode, RedirectEndpoint: p.Charge.ThreeDS.RedirectEndpoint, RedirectID: p.Charge.ThreeDS.RedirectID}
	}
	pay, chargeNow := firstPayment(sub, terms.loc, now)
	sub.NextPaymentID = pay.ID
	err = s.update(ctx, func(tx *writeTx) error {
		tok, err := tx.Token(ctx, p.TokenID)
		if err != nil {
			return err
		}
		if err := subscriptionToken(tok, c, storeID, now, true); err != nil {
			return err
		}
		// Its first charge takes the subscription's 3-D Secure, now or
		// when the scheduler makes it.
		if err := browserThreeDS(ctx, tx, c, storeID, "three_ds.mode", p.Charge.threeDSMode()); err != nil {
			return err
		}
		// First, before the branches below: whichever way the first
		// payment goes, the subscription is what the key made.
		if err := recordEffect(ctx, tx, p.Idempotency, IdempotentEffect{Kind: EffectSubscription, StoreID: sub.StoreID, ID: sub.ID}); err != nil {
			return err
		}
		sub.Email, sub.CardLastFour = tok.Email, tok.Card.LastFour
		if chargeNow {
			sub.Status = SubscriptionUnverified
		}
		if err := tx.CreateSubscription(ctx, sub); err != nil {
			return err
		}
		if err := tx.CreateScheduledPayment(ctx, pay); err != nil {
			return err
		}
		if err := s.announceSubscription(ctx, tx, EventSubscriptionCreated, sub); err != nil {
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
			return tx.enqueueWork(ctx, WorkSubscriptionPayment, pay.ID, pay.chargeAt(terms.loc))
		}
		ch := s.subscriptionCharge(sub, pay, now)
		ch.ThreeDS, ch.RedirectEndpoint, ch.IPAddress = sub.ThreeDS, p.Charge.RedirectEndpoint, p.Charge.IPAddress
		if e := p.Charge.ExternalThreeDS; e != nil && !e.empty() {
			if err := s.sealExternalThreeDS(ch, e); err != nil {
				return err
			}
		}
		if p.FirstChargeAuthorizationOnly {
			ch.Capture = false
			if d, ok := parseISODuration(p.FirstChargeCaptureAfter); ok {
				at := now.AddDate(0, 0, d.days)
				ch.CaptureAt = &at
			}
		}
		pay.ChargeID, pay.Attempts = ch.ID, 1
		if err := tx.UpdateScheduledPayment(ctx, pay); err != nil {
			return err
		}
		return s.placeCharge(ctx, tx, chargeOrder{charge: ch, caller: c})
	})
	if err != nil {
		return nil, err
	}
	s.wakeWorker()
	return s.withNextPayment(ctx, sub)
}

// subscriptionCharge is the charge of a payment: a charge of the
// subscription's token like any other, tied to the subscription.
func (s *Service) subscriptionCharge(sub *Subscription, pay *ScheduledPayment, now time.Time) *Charge {
	return &Charge{
		ID: NewID(), StoreID: sub.StoreID, MerchantID: sub.MerchantID, TokenID: sub.TokenID,
		SubscriptionID: sub.ID, PaymentID: pay.ID, Mode: sub.Mode, RequestedAmount: pay.Amount,
		Currency: sub.Currency, Capture: true, OnlyDirectCurrency: sub.OnlyDirectCurrency,
		Descriptor: sub.Descriptor, Status: ChargePending, Metadata: maps.Clone(sub.Metadata),
		CreatedOn: now, UpdatedOn: now,
	}
}

// withNextPayment fills in a subscription's next payment.
func (s *Service) withNextPayment(ctx context.Context, sub *Subscription) (*Subscription, error) {
	err := s.view(ctx, func(tx Tx) error { return loadNextPayment(ctx, tx, sub) })
	return sub, err
}

func loadNextPayment(ctx context.Context, tx Tx, sub *Subscription) error {
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
func (s *Service) visibleSubscription(ctx context.Context, tx Tx, c *Caller, storeID, id uuid.UUID) (*Subscription, error) {
	sub, err := tx.Subscription(ctx, id)
	if err != nil {
		return nil, err
	}
	if storeID == uuid.Nil {
		storeID = sub.StoreID
	}
	if _, err := s.visibleStore(ctx, tx, c, storeID); err != nil {
		return nil, NotFound("subscription")
	}
	if sub.StoreID != storeID || sub.Mode != c.token.Mode {
		return nil, NotFound("subscription")
	}
	if !c.withSecret {
		age := s.clock.Now().Sub(sub.CreatedOn)
		if !sub.FromBrowser || age < 0 || age > browserChargeWindow {
			return nil, Errorf(CodeInvalidPermissions, "reading a subscription requires the app token's secret")
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
func (s *Service) Subscription(ctx context.Context, c *Caller, storeID, id uuid.UUID, wait time.Duration) (*Subscription, error) {
	var sub *Subscription
	read := func() error {
		return s.view(ctx, func(tx Tx) error {
			var err error
			sub, err = s.visibleSubscription(ctx, tx, c, storeID, id)
			return err
		})
	}
	err := s.longPoll(ctx, id, wait, read, func() (string, bool) {
		return sub.stage(), sub.Status == SubscriptionUnverified
	})
	return sub, err
}

// Subscriptions lists subscriptions of one store, or of every store the
// caller sees.
func (s *Service) Subscriptions(ctx context.Context, c *Caller, storeID uuid.UUID, f SubscriptionFilter, p ListParams) (Page[*Subscription], error) {
	if err := c.requireSecret(); err != nil {
		return Page[*Subscription]{}, err
	}
	var ok bool
	if f.Mode, ok = c.ownMode(f.Mode); !ok {
		return emptyPage[*Subscription](p), nil
	}
	var page Page[*Subscription]
	err := s.view(ctx, func(tx Tx) error {
		scope, err := s.listScope(ctx, tx, c, storeID)
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
