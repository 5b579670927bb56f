package payment

import (
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
	DefaultSubscriptionTZ = "Asia/Tokyo"
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
	MinPlanCycles = 2
	MaxPlanCycles = 1200
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

// Cycle is the subscription's period as a cycle.
func (sub *Subscription) Cycle() Cycle {
	if sub.CyclicalPeriod != "" {
		c, _ := readCycle(sub.CyclicalPeriod)
		return c
	}
	c, _ := PeriodCycle(sub.Period)
	return c
}

// Location is the subscription's zone; a stored zone always loads.
func (sub *Subscription) Location() *time.Location {
	loc, err := time.LoadLocation(sub.Schedule.ZoneID)
	if err != nil {
		return time.UTC
	}
	return loc
}

func (sub *Subscription) PaymentSchedule() Schedule {
	return Schedule{Anchor: sub.Anchor, Cycle: sub.Cycle(), PreserveEndOfMonth: sub.Schedule.PreserveEndOfMonth}
}

// Limited reports whether a plan ends the subscription.
func (sub *Subscription) Limited() bool { return sub.Plan != nil }

// PaymentTerms returns the amount of the payment that follows made
// payments totalling paid, and whether the plan ends with it.
func PaymentTerms(amount int64, initial *int64, plan *SubscriptionPlan, made int, paid int64) (int64, bool) {
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
	if !sub.Limited() {
		return 0, false
	}
	if sub.Status.Ended() {
		return 0, true
	}
	n, paid := sub.PaymentsMade, sub.AmountPaid
	for left := 0; ; left++ {
		amount, last := PaymentTerms(sub.Amount, sub.InitialAmount, sub.Plan, n, paid)
		if last || left >= MaxPlanCycles {
			return left + 1, true
		}
		n, paid = n+1, paid+amount
	}
}

// AmountLeft is what a limited plan still has to charge; ok is false for
// an unlimited subscription.
func (sub *Subscription) AmountLeft() (int64, bool) {
	if !sub.Limited() {
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
		amount, _ := PaymentTerms(sub.Amount, sub.InitialAmount, sub.Plan, n, paid)
		total += amount
		n, paid = n+1, paid+amount
	}
	return total, true
}

// Stage is where the subscription is, for a long poll.
func (sub *Subscription) Stage() string { return string(sub.Status) }

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

// ChargeAt is when the scheduler charges the payment.
func (p *ScheduledPayment) ChargeAt(loc *time.Location) time.Time {
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

// SubscriptionUpdate is a PATCH of a subscription: nil fields stay.
type SubscriptionUpdate struct {
	// TokenID replaces the token future payments are charged to.
	TokenID *uuid.UUID
	// Amount is what payments made from now on charge (the next one, made
	// already, keeps its amount: NextPayment.Amount changes that).
	Amount *int64
	// Status suspended pauses; unpaid (or current) resumes.
	Status             *SubscriptionStatus
	TerminationMode    *string
	RetryInterval      *string
	PreserveEndOfMonth *bool
	Descriptor         *string
	OnlyDirectCurrency *bool
	Metadata           Metadata
	NextPayment        *PaymentUpdate
	// ZoneID and StartOn cannot change once a subscription exists; an
	// update may repeat them as they are (the PHP SDK sends its whole
	// schedule_settings back).
	ZoneID  *string
	StartOn *Date
}

// PaymentUpdate is a PATCH of a scheduled payment: nil fields stay.
type PaymentUpdate struct {
	DueDate *Date
	// IsPaid true records the payment as paid outside Kessai: the next
	// one is made as if it had been charged.
	IsPaid *bool
	// TerminateWithStatus: suspended, canceled, or "" to withdraw.
	TerminateWithStatus *SubscriptionStatus
	RetryInterval       *string
	// Amount (only through the subscription's next_payment) changes this
	// payment's amount, for an unlimited subscription.
	Amount *int64
}
