package postgres

import (
	"context"
	"encoding/json"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/kessai/kessai/server/payment"
)

// ---- calendar days, stored as date

// nullDate passes a day as its YYYY-MM-DD text, which PostgreSQL reads as
// a date whatever its DateStyle; nil is NULL.
func nullDate(d *payment.Date) *string {
	if d == nil {
		return nil
	}
	s := d.String()
	return &s
}

// day is the calendar day of a date column.
func day(d pgtype.Date) payment.Date {
	return payment.Date{Year: d.Time.Year(), Month: d.Time.Month(), Day: d.Time.Day()}
}

func nullDay(d pgtype.Date) *payment.Date {
	if !d.Valid {
		return nil
	}
	v := day(d)
	return &v
}

// ---- subscriptions

const subscriptionColumns = `id, store_id, merchant_id, token_id, mode, amount, currency, initial_amount, period,
	cyclical_period, start_on, zone_id, preserve_end_of_month, retry_interval, termination_mode, anchor, plan_type,
	plan_fixed_cycles, plan_fixed_cycle_amount, status, next_payment_id, payments_made, amount_paid, three_ds, descriptor,
	only_direct_currency, first_charge_authorization_only, first_charge_capture_after, metadata, from_browser, email,
	last_four, created_on, updated_on`

func subscriptionArgs(s *payment.Subscription) ([]any, error) {
	md, err := metadataJSON(s.Metadata)
	if err != nil {
		return nil, err
	}
	threeDS, err := marshal(s.ThreeDS)
	if err != nil {
		return nil, err
	}
	var planType *string
	var cycles, cycleAmount int64
	if pl := s.Plan; pl != nil {
		planType = &pl.PlanType
		cycles, cycleAmount = int64(pl.FixedCycles), pl.FixedCycleAmount
	}
	sch := s.Schedule
	return []any{
		s.ID, s.StoreID, s.MerchantID, s.TokenID, string(s.Mode), s.Amount, s.Currency,
		s.InitialAmount, s.Period, s.CyclicalPeriod, nullDate(sch.StartOn), sch.ZoneID,
		sch.PreserveEndOfMonth, sch.RetryInterval, sch.TerminationMode, s.Anchor.String(), planType, cycles, cycleAmount,
		string(s.Status), s.NextPaymentID, s.PaymentsMade, s.AmountPaid, threeDS, s.Descriptor,
		s.OnlyDirectCurrency, s.FirstChargeAuthorizationOnly, s.FirstChargeCaptureAfter, md, s.FromBrowser, s.Email,
		s.CardLastFour, s.CreatedOn, s.UpdatedOn,
	}, nil
}

func scanSubscription(row scanner) (*payment.Subscription, error) {
	var s payment.Subscription
	var mode, status, threeDS, md string
	var startOn, anchor pgtype.Date
	var planType *string
	var cycles, cycleAmount int64
	err := row.Scan(&s.ID, &s.StoreID, &s.MerchantID, &s.TokenID, &mode, &s.Amount, &s.Currency, &s.InitialAmount,
		&s.Period, &s.CyclicalPeriod,
		&startOn, &s.Schedule.ZoneID, &s.Schedule.PreserveEndOfMonth, &s.Schedule.RetryInterval,
		&s.Schedule.TerminationMode, &anchor, &planType, &cycles, &cycleAmount, &status, &s.NextPaymentID, &s.PaymentsMade,
		&s.AmountPaid, &threeDS, &s.Descriptor, &s.OnlyDirectCurrency, &s.FirstChargeAuthorizationOnly,
		&s.FirstChargeCaptureAfter, &md, &s.FromBrowser, &s.Email, &s.CardLastFour, &s.CreatedOn, &s.UpdatedOn)
	if err != nil {
		return nil, err
	}
	if s.Metadata, err = parseMetadata(md); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(threeDS), &s.ThreeDS); err != nil {
		return nil, err
	}
	s.Anchor, s.Schedule.StartOn = day(anchor), nullDay(startOn)
	if planType != nil {
		s.Plan = &payment.SubscriptionPlan{PlanType: *planType, FixedCycles: int(cycles), FixedCycleAmount: cycleAmount}
	}
	s.Mode, s.Status = payment.Mode(mode), payment.SubscriptionStatus(status)
	return &s, nil
}

func (t *tx) CreateSubscription(ctx context.Context, s *payment.Subscription) error {
	args, err := subscriptionArgs(s)
	if err != nil {
		return err
	}
	_, err = t.tx.ExecContext(ctx, `INSERT INTO subscriptions (`+subscriptionColumns+`) VALUES (`+placeholders(len(args))+`)`, args...)
	return err
}

func (t *tx) Subscription(ctx context.Context, id uuid.UUID) (*payment.Subscription, error) {
	s, err := scanSubscription(t.readOne(ctx, subscriptionColumns, "subscriptions", "id = ?", id))
	if err != nil {
		return nil, notFound(err, "subscription")
	}
	return s, nil
}

func (t *tx) UpdateSubscription(ctx context.Context, s *payment.Subscription) error {
	args, err := subscriptionArgs(s)
	if err != nil {
		return err
	}
	_, err = t.tx.ExecContext(ctx, `UPDATE subscriptions SET (`+subscriptionColumns+`) = (`+placeholders(len(args))+`) WHERE id = ?`,
		append(args, s.ID)...)
	return err
}

func (t *tx) ListSubscriptions(ctx context.Context, f payment.SubscriptionFilter, p payment.ListParams) (payment.Page[*payment.Subscription], error) {
	var c conditions
	c.scope(f.MerchantID, f.StoreID)
	if f.Mode != "" {
		c.add("mode = ?", string(f.Mode))
	}
	if len(f.Statuses) > 0 {
		args := make([]any, len(f.Statuses))
		for i, st := range f.Statuses {
			args[i] = string(st)
		}
		c.add("status IN ("+placeholders(len(args))+")", args...)
	}
	if f.Search != "" {
		subscriptionSearch(&c, f.Search)
	}
	return listPage(ctx, t.tx, subscriptionColumns, "subscriptions", c.where(), c.args, p, scanSubscription)
}

// subscriptionSearch keeps the subscriptions payment.SubscriptionFilter's
// Search finds: the term is the subscription's id or its token's (compared
// as text: a term that is no UUID finds no id), its e-mail contains it
// (ASCII letters in any case, no character a wildcard), it is the card's
// last four, or it is the text of one of its metadata values (as
// metadataMatches compares one).
func subscriptionSearch(c *conditions, q string) {
	c.add("(id::text = ? OR token_id::text = ? OR "+containsFold("email")+" OR last_four = ? OR "+metadataValueIs+")",
		q, q, q, q, q)
}

// metadataValueIs is the condition "some metadata value's text is ?".
var metadataValueIs = `EXISTS (SELECT 1 FROM json_each(metadata::json) AS j WHERE ` + metadataValue("j.value") + ` = ?)`

// ---- scheduled payments

const scheduledPaymentColumns = `id, subscription_id, store_id, merchant_id, mode, cycle, due_date, zone_id, amount,
	currency, is_paid, is_last_payment, successful_payment_date, retry_date, retry_at, retry_interval,
	terminate_with_status, attempts, charge_id, created_on, updated_on`

func scheduledPaymentArgs(p *payment.ScheduledPayment) []any {
	return []any{
		p.ID, p.SubscriptionID, p.StoreID, p.MerchantID, string(p.Mode), p.Cycle,
		p.DueDate.String(), p.ZoneID, p.Amount, p.Currency, p.IsPaid, p.IsLastPayment, nullDate(p.SuccessfulPaymentDate),
		nullDate(p.RetryDate), p.RetryAt, p.RetryInterval, string(p.TerminateWithStatus), p.Attempts,
		p.ChargeID, p.CreatedOn, p.UpdatedOn,
	}
}

func scanScheduledPayment(row scanner) (*payment.ScheduledPayment, error) {
	var p payment.ScheduledPayment
	var mode, terminate string
	var due, paidOn, retryDate pgtype.Date
	err := row.Scan(&p.ID, &p.SubscriptionID, &p.StoreID, &p.MerchantID, &mode, &p.Cycle, &due, &p.ZoneID, &p.Amount,
		&p.Currency, &p.IsPaid, &p.IsLastPayment, &paidOn, &retryDate, &p.RetryAt, &p.RetryInterval, &terminate,
		&p.Attempts, &p.ChargeID, &p.CreatedOn, &p.UpdatedOn)
	if err != nil {
		return nil, err
	}
	p.DueDate, p.SuccessfulPaymentDate, p.RetryDate = day(due), nullDay(paidOn), nullDay(retryDate)
	p.Mode, p.TerminateWithStatus, p.RetryAt = payment.Mode(mode), payment.SubscriptionStatus(terminate), utc(p.RetryAt)
	return &p, nil
}

func (t *tx) CreateScheduledPayment(ctx context.Context, p *payment.ScheduledPayment) error {
	args := scheduledPaymentArgs(p)
	_, err := t.tx.ExecContext(ctx, `INSERT INTO scheduled_payments (`+scheduledPaymentColumns+`) VALUES (`+placeholders(len(args))+`)`, args...)
	return err
}

func (t *tx) ScheduledPayment(ctx context.Context, id uuid.UUID) (*payment.ScheduledPayment, error) {
	p, err := scanScheduledPayment(t.readOne(ctx, scheduledPaymentColumns, "scheduled_payments", "id = ?", id))
	if err != nil {
		return nil, notFound(err, "scheduled payment")
	}
	return p, nil
}

func (t *tx) UpdateScheduledPayment(ctx context.Context, p *payment.ScheduledPayment) error {
	args := scheduledPaymentArgs(p)
	_, err := t.tx.ExecContext(ctx, `UPDATE scheduled_payments SET (`+scheduledPaymentColumns+`) = (`+placeholders(len(args))+`) WHERE id = ?`,
		append(args, p.ID)...)
	return err
}

func (t *tx) ListScheduledPayments(ctx context.Context, subscriptionID uuid.UUID, p payment.ListParams) (payment.Page[*payment.ScheduledPayment], error) {
	return listPage(ctx, t.tx, scheduledPaymentColumns, "scheduled_payments", "subscription_id = ?",
		[]any{subscriptionID}, p, scanScheduledPayment)
}
