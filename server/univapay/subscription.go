package univapay

import (
	"encoding/json"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
)

// ScheduleSettings is a subscription's schedule_settings. PHP requires
// it with zone_id (Subscription/ScheduleSettings.php); start_on is the day
// asked for (null: at once), retry_interval null when there is none (PHP
// reads it as a DateInterval, which "" is not).
type ScheduleSettings struct {
	StartOn            *string `json:"start_on"`
	ZoneID             string  `json:"zone_id"`
	PreserveEndOfMonth bool    `json:"preserve_end_of_month"`
	RetryInterval      *string `json:"retry_interval"`
	TerminationMode    string  `json:"termination_mode"`
}

// ScheduledPayment is one payment of a subscription (its next_payment,
// an item of …/payments).
type ScheduledPayment struct {
	ID                    uuid.UUID   `json:"id"`
	DueDate               string      `json:"due_date"`
	ZoneID                string      `json:"zone_id"`
	Amount                int64       `json:"amount"`
	Currency              string      `json:"currency"`
	AmountFormatted       json.Number `json:"amount_formatted"`
	IsPaid                bool        `json:"is_paid"`
	IsLastPayment         bool        `json:"is_last_payment"`
	CreatedOn             Time        `json:"created_on"`
	UpdatedOn             Time        `json:"updated_on"`
	SuccessfulPaymentDate *string     `json:"successful_payment_date"`
	TerminateWithStatus   *string     `json:"terminate_with_status"`
	RetryDate             *string     `json:"retry_date"`
	RetryInterval         *string     `json:"retry_interval"`
}

// ScheduledPaymentOf shows a payment of a subscription.
func ScheduledPaymentOf(p *payment.ScheduledPayment) ScheduledPayment {
	return ScheduledPayment{
		ID: p.ID, DueDate: p.DueDate.String(), ZoneID: p.ZoneID, Amount: p.Amount, Currency: p.Currency,
		AmountFormatted: formatted(p.Amount, p.Currency), IsPaid: p.IsPaid, IsLastPayment: p.IsLastPayment,
		CreatedOn: Time(p.CreatedOn), UpdatedOn: Time(p.UpdatedOn),
		SuccessfulPaymentDate: optionalDate(p.SuccessfulPaymentDate),
		TerminateWithStatus:   optionalString(string(p.TerminateWithStatus)),
		RetryDate:             optionalDate(p.RetryDate), RetryInterval: optionalString(p.RetryInterval),
	}
}

// SimulatedPayment is one payment of simulate_plan's answer: a
// scheduled payment that does not exist, so without id or times (PHP's
// ScheduledPayment takes created_on as now when it is absent).
type SimulatedPayment struct {
	DueDate               string      `json:"due_date"`
	ZoneID                string      `json:"zone_id"`
	Amount                int64       `json:"amount"`
	AmountFormatted       json.Number `json:"amount_formatted"`
	Currency              string      `json:"currency"`
	IsPaid                bool        `json:"is_paid"`
	IsLastPayment         bool        `json:"is_last_payment"`
	SuccessfulPaymentDate *string     `json:"successful_payment_date"`
	TerminateWithStatus   *string     `json:"terminate_with_status"`
	RetryInterval         *string     `json:"retry_interval"`
}

// SimulatedPaymentOf shows a payment a plan would make.
func SimulatedPaymentOf(p *payment.ScheduledPayment) SimulatedPayment {
	return SimulatedPayment{
		DueDate: p.DueDate.String(), ZoneID: p.ZoneID, Amount: p.Amount, AmountFormatted: formatted(p.Amount, p.Currency),
		Currency: p.Currency, IsPaid: p.IsPaid, IsLastPayment: p.IsLastPayment,
		SuccessfulPaymentDate: optionalDate(p.SuccessfulPaymentDate),
		TerminateWithStatus:   optionalString(string(p.TerminateWithStatus)), RetryInterval: optionalString(p.RetryInterval),
	}
}

// Plan is a subscription_plan (or installment_plan): the field of the
// other plan type is null, as PHP's SubscriptionPlan refuses both.
type Plan struct {
	PlanType         string `json:"plan_type"`
	FixedCycles      *int   `json:"fixed_cycles"`
	FixedCycleAmount *int64 `json:"fixed_cycle_amount"`
}

func planOf(p *payment.SubscriptionPlan) *Plan {
	if p == nil {
		return nil
	}
	w := &Plan{PlanType: p.PlanType}
	if p.PlanType == payment.PlanFixedCycles {
		n := p.FixedCycles
		w.FixedCycles = &n
	} else {
		n := p.FixedCycleAmount
		w.FixedCycleAmount = &n
	}
	return w
}

// Subscription is a subscription in UnivaPay's wire shape. PHP requires
// currency, amount, schedule_settings with zone_id, status, mode and
// created_on (Resources/Subscription.php initSchema).
type Subscription struct {
	ID                           uuid.UUID         `json:"id"`
	StoreID                      uuid.UUID         `json:"store_id"`
	MerchantID                   uuid.UUID         `json:"merchant_id"`
	PlatformID                   *string           `json:"platform_id"`
	TransactionTokenID           uuid.UUID         `json:"transaction_token_id"`
	Amount                       int64             `json:"amount"`
	Currency                     string            `json:"currency"`
	AmountFormatted              json.Number       `json:"amount_formatted"`
	InitialAmount                *int64            `json:"initial_amount"`
	InitialAmountFormatted       *json.Number      `json:"initial_amount_formatted"`
	SubsequentCyclesStart        *string           `json:"subsequent_cycles_start"`
	ScheduleSettings             ScheduleSettings  `json:"schedule_settings"`
	OnlyDirectCurrency           bool              `json:"only_direct_currency"`
	FirstChargeCaptureAfter      *string           `json:"first_charge_capture_after"`
	FirstChargeAuthorizationOnly bool              `json:"first_charge_authorization_only"`
	Status                       string            `json:"status"`
	Metadata                     payment.Metadata  `json:"metadata"`
	Mode                         payment.Mode      `json:"mode"`
	CreatedOn                    Time              `json:"created_on"`
	UpdatedOn                    Time              `json:"updated_on"`
	ThreeDS                      ChargeThreeDS     `json:"three_ds"`
	Period                       *string           `json:"period"`
	CyclicalPeriod               *string           `json:"cyclical_period"`
	NextPayment                  *ScheduledPayment `json:"next_payment"`
	CyclesLeft                   *int              `json:"cycles_left"`
	PaymentsLeft                 *int              `json:"payments_left"`
	AmountLeft                   *int64            `json:"amount_left"`
	AmountLeftFormatted          *json.Number      `json:"amount_left_formatted"`
	SubscriptionPlan             *Plan             `json:"subscription_plan"`
	InstallmentPlan              *Plan             `json:"installment_plan"`
	Descriptor                   *string           `json:"descriptor"`
	ChargeID                     *uuid.UUID        `json:"charge_id"`
}

// SubscriptionOf shows a subscription.
func SubscriptionOf(sub *payment.Subscription) Subscription {
	w := Subscription{
		ID: sub.ID, StoreID: sub.StoreID, MerchantID: sub.MerchantID, TransactionTokenID: sub.TokenID,
		Amount: sub.Amount, Currency: sub.Currency, AmountFormatted: formatted(sub.Amount, sub.Currency),
		InitialAmount: sub.InitialAmount, InitialAmountFormatted: formattedPtr(sub.InitialAmount, sub.Currency),
		ScheduleSettings: ScheduleSettings{
			ZoneID: sub.Schedule.ZoneID, PreserveEndOfMonth: sub.Schedule.PreserveEndOfMonth,
			RetryInterval: optionalString(sub.Schedule.RetryInterval), TerminationMode: sub.Schedule.TerminationMode,
			StartOn: startOn(sub),
		},
		OnlyDirectCurrency: sub.OnlyDirectCurrency, FirstChargeCaptureAfter: optionalString(sub.FirstChargeCaptureAfter),
		FirstChargeAuthorizationOnly: sub.FirstChargeAuthorizationOnly, Status: string(sub.Status),
		Metadata: metadata(sub.Metadata), Mode: sub.Mode, CreatedOn: Time(sub.CreatedOn), UpdatedOn: Time(sub.UpdatedOn),
		ThreeDS: ChargeThreeDS{
			Mode: optionalString(sub.ThreeDS.Mode), RedirectEndpoint: optionalString(sub.ThreeDS.RedirectEndpoint),
			RedirectID: optionalString(sub.ThreeDS.RedirectID),
		},
		Period: optionalString(sub.Period), CyclicalPeriod: optionalString(sub.CyclicalPeriod),
		SubscriptionPlan: planOf(sub.Plan), Descriptor: optionalString(sub.Descriptor),
	}
	if sub.NextPayment != nil {
		p := ScheduledPaymentOf(sub.NextPayment)
		w.NextPayment = &p
	}
	if n, limited := sub.CyclesLeft(); limited {
		w.CyclesLeft, w.PaymentsLeft = &n, &n
	}
	if amount, limited := sub.AmountLeft(); limited {
		w.AmountLeft, w.AmountLeftFormatted = &amount, formattedPtr(&amount, sub.Currency)
	}
	return w
}
