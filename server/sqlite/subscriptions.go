package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
)

// ---- calendar days, stored as TEXT YYYY-MM-DD

func nullDate(d *payment.Date) sql.NullString {
	if d == nil {
		return sql.NullString{}
	}
	return sql.NullString{String: d.String(), Valid: true}
}

// date parses a day column of the row; a value that is not YYYY-MM-DD is
// an error naming the table and column, like a corrupt id.
func (c *idColumns) date(column, s string) payment.Date {
	d, ok := payment.ParseDate(s)
	if !ok && c.err == nil {
		c.err = fmt.Errorf("sqlite: corrupt date in %s.%s: %q", c.table, column, s)
	}
	return d
}

func (c *idColumns) nullDate(column string, s sql.NullString) *payment.Date {
	if !s.Valid {
		return nil
	}
	d := c.date(column, s.String)
	return &d
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
	var planType sql.NullString
	var cycles, cycleAmount int64
	if pl := s.Plan; pl != nil {
		planType = sql.NullString{String: pl.PlanType, Valid: true}
		cycles, cycleAmount = int64(pl.FixedCycles), pl.FixedCycleAmount
	}
	sch := s.Schedule
	return []any{
		s.ID.String(), s.StoreID.String(), s.MerchantID.String(), s.TokenID.String(), string(s.Mode), s.Amount, s.Currency,
		nullAmount(s.InitialAmount), s.Period, s.CyclicalPeriod, nullDate(sch.StartOn), sch.ZoneID,
		sch.PreserveEndOfMonth, sch.RetryInterval, sch.TerminationMode, s.Anchor.String(), planType, cycles, cycleAmount,
		string(s.Status), idString(s.NextPaymentID), s.PaymentsMade, s.AmountPaid, threeDS, s.Descriptor,
		s.OnlyDirectCurrency, s.FirstChargeAuthorizationOnly, s.FirstChargeCaptureAfter, md, s.FromBrowser, s.Email,
		s.CardLastFour, micros(s.CreatedOn), micros(s.UpdatedOn),
	}, nil
}

func scanSubscription(row scanner) (*payment.Subscription, error) {
	var s payment.Subscription
	var id, sid, mid, tid, mode, anchor, status, next, threeDS, md string
	var initial sql.NullInt64
	var startOn, planType sql.NullString
	var cycles, cycleAmount int64
	var created, updated int64
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
	cols := idColumns{table: "subscriptions"}
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
	s.CreatedOn, s.UpdatedOn = fromMicros(created), fromMicros(updated)
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
	s, err := scanSubscription(t.tx.QueryRowContext(ctx, `SELECT `+subscriptionColumns+` FROM subscriptions WHERE id = ?`, id.String()))
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
		append(args, s.ID.String())...)
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
// Search finds: the term is the subscription's id or its token's, its
// e-mail contains it (ASCII letters in any case; instr gives % and _ no
// meaning), it is the card's last four, or it is the text of one of its
// metadata values (as metadataMatches compares one).
func subscriptionSearch(c *conditions, q string) {
	c.add("(id = ? OR token_id = ? OR "+containsFold("email")+" OR last_four = ? OR "+metadataValueIs+")", q, q, q, q, q)
}

// metadataValueIs is the condition "some metadata value's text is ?":
// a string itself, a number as its JSON text (-> keeps 1.50 and big
// integers as written), a boolean as true/false; arrays never match.
var metadataValueIs = strings.Join(strings.Fields(`EXISTS (SELECT 1 FROM json_each(metadata) AS j WHERE
	CASE j.type WHEN 'text' THEN j.value
		WHEN 'integer' THEN metadata -> j.fullkey
		WHEN 'real' THEN metadata -> j.fullkey
		WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' END = ?)`), " ")

// ---- scheduled payments

const scheduledPaymentColumns = `id, subscription_id, store_id, merchant_id, mode, cycle, due_date, zone_id, amount,
	currency, is_paid, is_last_payment, successful_payment_date, retry_date, retry_at, retry_interval,
	terminate_with_status, attempts, charge_id, created_on, updated_on`

func scheduledPaymentArgs(p *payment.ScheduledPayment) []any {
	return []any{
		p.ID.String(), p.SubscriptionID.String(), p.StoreID.String(), p.MerchantID.String(), string(p.Mode), p.Cycle,
		p.DueDate.String(), p.ZoneID, p.Amount, p.Currency, p.IsPaid, p.IsLastPayment, nullDate(p.SuccessfulPaymentDate),
		nullDate(p.RetryDate), nullMicros(p.RetryAt), p.RetryInterval, string(p.TerminateWithStatus), p.Attempts,
		idString(p.ChargeID), micros(p.CreatedOn), micros(p.UpdatedOn),
	}
}

func scanScheduledPayment(row scanner) (*payment.ScheduledPayment, error) {
	var p payment.ScheduledPayment
	var id, subID, sid, mid, mode, due, terminate, chargeID string
	var paidOn, retryDate sql.NullString
	var retryAt sql.NullInt64
	var created, updated int64
	err := row.Scan(&id, &subID, &sid, &mid, &mode, &p.Cycle, &due, &p.ZoneID, &p.Amount, &p.Currency, &p.IsPaid,
		&p.IsLastPayment, &paidOn, &retryDate, &retryAt, &p.RetryInterval, &terminate, &p.Attempts, &chargeID,
		&created, &updated)
	if err != nil {
		return nil, err
	}
	cols := idColumns{table: "scheduled_payments"}
	p.ID, p.SubscriptionID = cols.parse("id", id), cols.parse("subscription_id", subID)
	p.StoreID, p.MerchantID, p.ChargeID = cols.parse("store_id", sid), cols.parse("merchant_id", mid), cols.parse("charge_id", chargeID)
	p.DueDate = cols.date("due_date", due)
	p.SuccessfulPaymentDate, p.RetryDate = cols.nullDate("successful_payment_date", paidOn), cols.nullDate("retry_date", retryDate)
	if cols.err != nil {
		return nil, cols.err
	}
	p.Mode, p.TerminateWithStatus, p.RetryAt = payment.Mode(mode), payment.SubscriptionStatus(terminate), timePtr(retryAt)
	p.CreatedOn, p.UpdatedOn = fromMicros(created), fromMicros(updated)
	return &p, nil
}

func (t *tx) CreateScheduledPayment(ctx context.Context, p *payment.ScheduledPayment) error {
	args := scheduledPaymentArgs(p)
	_, err := t.tx.ExecContext(ctx, `INSERT INTO scheduled_payments (`+scheduledPaymentColumns+`) VALUES (`+placeholders(len(args))+`)`, args...)
	return err
}

func (t *tx) ScheduledPayment(ctx context.Context, id uuid.UUID) (*payment.ScheduledPayment, error) {
	p, err := scanScheduledPayment(t.tx.QueryRowContext(ctx, `SELECT `+scheduledPaymentColumns+` FROM scheduled_payments WHERE id = ?`, id.String()))
	if err != nil {
		return nil, notFound(err, "scheduled payment")
	}
	return p, nil
}

func (t *tx) UpdateScheduledPayment(ctx context.Context, p *payment.ScheduledPayment) error {
	args := scheduledPaymentArgs(p)
	_, err := t.tx.ExecContext(ctx, `UPDATE scheduled_payments SET (`+scheduledPaymentColumns+`) = (`+placeholders(len(args))+`) WHERE id = ?`,
		append(args, p.ID.String())...)
	return err
}

func (t *tx) ListScheduledPayments(ctx context.Context, subscriptionID uuid.UUID, p payment.ListParams) (payment.Page[*payment.ScheduledPayment], error) {
	return listPage(ctx, t.tx, scheduledPaymentColumns, "scheduled_payments", "subscription_id = ?",
		[]any{subscriptionID.String()}, p, scanScheduledPayment)
}
