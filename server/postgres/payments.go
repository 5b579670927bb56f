package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
)

// conditions builds a WHERE clause from the filters that are set.
type conditions struct {
	parts []string
	args  []any
}

func (c *conditions) add(part string, args ...any) {
	c.parts = append(c.parts, part)
	c.args = append(c.args, args...)
}

func (c *conditions) where() string {
	if len(c.parts) == 0 {
		return "1 = 1"
	}
	return strings.Join(c.parts, " AND ")
}

// scope restricts a list to one merchant and, if given, one store.
func (c *conditions) scope(merchantID, storeID uuid.UUID) {
	c.add("merchant_id = ?", merchantID)
	if storeID != uuid.Nil {
		c.add("store_id = ?", storeID)
	}
}

func marshal(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

func metadataJSON(m payment.Metadata) (string, error) {
	if m == nil {
		return "{}", nil
	}
	return marshal(m)
}

// parseMetadata keeps numbers as json.Number so that big integers survive
// the round trip.
func parseMetadata(s string) (payment.Metadata, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var m payment.Metadata
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	return m, nil
}

func errorJSON(e *payment.PaymentError) (*string, error) {
	if e == nil {
		return nil, nil
	}
	s, err := marshal(e)
	return &s, err
}

func parseError(s *string) (*payment.PaymentError, error) {
	if s == nil {
		return nil, nil
	}
	var e payment.PaymentError
	return &e, json.Unmarshal([]byte(*s), &e)
}

// errorCode is kept in a column of its own so that the duplicate-charge
// rule can tell rejected duplicates from charges that were processed.
func errorCode(e *payment.PaymentError) *int64 {
	if e == nil {
		return nil
	}
	code := int64(e.Code)
	return &code
}

// ---- transaction tokens

const tokenColumns = `id, store_id, merchant_id, mode, payment_type, type, usage_limit, email, active, used, metadata,
	customer_id, ip_address, cardholder, exp_month, exp_year, card_bin, last_four, brand, billing,
	number_key_id, number_sealed, cvc_key_id, cvc_sealed, cvv_authorize, three_ds, from_browser, last_used_on, created_on, updated_on,
	wallet`

func tokenArgs(t *payment.TransactionToken) ([]any, error) {
	md, err := metadataJSON(t.Metadata)
	if err != nil {
		return nil, err
	}
	billing, err := marshal(t.Card.Billing)
	if err != nil {
		return nil, err
	}
	cvvAuth, err := marshal(t.CVVAuthorize)
	if err != nil {
		return nil, err
	}
	threeDS, err := marshal(t.ThreeDS)
	if err != nil {
		return nil, err
	}
	wallet, err := marshal(t.Wallet)
	if err != nil {
		return nil, err
	}
	sealed := t.Card.SealedNumber.Data
	if sealed == nil {
		sealed = []byte{} // a wallet token has no card
	}
	customer := t.CustomerID()
	return []any{
		t.ID, t.StoreID, t.MerchantID, string(t.Mode), t.PaymentType, string(t.Type),
		t.UsageLimit, t.Email, t.Active, t.Used, md, customer, t.IPAddress, t.Card.Cardholder, t.Card.ExpMonth,
		t.Card.ExpYear, t.Card.BIN, t.Card.LastFour, t.Card.Brand, billing, t.Card.SealedNumber.KeyID,
		sealed, t.Card.SealedCVC.KeyID, t.Card.SealedCVC.Data, cvvAuth, threeDS, t.FromBrowser,
		t.LastUsedOn, t.CreatedOn, t.UpdatedOn, wallet,
	}, nil
}

func scanToken(row scanner) (*payment.TransactionToken, error) {
	var t payment.TransactionToken
	var mode, typ, md, customer, billing, cvvAuth, threeDS, wallet string
	err := row.Scan(&t.ID, &t.StoreID, &t.MerchantID, &mode, &t.PaymentType, &typ, &t.UsageLimit, &t.Email, &t.Active, &t.Used, &md,
		&customer, &t.IPAddress, &t.Card.Cardholder, &t.Card.ExpMonth, &t.Card.ExpYear, &t.Card.BIN, &t.Card.LastFour,
		&t.Card.Brand, &billing, &t.Card.SealedNumber.KeyID, &t.Card.SealedNumber.Data, &t.Card.SealedCVC.KeyID,
		&t.Card.SealedCVC.Data, &cvvAuth, &threeDS, &t.FromBrowser, &t.LastUsedOn, &t.CreatedOn, &t.UpdatedOn, &wallet)
	if err != nil {
		return nil, err
	}
	if t.Metadata, err = parseMetadata(md); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(billing), &t.Card.Billing); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(cvvAuth), &t.CVVAuthorize); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(threeDS), &t.ThreeDS); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(wallet), &t.Wallet); err != nil {
		return nil, err
	}
	if len(t.Card.SealedNumber.Data) == 0 {
		t.Card.SealedNumber.Data = nil
	}
	t.Mode, t.Type = payment.Mode(mode), payment.TokenType(typ)
	return &t, nil
}

func (t *tx) CreateToken(ctx context.Context, tok *payment.TransactionToken) error {
	args, err := tokenArgs(tok)
	if err != nil {
		return err
	}
	_, err = t.tx.ExecContext(ctx, `INSERT INTO tokens (`+tokenColumns+`) VALUES (`+placeholders(len(args))+`)`, args...)
	return err
}

func (t *tx) Token(ctx context.Context, id uuid.UUID) (*payment.TransactionToken, error) {
	tok, err := scanToken(t.readOne(ctx, tokenColumns, "tokens", "id = ?", id))
	if err != nil {
		return nil, notFound(err, "transaction token")
	}
	return tok, nil
}

func (t *tx) UpdateToken(ctx context.Context, tok *payment.TransactionToken) error {
	args, err := tokenArgs(tok)
	if err != nil {
		return err
	}
	_, err = t.tx.ExecContext(ctx, `UPDATE tokens SET (`+tokenColumns+`) = (`+placeholders(len(args))+`) WHERE id = ?`,
		append(args, tok.ID)...)
	return err
}

func (t *tx) EraseTokenCVC(ctx context.Context, id uuid.UUID) error {
	_, err := t.tx.ExecContext(ctx, `UPDATE tokens SET cvc_sealed = NULL, cvc_key_id = '' WHERE id = ?`, id)
	return err
}

func (t *tx) ListTokens(ctx context.Context, f payment.TokenFilter, p payment.ListParams) (payment.Page[*payment.TransactionToken], error) {
	var c conditions
	c.scope(f.MerchantID, f.StoreID)
	if f.Mode != "" {
		c.add("mode = ?", string(f.Mode))
	}
	if f.Type != "" {
		c.add("type = ?", string(f.Type))
	}
	if f.PaymentType != "" {
		c.add("payment_type = ?", f.PaymentType)
	}
	if f.CustomerID != "" {
		c.add("customer_id = ?", f.CustomerID)
	}
	if f.Email != "" {
		c.add("email = ?", f.Email)
	}
	if f.Active != nil {
		c.add("active = ?", *f.Active)
	}
	if f.Search != "" {
		tokenSearch(&c, f.Search)
	}
	return listPage(ctx, t.tx, tokenColumns, "tokens", c.where(), c.args, p, scanToken)
}

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// ---- charges

const chargeColumns = `id, store_id, merchant_id, token_id, token_type, subscription_id, mode, requested_amount, currency,
	charged_amount, capture, capture_at, capture_state, capture_amount, descriptor, status, error, error_code, metadata, three_ds,
	redirect_endpoint, merchant_transaction_id, ip_address, last_four, email, only_direct_currency, created_on, updated_on,
	payment_type, payment_id, from_browser`

func chargeArgs(ch *payment.Charge) ([]any, error) {
	md, err := metadataJSON(ch.Metadata)
	if err != nil {
		return nil, err
	}
	perr, err := errorJSON(ch.Error)
	if err != nil {
		return nil, err
	}
	threeDS, err := marshal(ch.ThreeDS)
	if err != nil {
		return nil, err
	}
	return []any{
		ch.ID, ch.StoreID, ch.MerchantID, ch.TokenID, string(ch.TokenType),
		ch.SubscriptionID, string(ch.Mode), ch.RequestedAmount, ch.Currency, ch.ChargedAmount,
		ch.Capture, ch.CaptureAt, string(ch.CaptureState), ch.CaptureAmount, ch.Descriptor,
		string(ch.Status), perr, errorCode(ch.Error), md, threeDS, ch.RedirectEndpoint, ch.MerchantTransactionID, ch.IPAddress,
		ch.CardLastFour, ch.Email, ch.OnlyDirectCurrency, ch.CreatedOn, ch.UpdatedOn,
		ch.PaymentType, nullID(ch.PaymentID), ch.FromBrowser,
	}, nil
}

func scanCharge(row scanner) (*payment.Charge, error) {
	var ch payment.Charge
	var ttype, mode, captureState, status, md, threeDS string
	var perr *string
	var errCode *int64
	var payID *uuid.UUID
	err := row.Scan(&ch.ID, &ch.StoreID, &ch.MerchantID, &ch.TokenID, &ttype, &ch.SubscriptionID, &mode, &ch.RequestedAmount,
		&ch.Currency, &ch.ChargedAmount, &ch.Capture, &ch.CaptureAt, &captureState, &ch.CaptureAmount, &ch.Descriptor, &status, &perr, &errCode, &md, &threeDS,
		&ch.RedirectEndpoint, &ch.MerchantTransactionID, &ch.IPAddress, &ch.CardLastFour, &ch.Email, &ch.OnlyDirectCurrency,
		&ch.CreatedOn, &ch.UpdatedOn, &ch.PaymentType, &payID, &ch.FromBrowser)
	if err != nil {
		return nil, err
	}
	if ch.Metadata, err = parseMetadata(md); err != nil {
		return nil, err
	}
	if ch.Error, err = parseError(perr); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(threeDS), &ch.ThreeDS); err != nil {
		return nil, err
	}
	if payID != nil {
		ch.PaymentID = *payID
	}
	ch.TokenType, ch.Mode = payment.TokenType(ttype), payment.Mode(mode)
	ch.CaptureAt = utc(ch.CaptureAt)
	ch.CaptureState, ch.Status = payment.CaptureState(captureState), payment.ChargeStatus(status)
	return &ch, nil
}

func (t *tx) CreateCharge(ctx context.Context, ch *payment.Charge) error {
	args, err := chargeArgs(ch)
	if err != nil {
		return err
	}
	_, err = t.tx.ExecContext(ctx, `INSERT INTO charges (`+chargeColumns+`) VALUES (`+placeholders(len(args))+`)`, args...)
	return err
}

func (t *tx) Charge(ctx context.Context, id uuid.UUID) (*payment.Charge, error) {
	ch, err := scanCharge(t.readOne(ctx, chargeColumns, "charges", "id = ?", id))
	if err != nil {
		return nil, notFound(err, "charge")
	}
	return ch, nil
}

func (t *tx) UpdateCharge(ctx context.Context, ch *payment.Charge) error {
	args, err := chargeArgs(ch)
	if err != nil {
		return err
	}
	_, err = t.tx.ExecContext(ctx, `UPDATE charges SET (`+chargeColumns+`) = (`+placeholders(len(args))+`) WHERE id = ?`,
		append(args, ch.ID)...)
	return err
}

func timeRange(c *conditions, from, to *time.Time) {
	if from != nil {
		c.add("created_on >= ?", *from)
	}
	if to != nil {
		c.add("created_on <= ?", *to)
	}
}

func (t *tx) ListCharges(ctx context.Context, f payment.ChargeFilter, p payment.ListParams) (payment.Page[*payment.Charge], error) {
	var c conditions
	c.scope(f.MerchantID, f.StoreID)
	if f.Mode != "" {
		c.add("mode = ?", string(f.Mode))
	}
	if f.Status != "" {
		c.add("status = ?", string(f.Status))
	}
	if f.Currency != "" {
		c.add("currency = ?", f.Currency)
	}
	timeRange(&c, f.From, f.To)
	if f.AmountFrom != nil {
		c.add("requested_amount >= ?", *f.AmountFrom)
	}
	if f.AmountTo != nil {
		c.add("requested_amount <= ?", *f.AmountTo)
	}
	if f.TokenID != uuid.Nil {
		c.add("token_id = ?", f.TokenID)
	}
	if f.SubscriptionID != uuid.Nil {
		c.add("subscription_id = ?", f.SubscriptionID)
	}
	if f.PaymentID != uuid.Nil {
		c.add("payment_id = ?", f.PaymentID)
	}
	if f.LastFour != "" {
		c.add("last_four = ?", f.LastFour)
	}
	if f.Email != "" {
		c.add("email = ?", f.Email)
	}
	if f.MetadataKey != "" {
		metadataMatches(&c, f.MetadataKey, f.MetadataValue)
	}
	chargeCard(&c, f)
	return listPage(ctx, t.tx, chargeColumns, "charges", c.where(), c.args, p, scanCharge)
}

// RecentCharge first marks the token's row inside an Update (lockRow): a
// second charge on the token waits there until the first one's
// transaction ends and then fails with a serialization failure, so that
// Update runs it again on a snapshot that holds the first one's charge.
// Of concurrent identical charges on one token, in any number of
// processes, exactly one is accepted.
func (t *tx) RecentCharge(ctx context.Context, tokenID uuid.UUID, amount int64, currency string, since time.Time) (bool, error) {
	if t.write {
		if err := t.lockRow(ctx, "tokens", "updated_on", tokenID); err != nil {
			return false, err
		}
	}
	var found bool
	err := t.tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM charges
		WHERE token_id = ? AND requested_amount = ? AND currency = ? AND created_on >= ?
			AND (error_code IS NULL OR error_code != ?))`,
		tokenID, amount, currency, since, int64(payment.ErrTooManyCharges)).Scan(&found)
	return found, err
}

// lockRow makes the row of table with id a row this transaction wrote:
// it holds the row's lock until it ends, and a REPEATABLE READ transaction
// that locks or writes the row after it fails (40001) once it commits,
// which a SELECT … FOR UPDATE alone would not make it do. column (one no
// index holds) is set to its own value: the write changes nothing anyone
// reads. A missing row locks nothing and is no error (the rule's own query
// then finds nothing either).
func (t *tx) lockRow(ctx context.Context, table, column string, id uuid.UUID) error {
	_, err := t.tx.ExecContext(ctx, `UPDATE `+table+` SET `+column+` = `+column+` WHERE id = ?`, id)
	return err
}

// ---- refunds

const refundColumns = `id, store_id, merchant_id, charge_id, mode, status, amount, currency, reason, message, error,
	metadata, created_on, updated_on`

func refundArgs(r *payment.Refund) ([]any, error) {
	md, err := metadataJSON(r.Metadata)
	if err != nil {
		return nil, err
	}
	perr, err := errorJSON(r.Error)
	if err != nil {
		return nil, err
	}
	return []any{r.ID, r.StoreID, r.MerchantID, r.ChargeID, string(r.Mode),
		string(r.Status), r.Amount, r.Currency, r.Reason, r.Message, perr, md, r.CreatedOn, r.UpdatedOn}, nil
}

func scanRefund(row scanner) (*payment.Refund, error) {
	var r payment.Refund
	var mode, status, md string
	var perr *string
	err := row.Scan(&r.ID, &r.StoreID, &r.MerchantID, &r.ChargeID, &mode, &status, &r.Amount, &r.Currency, &r.Reason,
		&r.Message, &perr, &md, &r.CreatedOn, &r.UpdatedOn)
	if err != nil {
		return nil, err
	}
	if r.Metadata, err = parseMetadata(md); err != nil {
		return nil, err
	}
	if r.Error, err = parseError(perr); err != nil {
		return nil, err
	}
	r.Mode, r.Status = payment.Mode(mode), payment.OperationStatus(status)
	return &r, nil
}

func (t *tx) CreateRefund(ctx context.Context, r *payment.Refund) error {
	args, err := refundArgs(r)
	if err != nil {
		return err
	}
	_, err = t.tx.ExecContext(ctx, `INSERT INTO refunds (`+refundColumns+`) VALUES (`+placeholders(len(args))+`)`, args...)
	return err
}

func (t *tx) Refund(ctx context.Context, storeID, chargeID, id uuid.UUID) (*payment.Refund, error) {
	return t.refundWhere(ctx, "id = ? AND store_id = ? AND charge_id = ?", id, storeID, chargeID)
}

func (t *tx) QueuedRefund(ctx context.Context, id uuid.UUID) (*payment.Refund, error) {
	return t.refundWhere(ctx, "id = ?", id)
}

func (t *tx) refundWhere(ctx context.Context, where string, args ...any) (*payment.Refund, error) {
	r, err := scanRefund(t.readOne(ctx, refundColumns, "refunds", where, args...))
	if err != nil {
		return nil, notFound(err, "refund")
	}
	return r, nil
}

func (t *tx) UpdateRefund(ctx context.Context, r *payment.Refund) error {
	args, err := refundArgs(r)
	if err != nil {
		return err
	}
	_, err = t.tx.ExecContext(ctx, `UPDATE refunds SET (`+refundColumns+`) = (`+placeholders(len(args))+`) WHERE id = ?`,
		append(args, r.ID)...)
	return err
}

func (t *tx) ListRefunds(ctx context.Context, chargeID uuid.UUID, p payment.ListParams) (payment.Page[*payment.Refund], error) {
	return listPage(ctx, t.tx, refundColumns, "refunds", "charge_id = ?", []any{chargeID}, p, scanRefund)
}

// RefundedAmount marks the charge's row inside an Update (lockRow), so
// that two refunds of one charge take turns: the second runs again after
// the first one's COMMIT and sums its refund too, and cannot promise back
// more than was charged.
func (t *tx) RefundedAmount(ctx context.Context, chargeID uuid.UUID) (int64, error) {
	if t.write {
		if err := t.lockRow(ctx, "charges", "updated_on", chargeID); err != nil {
			return 0, err
		}
	}
	var sum int64
	err := t.tx.QueryRowContext(ctx, `SELECT COALESCE(SUM(amount), 0) FROM refunds WHERE charge_id = ? AND status IN ('pending', 'successful')`,
		chargeID).Scan(&sum)
	return sum, err
}

func (t *tx) PendingRefundFor(ctx context.Context, chargeID uuid.UUID) (bool, error) {
	var n int
	err := t.tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM refunds WHERE charge_id = ? AND status = 'pending'`, chargeID).Scan(&n)
	return n > 0, err
}

// ---- cancels

const cancelColumns = `id, store_id, merchant_id, charge_id, mode, status, error, metadata, created_on, updated_on`

func cancelArgs(c *payment.Cancel) ([]any, error) {
	md, err := metadataJSON(c.Metadata)
	if err != nil {
		return nil, err
	}
	perr, err := errorJSON(c.Error)
	if err != nil {
		return nil, err
	}
	return []any{c.ID, c.StoreID, c.MerchantID, c.ChargeID, string(c.Mode),
		string(c.Status), perr, md, c.CreatedOn, c.UpdatedOn}, nil
}

func scanCancel(row scanner) (*payment.Cancel, error) {
	var c payment.Cancel
	var mode, status, md string
	var perr *string
	if err := row.Scan(&c.ID, &c.StoreID, &c.MerchantID, &c.ChargeID, &mode, &status, &perr, &md, &c.CreatedOn,
		&c.UpdatedOn); err != nil {
		return nil, err
	}
	var err error
	if c.Metadata, err = parseMetadata(md); err != nil {
		return nil, err
	}
	if c.Error, err = parseError(perr); err != nil {
		return nil, err
	}
	c.Mode, c.Status = payment.Mode(mode), payment.OperationStatus(status)
	return &c, nil
}

func (t *tx) CreateCancel(ctx context.Context, c *payment.Cancel) error {
	args, err := cancelArgs(c)
	if err != nil {
		return err
	}
	_, err = t.tx.ExecContext(ctx, `INSERT INTO cancels (`+cancelColumns+`) VALUES (`+placeholders(len(args))+`)`, args...)
	return err
}

func (t *tx) Cancel(ctx context.Context, storeID, chargeID, id uuid.UUID) (*payment.Cancel, error) {
	return t.cancelWhere(ctx, "id = ? AND store_id = ? AND charge_id = ?", id, storeID, chargeID)
}

func (t *tx) QueuedCancel(ctx context.Context, id uuid.UUID) (*payment.Cancel, error) {
	return t.cancelWhere(ctx, "id = ?", id)
}

func (t *tx) cancelWhere(ctx context.Context, where string, args ...any) (*payment.Cancel, error) {
	c, err := scanCancel(t.readOne(ctx, cancelColumns, "cancels", where, args...))
	if err != nil {
		return nil, notFound(err, "cancel")
	}
	return c, nil
}

func (t *tx) UpdateCancel(ctx context.Context, c *payment.Cancel) error {
	args, err := cancelArgs(c)
	if err != nil {
		return err
	}
	_, err = t.tx.ExecContext(ctx, `UPDATE cancels SET (`+cancelColumns+`) = (`+placeholders(len(args))+`) WHERE id = ?`,
		append(args, c.ID)...)
	return err
}

func (t *tx) ListCancels(ctx context.Context, chargeID uuid.UUID, p payment.ListParams) (payment.Page[*payment.Cancel], error) {
	return listPage(ctx, t.tx, cancelColumns, "cancels", "charge_id = ?", []any{chargeID}, p, scanCancel)
}

func (t *tx) PendingCancelFor(ctx context.Context, chargeID uuid.UUID) (bool, error) {
	var n int
	err := t.tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM cancels WHERE charge_id = ? AND status = 'pending'`, chargeID).Scan(&n)
	return n > 0, err
}

// ---- ledger

const ledgerColumns = `id, store_id, merchant_id, charge_id, type, status, amount, currency, mode, metadata, created_on, updated_on`

func (t *tx) PutLedgerEntry(ctx context.Context, e *payment.LedgerEntry) error {
	md, err := metadataJSON(e.Metadata)
	if err != nil {
		return err
	}
	_, err = t.tx.ExecContext(ctx, `INSERT INTO ledger (`+ledgerColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET status = excluded.status, amount = excluded.amount,
			metadata = excluded.metadata, updated_on = excluded.updated_on`,
		e.ResourceID, e.StoreID, e.MerchantID, e.ChargeID, e.Type, e.Status,
		e.Amount, e.Currency, string(e.Mode), md, e.CreatedOn, e.UpdatedOn)
	return err
}

func scanLedger(row scanner) (*payment.LedgerEntry, error) {
	var e payment.LedgerEntry
	var mode, md string
	if err := row.Scan(&e.ResourceID, &e.StoreID, &e.MerchantID, &e.ChargeID, &e.Type, &e.Status, &e.Amount, &e.Currency,
		&mode, &md, &e.CreatedOn, &e.UpdatedOn); err != nil {
		return nil, err
	}
	var err error
	if e.Metadata, err = parseMetadata(md); err != nil {
		return nil, err
	}
	e.Mode = payment.Mode(mode)
	return &e, nil
}

func (t *tx) ListLedger(ctx context.Context, f payment.LedgerFilter, p payment.ListParams) (payment.Page[*payment.LedgerEntry], error) {
	var c conditions
	c.scope(f.MerchantID, f.StoreID)
	timeRange(&c, f.From, f.To)
	if f.Status != "" {
		c.add("status = ?", f.Status)
	}
	if f.Type != "" {
		c.add("type = ?", f.Type)
	}
	if f.Mode != "" {
		c.add("mode = ?", string(f.Mode))
	}
	if f.Search != "" {
		ledgerSearch(&c, f.Search)
	}
	if f.MetadataKey != "" {
		metadataMatches(&c, f.MetadataKey, f.MetadataValue)
	}
	return listPage(ctx, t.tx, ledgerColumns, "ledger", c.where(), c.args, p, scanLedger)
}

// ---- the work queue

const workColumns = `seq, kind, object_id, attempts, due_at, claimed_by, lease_until, last_error`

func scanWork(row scanner) (payment.Work, error) {
	var w payment.Work
	var seq int64
	var kind string
	var lease *time.Time
	if err := row.Scan(&seq, &kind, &w.ID, &w.Attempts, &w.Due, &w.ClaimedBy, &lease, &w.LastError); err != nil {
		return w, err
	}
	w.Kind = payment.WorkKind(kind)
	if w.ClaimedBy != "" && lease != nil {
		w.LeaseUntil = *lease
	}
	return w, nil
}

func (t *tx) EnqueueWork(ctx context.Context, kind payment.WorkKind, id uuid.UUID, due time.Time) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO work (kind, object_id, due_at) VALUES (?, ?, ?)
		ON CONFLICT (kind, object_id) DO NOTHING`, string(kind), id, due)
	return err
}

// RescheduleWork moves only due_at of an item already queued: its seq,
// attempts, last error and claim stay.
func (t *tx) RescheduleWork(ctx context.Context, kind payment.WorkKind, id uuid.UUID, due time.Time) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO work (kind, object_id, due_at) VALUES (?, ?, ?)
		ON CONFLICT (kind, object_id) DO UPDATE SET due_at = excluded.due_at`, string(kind), id, due)
	return err
}

func (t *tx) Work(ctx context.Context, kind payment.WorkKind, id uuid.UUID) (*payment.Work, error) {
	w, err := scanWork(t.tx.QueryRowContext(ctx, `SELECT `+workColumns+` FROM work WHERE kind = ? AND object_id = ?`,
		string(kind), id))
	if err != nil {
		return nil, notFound(err, "work")
	}
	return &w, nil
}

// ClaimWork locks the items it takes FOR UPDATE SKIP LOCKED: a claim
// running at the same time in another transaction (or process) skips the
// rows this one is taking instead of waiting for them, and takes others.
// A row another claim took and committed meanwhile is checked again
// against the WHERE clause, so its new lease keeps it out.
func (t *tx) ClaimWork(ctx context.Context, claimant string, now, leaseUntil time.Time, limit int) ([]payment.Work, error) {
	if claimant == "" {
		return nil, fmt.Errorf("postgres: claiming work needs a claimant")
	}
	return queryAll(ctx, t.tx, func(row scanner) (payment.Work, error) { return scanWork(row) }, `WITH due AS (
			SELECT seq FROM work WHERE due_at <= ? AND (lease_until IS NULL OR lease_until <= ?)
			ORDER BY due_at, seq LIMIT ? FOR UPDATE SKIP LOCKED),
		claimed AS (
			UPDATE work SET claimed_by = ?, lease_until = ? FROM due WHERE work.seq = due.seq
			RETURNING `+qualified("work", workColumns)+`)
		SELECT `+workColumns+` FROM claimed ORDER BY due_at, seq`,
		now, now, limit, claimant, leaseUntil)
}

// qualified prefixes each of a list of columns with table.
func qualified(table, columns string) string {
	parts := strings.Split(columns, ",")
	for i, c := range parts {
		parts[i] = table + "." + strings.TrimSpace(c)
	}
	return strings.Join(parts, ", ")
}

// heldBy is the condition that an item is still claimed by w's claimant;
// an empty claimant holds nothing.
const heldBy = `kind = ? AND object_id = ? AND claimed_by = ? AND claimed_by != ''`

func heldArgs(w payment.Work) []any { return []any{string(w.Kind), w.ID, w.ClaimedBy} }

func (t *tx) ExtendWorkLease(ctx context.Context, w payment.Work, until time.Time) error {
	_, err := t.tx.ExecContext(ctx, `UPDATE work SET lease_until = ? WHERE `+heldBy, append([]any{until}, heldArgs(w)...)...)
	return err
}

func (t *tx) CompleteWork(ctx context.Context, w payment.Work) error {
	_, err := t.tx.ExecContext(ctx, `DELETE FROM work WHERE `+heldBy, heldArgs(w)...)
	return err
}

func (t *tx) RetryWork(ctx context.Context, w payment.Work, due time.Time, lastError string) error {
	_, err := t.tx.ExecContext(ctx, `UPDATE work SET attempts = attempts + 1, due_at = ?, last_error = ?, claimed_by = '', lease_until = NULL
		WHERE `+heldBy, append([]any{due, lastError}, heldArgs(w)...)...)
	return err
}

func (t *tx) ReleaseWork(ctx context.Context, w payment.Work) error {
	_, err := t.tx.ExecContext(ctx, `UPDATE work SET claimed_by = '', lease_until = NULL WHERE `+heldBy, heldArgs(w)...)
	return err
}

// WorkQueueStats is one pass over the work table, grouped by kind. An item
// is due when due_at <= now, the very comparison of ClaimWork (now is sent
// as a timestamptz, truncated to the microsecond as the due times stored
// were); the lease is not looked at, so a claimed item still counts as
// due.
//
// Cost: every queued row counts in some column, so no index can spare the
// query a row: it is a sequential scan of work and a hash aggregate,
// O(queued items), under MVCC (it takes no lock a worker waits for). The
// table holds only pending work (CompleteWork deletes an item), hundreds
// of rows normally; a backlog of 100,000 reads in about 25 ms, once a
// scrape. A covering index (kind, due_at, attempts) would only shrink the
// pass, at a cost on every enqueue, retry, reschedule and completion, so
// there is none. Kinds sort COLLATE "C", byte by byte as Go sorts them,
// whatever the database's collation.
func (t *tx) WorkQueueStats(ctx context.Context, now time.Time) ([]payment.WorkQueueStats, error) {
	rows, err := t.tx.QueryContext(ctx, `SELECT kind,
			COUNT(*) FILTER (WHERE due_at <= ?),
			COUNT(*) FILTER (WHERE due_at > ?),
			MIN(due_at) FILTER (WHERE due_at <= ?),
			COUNT(*) FILTER (WHERE attempts > 0),
			MAX(attempts)
		FROM work GROUP BY kind ORDER BY kind COLLATE "C"`, now, now, now)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []payment.WorkQueueStats{}
	for rows.Next() {
		var st payment.WorkQueueStats
		var kind string
		var oldest *time.Time
		if err := rows.Scan(&kind, &st.Due, &st.Scheduled, &oldest, &st.Retrying, &st.MaxAttempts); err != nil {
			return nil, err
		}
		st.Kind = payment.WorkKind(kind)
		if oldest != nil {
			st.OldestDue = oldest.UTC()
		}
		out = append(out, st)
	}
	return out, rows.Err()
}

// ---- approvals

const approvalColumns = `key, kind, resource_type, resource_id, store_id, merchant_id, mode, brand, call_method,
	amount, currency, last_four, tries, status, expires_on, created_on, updated_on`

func approvalArgs(a *payment.Approval) []any {
	return []any{
		a.Key, string(a.Kind), a.ResourceType, a.ResourceID, a.StoreID, a.MerchantID,
		string(a.Mode), a.Brand, a.CallMethod, a.Amount, a.Currency, a.LastFour, a.Tries, string(a.Status),
		a.ExpiresOn, a.CreatedOn, a.UpdatedOn,
	}
}

func scanApproval(row scanner) (*payment.Approval, error) {
	var a payment.Approval
	var kind, mode, status string
	err := row.Scan(&a.Key, &kind, &a.ResourceType, &a.ResourceID, &a.StoreID, &a.MerchantID, &mode, &a.Brand, &a.CallMethod,
		&a.Amount, &a.Currency, &a.LastFour, &a.Tries, &status, &a.ExpiresOn, &a.CreatedOn, &a.UpdatedOn)
	if err != nil {
		return nil, err
	}
	a.Kind, a.Mode, a.Status = payment.ApprovalKind(kind), payment.Mode(mode), payment.ApprovalStatus(status)
	return &a, nil
}

func (t *tx) CreateApproval(ctx context.Context, a *payment.Approval) error {
	args := approvalArgs(a)
	_, err := t.tx.ExecContext(ctx, `INSERT INTO approvals (`+approvalColumns+`) VALUES (`+placeholders(len(args))+`)`, args...)
	return err
}

func (t *tx) Approval(ctx context.Context, key string) (*payment.Approval, error) {
	a, err := scanApproval(t.readOne(ctx, approvalColumns, "approvals", "key = ?", key))
	if err != nil {
		return nil, notFound(err, "approval")
	}
	return a, nil
}

// ApprovalFor breaks a tie of creation times by seq, the order of
// insertion.
func (t *tx) ApprovalFor(ctx context.Context, resourceID uuid.UUID) (*payment.Approval, error) {
	a, err := scanApproval(t.readOne(ctx, approvalColumns, "approvals",
		"key = (SELECT key FROM approvals WHERE resource_id = ? ORDER BY created_on DESC, seq DESC LIMIT 1)", resourceID))
	if err != nil {
		return nil, notFound(err, "approval")
	}
	return a, nil
}

func (t *tx) UpdateApproval(ctx context.Context, a *payment.Approval) error {
	args := approvalArgs(a)
	_, err := t.tx.ExecContext(ctx, `UPDATE approvals SET (`+approvalColumns+`) = (`+placeholders(len(args))+`) WHERE key = ?`,
		append(args, a.Key)...)
	return err
}
