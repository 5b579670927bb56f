package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
)

// ---- subscriptions

const subscriptionColumns = `id, store_id, merchant_id, token_id, mode, amount, currency, initial_amount, period,
	cyclical_period, start_on, zone_id, preserve_end_of_month, retry_interval, termination_mode, anchor, plan_type,
	plan_fixed_cycles, plan_fixed_cycle_amount, status, next_payment_id, payments_made, amount_paid, three_ds, descriptor,
	only_direct_currency, first_charge_authorization_only, first_charge_capture_after, metadata, from_browser, email,
	last_four, created_on, updated_on`

func subscriptionArgs(d Dialect, s *payment.Subscription) ([]any, error) {
	md, err := metadataJSON(s.Metadata)
	if err != nil {
		return nil, err
	}
	threeDS, err := marshal(s.ThreeDS)
	if err != nil {
		return nil, err
	}
	var planType any
	var cycles, cycleAmount int64
	if pl := s.Plan; pl != nil {
		planType = pl.PlanType
		cycles, cycleAmount = int64(pl.FixedCycles), pl.FixedCycleAmount
	}
	sch := s.Schedule
	return []any{
		d.ID(s.ID), d.ID(s.StoreID), d.ID(s.MerchantID), d.ID(s.TokenID), string(s.Mode), s.Amount, s.Currency,
		nullAmount(s.InitialAmount), s.Period, s.CyclicalPeriod, nullDate(sch.StartOn), sch.ZoneID,
		sch.PreserveEndOfMonth, sch.RetryInterval, sch.TerminationMode, s.Anchor.String(), planType, cycles, cycleAmount,
		string(s.Status), d.OptionalID(s.NextPaymentID), s.PaymentsMade, s.AmountPaid, threeDS, s.Descriptor,
		s.OnlyDirectCurrency, s.FirstChargeAuthorizationOnly, s.FirstChargeCaptureAfter, md, s.FromBrowser, s.Email,
		s.CardLastFour, d.Time(s.CreatedOn), d.Time(s.UpdatedOn),
	}, nil
}

func scanSubscription(d Dialect, row Row) (*payment.Subscription, error) {
	var s payment.Subscription
	var id, sid, mid, tid, mode, status, next, threeDS, md string
	var initial sql.NullInt64
	var planType sql.NullString
	var startOn, anchor day
	var cycles, cycleAmount int64
	var created, updated instant
	err := row.Scan(&id, &sid, &mid, &tid, &mode, &s.Amount, &s.Currency, &initial, &s.Period, &s.CyclicalPeriod,
		&startOn, &s.Schedule.ZoneID, &s.Schedule.PreserveEndOfMonth, &s.Schedule.RetryInterval,
		&s.Schedule.TerminationMode, &anchor, &planType, &cycles, &cycleAmount, &status, &next, &s.PaymentsMade,
		&s.AmountPaid, &threeDS, &s.Descriptor, &s.OnlyDirectCurrency, &s.FirstChargeAuthorizationOnly,
		&s.FirstChargeCaptureAfter, &md, &s.FromBrowser, &s.Email, &s.CardLastFour, &created, &updated)
	if err != nil {
		return nil, err
	}
	if s.Metadata, err = parseMetadata(md); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(threeDS), &s.ThreeDS); err != nil {
		return nil, err
	}
	cols := idColumns{d: d, table: "subscriptions"}
	s.ID, s.StoreID, s.MerchantID = cols.parse("id", id), cols.parse("store_id", sid), cols.parse("merchant_id", mid)
	s.TokenID, s.NextPaymentID = cols.parse("token_id", tid), cols.parse("next_payment_id", next)
	s.Anchor, s.Schedule.StartOn = cols.date("anchor", anchor), cols.nullDate("start_on", startOn)
	if cols.err != nil {
		return nil, cols.err
	}
	if planType.Valid {
		s.Plan = &payment.SubscriptionPlan{PlanType: planType.String, FixedCycles: int(cycles), FixedCycleAmount: cycleAmount}
	}
	s.Mode, s.Status, s.InitialAmount = payment.Mode(mode), payment.SubscriptionStatus(status), amountPtr(initial)
	s.CreatedOn, s.UpdatedOn = created.t, updated.t
	return &s, nil
}

func (t *Tx) CreateSubscription(ctx context.Context, s *payment.Subscription) error {
	args, err := subscriptionArgs(t.d, s)
	if err != nil {
		return err
	}
	_, err = t.q.ExecContext(ctx, `INSERT INTO subscriptions (`+subscriptionColumns+`) VALUES (`+placeholders(len(args))+`)`, args...)
	return err
}

var subscriptionByID = newPointRead("updated_on", subscriptionColumns, "subscriptions", "id = ?")

func (t *Tx) Subscription(ctx context.Context, id uuid.UUID) (*payment.Subscription, error) {
	s, err := scanSubscription(t.d, t.readOne(ctx, subscriptionByID, t.d.ID(id)))
	if err != nil {
		return nil, notFound(err, "subscription")
	}
	return s, nil
}

func (t *Tx) UpdateSubscription(ctx context.Context, s *payment.Subscription) error {
	args, err := subscriptionArgs(t.d, s)
	if err != nil {
		return err
	}
	_, err = t.q.ExecContext(ctx, `UPDATE subscriptions SET (`+subscriptionColumns+`) = (`+placeholders(len(args))+`) WHERE id = ?`,
		append(args, t.d.ID(s.ID))...)
	return err
}

func (t *Tx) ListSubscriptions(ctx context.Context, f payment.SubscriptionFilter, p payment.ListParams) (payment.Page[*payment.Subscription], error) {
	c := conditions{d: t.d}
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
	return listPage(ctx, t, subscriptionColumns, "subscriptions", c.where(), c.args, p, scanSubscription)
}

// ---- scheduled payments

const scheduledPaymentColumns = `id, subscription_id, store_id, merchant_id, mode, cycle, due_date, zone_id, amount,
	currency, is_paid, is_last_payment, successful_payment_date, retry_date, retry_at, retry_interval,
	terminate_with_status, attempts, charge_id, created_on, updated_on`

func scheduledPaymentArgs(d Dialect, p *payment.ScheduledPayment) []any {
	return []any{
		d.ID(p.ID), d.ID(p.SubscriptionID), d.ID(p.StoreID), d.ID(p.MerchantID), string(p.Mode), p.Cycle,
		p.DueDate.String(), p.ZoneID, p.Amount, p.Currency, p.IsPaid, p.IsLastPayment, nullDate(p.SuccessfulPaymentDate),
		nullDate(p.RetryDate), nullTime(d, p.RetryAt), p.RetryInterval, string(p.TerminateWithStatus), p.Attempts,
		d.OptionalID(p.ChargeID), d.Time(p.CreatedOn), d.Time(p.UpdatedOn),
	}
}

func scanScheduledPayment(d Dialect, row Row) (*payment.ScheduledPayment, error) {
	var p payment.ScheduledPayment
	var id, subID, sid, mid, mode, terminate, chargeID string
	var due, paidOn, retryDate day
	var retryAt, created, updated instant
	err := row.Scan(&id, &subID, &sid, &mid, &mode, &p.Cycle, &due, &p.ZoneID, &p.Amount, &p.Currency, &p.IsPaid,
		&p.IsLastPayment, &paidOn, &retryDate, &retryAt, &p.RetryInterval, &terminate, &p.Attempts, &chargeID,
		&created, &updated)
	if err != nil {
		return nil, err
	}
	cols := idColumns{d: d, table: "scheduled_payments"}
	p.ID, p.SubscriptionID = cols.parse("id", id), cols.parse("subscription_id", subID)
	p.StoreID, p.MerchantID, p.ChargeID = cols.parse("store_id", sid), cols.parse("merchant_id", mid), cols.parse("charge_id", chargeID)
	p.DueDate = cols.date("due_date", due)
	p.SuccessfulPaymentDate, p.RetryDate = cols.nullDate("successful_payment_date", paidOn), cols.nullDate("retry_date", retryDate)
	if cols.err != nil {
		return nil, cols.err
	}
	p.Mode, p.TerminateWithStatus, p.RetryAt = payment.Mode(mode), payment.SubscriptionStatus(terminate), retryAt.ptr()
	p.CreatedOn, p.UpdatedOn = created.t, updated.t
	return &p, nil
}

func (t *Tx) CreateScheduledPayment(ctx context.Context, p *payment.ScheduledPayment) error {
	args := scheduledPaymentArgs(t.d, p)
	_, err := t.q.ExecContext(ctx, `INSERT INTO scheduled_payments (`+scheduledPaymentColumns+`) VALUES (`+placeholders(len(args))+`)`, args...)
	return err
}

var scheduledPaymentByID = newPointRead("updated_on", scheduledPaymentColumns, "scheduled_payments", "id = ?")

func (t *Tx) ScheduledPayment(ctx context.Context, id uuid.UUID) (*payment.ScheduledPayment, error) {
	p, err := scanScheduledPayment(t.d, t.readOne(ctx, scheduledPaymentByID, t.d.ID(id)))
	if err != nil {
		return nil, notFound(err, "scheduled payment")
	}
	return p, nil
}

func (t *Tx) UpdateScheduledPayment(ctx context.Context, p *payment.ScheduledPayment) error {
	args := scheduledPaymentArgs(t.d, p)
	_, err := t.q.ExecContext(ctx, `UPDATE scheduled_payments SET (`+scheduledPaymentColumns+`) = (`+placeholders(len(args))+`) WHERE id = ?`,
		append(args, t.d.ID(p.ID))...)
	return err
}

func (t *Tx) ListScheduledPayments(ctx context.Context, subscriptionID uuid.UUID, p payment.ListParams) (payment.Page[*payment.ScheduledPayment], error) {
	return listPage(ctx, t, scheduledPaymentColumns, "scheduled_payments", "subscription_id = ?",
		[]any{t.d.ID(subscriptionID)}, p, scanScheduledPayment)
}
