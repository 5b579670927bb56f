package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
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
	c.add("merchant_id = ?", merchantID.String())
	if storeID != uuid.Nil {
		c.add("store_id = ?", storeID.String())
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
	if s == "{}" {
		// What metadataJSON writes for none: most rows, read without a
		// decoder (eleven allocations of a charge's read).
		return payment.Metadata{}, nil
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var m payment.Metadata
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	return m, nil
}

func errorJSON(e *payment.PaymentError) (sql.NullString, error) {
	if e == nil {
		return sql.NullString{}, nil
	}
	s, err := marshal(e)
	return sql.NullString{String: s, Valid: true}, err
}

func parseError(s sql.NullString) (*payment.PaymentError, error) {
	if !s.Valid {
		return nil, nil
	}
	var e payment.PaymentError
	return &e, json.Unmarshal([]byte(s.String), &e)
}

// errorCode is kept in a column of its own so that the duplicate-charge
// rule can tell rejected duplicates from charges that were processed.
func errorCode(e *payment.PaymentError) sql.NullInt64 {
	if e == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: int64(e.Code), Valid: true}
}

func nullAmount(v *int64) sql.NullInt64 {
	if v == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: *v, Valid: true}
}

func amountPtr(v sql.NullInt64) *int64 {
	if !v.Valid {
		return nil
	}
	return &v.Int64
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
		t.ID.String(), t.StoreID.String(), t.MerchantID.String(), string(t.Mode), t.PaymentType, string(t.Type),
		t.UsageLimit, t.Email, t.Active, t.Used, md, customer, t.IPAddress, t.Card.Cardholder, t.Card.ExpMonth,
		t.Card.ExpYear, t.Card.BIN, t.Card.LastFour, t.Card.Brand, billing, t.Card.SealedNumber.KeyID,
		sealed, t.Card.SealedCVC.KeyID, t.Card.SealedCVC.Data, cvvAuth, threeDS, t.FromBrowser,
		nullMicros(t.LastUsedOn), micros(t.CreatedOn), micros(t.UpdatedOn), wallet,
	}, nil
}

func scanToken(row scanner) (*payment.TransactionToken, error) {
	var t payment.TransactionToken
	var id, sid, mid, mode, typ, md, customer, billing, cvvAuth, threeDS, wallet string
	var lastUsed sql.NullInt64
	var created, updated int64
	err := row.Scan(&id, &sid, &mid, &mode, &t.PaymentType, &typ, &t.UsageLimit, &t.Email, &t.Active, &t.Used, &md,
		&customer, &t.IPAddress, &t.Card.Cardholder, &t.Card.ExpMonth, &t.Card.ExpYear, &t.Card.BIN, &t.Card.LastFour,
		&t.Card.Brand, &billing, &t.Card.SealedNumber.KeyID, &t.Card.SealedNumber.Data, &t.Card.SealedCVC.KeyID,
		&t.Card.SealedCVC.Data, &cvvAuth, &threeDS, &t.FromBrowser, &lastUsed, &created, &updated, &wallet)
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
	ids := idColumns{table: "tokens"}
	t.ID, t.StoreID, t.MerchantID = ids.parse("id", id), ids.parse("store_id", sid), ids.parse("merchant_id", mid)
	if ids.err != nil {
		return nil, ids.err
	}
	t.Mode, t.Type = payment.Mode(mode), payment.TokenType(typ)
	t.LastUsedOn, t.CreatedOn, t.UpdatedOn = timePtr(lastUsed), fromMicros(created), fromMicros(updated)
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
	tok, err := scanToken(t.tx.QueryRowContext(ctx, `SELECT `+tokenColumns+` FROM tokens WHERE id = ?`, id.String()))
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
		append(args, tok.ID.String())...)
	return err
}

func (t *tx) EraseTokenCVC(ctx context.Context, id uuid.UUID) error {
	_, err := t.tx.ExecContext(ctx, `UPDATE tokens SET cvc_sealed = NULL, cvc_key_id = '' WHERE id = ?`, id.String())
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
		ch.ID.String(), ch.StoreID.String(), ch.MerchantID.String(), ch.TokenID.String(), string(ch.TokenType),
		idString(ch.SubscriptionID), string(ch.Mode), ch.RequestedAmount, ch.Currency, nullAmount(ch.ChargedAmount),
		ch.Capture, nullMicros(ch.CaptureAt), string(ch.CaptureState), ch.CaptureAmount, ch.Descriptor,
		string(ch.Status), perr, errorCode(ch.Error), md, threeDS, ch.RedirectEndpoint, ch.MerchantTransactionID, ch.IPAddress,
		ch.CardLastFour, ch.Email, ch.OnlyDirectCurrency, micros(ch.CreatedOn), micros(ch.UpdatedOn),
		ch.PaymentType, nullID(ch.PaymentID), ch.FromBrowser,
	}, nil
}

func scanCharge(row scanner) (*payment.Charge, error) {
	// The charge and its raw columns in one allocation: each variable
	// whose address goes to Scan escapes, one allocation apiece (twenty of
	// a charge's read).
	var sc struct {
		ch                                                                       payment.Charge
		id, sid, mid, tid, ttype, subID, mode, captureState, status, md, threeDS string
		charged, captureAt, errCode                                              sql.NullInt64
		perr, payID                                                              sql.NullString
		created, updated                                                         int64
	}
	ch := &sc.ch
	err := row.Scan(&sc.id, &sc.sid, &sc.mid, &sc.tid, &sc.ttype, &sc.subID, &sc.mode, &ch.RequestedAmount, &ch.Currency, &sc.charged,
		&ch.Capture, &sc.captureAt, &sc.captureState, &ch.CaptureAmount, &ch.Descriptor, &sc.status, &sc.perr, &sc.errCode, &sc.md, &sc.threeDS,
		&ch.RedirectEndpoint, &ch.MerchantTransactionID, &ch.IPAddress, &ch.CardLastFour, &ch.Email, &ch.OnlyDirectCurrency,
		&sc.created, &sc.updated, &ch.PaymentType, &sc.payID, &ch.FromBrowser)
	if err != nil {
		return nil, err
	}
	if ch.Metadata, err = parseMetadata(sc.md); err != nil {
		return nil, err
	}
	if ch.Error, err = parseError(sc.perr); err != nil {
		return nil, err
	}
	if err := unmarshalUnlessEmpty(sc.threeDS, &ch.ThreeDS); err != nil {
		return nil, err
	}
	ids := idColumns{table: "charges"}
	ch.ID, ch.StoreID, ch.MerchantID = ids.parse("id", sc.id), ids.parse("store_id", sc.sid), ids.parse("merchant_id", sc.mid)
	ch.TokenID, ch.SubscriptionID = ids.parse("token_id", sc.tid), ids.parse("subscription_id", sc.subID)
	ch.PaymentID = ids.parseNull("payment_id", sc.payID)
	if ids.err != nil {
		return nil, ids.err
	}
	ch.TokenType, ch.Mode = payment.TokenType(sc.ttype), payment.Mode(sc.mode)
	ch.ChargedAmount, ch.CaptureAt = amountPtr(sc.charged), timePtr(sc.captureAt)
	ch.CaptureState, ch.Status = payment.CaptureState(sc.captureState), payment.ChargeStatus(sc.status)
	ch.CreatedOn, ch.UpdatedOn = fromMicros(sc.created), fromMicros(sc.updated)
	return ch, nil
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
	ch, err := scanCharge(t.tx.QueryRowContext(ctx, `SELECT `+chargeColumns+` FROM charges WHERE id = ?`, id.String()))
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
		append(args, ch.ID.String())...)
	return err
}

func timeRange(c *conditions, from, to *time.Time) {
	if from != nil {
		c.add("created_on >= ?", micros(*from))
	}
	if to != nil {
		c.add("created_on <= ?", micros(*to))
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
		c.add("token_id = ?", f.TokenID.String())
	}
	if f.SubscriptionID != uuid.Nil {
		c.add("subscription_id = ?", f.SubscriptionID.String())
	}
	if f.PaymentID != uuid.Nil {
		c.add("payment_id = ?", f.PaymentID.String())
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

func (t *tx) RecentCharge(ctx context.Context, tokenID uuid.UUID, amount int64, currency string, since time.Time) (bool, error) {
	var n int
	err := t.tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM charges
		WHERE token_id = ? AND requested_amount = ? AND currency = ? AND created_on >= ?
			AND (error_code IS NULL OR error_code != ?)`,
		tokenID.String(), amount, currency, micros(since), payment.ErrTooManyCharges).Scan(&n)
	return n > 0, err
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
	return []any{r.ID.String(), r.StoreID.String(), r.MerchantID.String(), r.ChargeID.String(), string(r.Mode),
		string(r.Status), r.Amount, r.Currency, r.Reason, r.Message, perr, md, micros(r.CreatedOn), micros(r.UpdatedOn)}, nil
}

func scanRefund(row scanner) (*payment.Refund, error) {
	var r payment.Refund
	var id, sid, mid, cid, mode, status, md string
	var perr sql.NullString
	var created, updated int64
	err := row.Scan(&id, &sid, &mid, &cid, &mode, &status, &r.Amount, &r.Currency, &r.Reason, &r.Message, &perr, &md,
		&created, &updated)
	if err != nil {
		return nil, err
	}
	if r.Metadata, err = parseMetadata(md); err != nil {
		return nil, err
	}
	if r.Error, err = parseError(perr); err != nil {
		return nil, err
	}
	ids := idColumns{table: "refunds"}
	r.ID, r.StoreID, r.MerchantID = ids.parse("id", id), ids.parse("store_id", sid), ids.parse("merchant_id", mid)
	if r.ChargeID = ids.parse("charge_id", cid); ids.err != nil {
		return nil, ids.err
	}
	r.Mode, r.Status = payment.Mode(mode), payment.OperationStatus(status)
	r.CreatedOn, r.UpdatedOn = fromMicros(created), fromMicros(updated)
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
	return t.refundWhere(ctx, `id = ? AND store_id = ? AND charge_id = ?`, id.String(), storeID.String(), chargeID.String())
}

func (t *tx) QueuedRefund(ctx context.Context, id uuid.UUID) (*payment.Refund, error) {
	return t.refundWhere(ctx, `id = ?`, id.String())
}

func (t *tx) refundWhere(ctx context.Context, where string, args ...any) (*payment.Refund, error) {
	r, err := scanRefund(t.tx.QueryRowContext(ctx, `SELECT `+refundColumns+` FROM refunds WHERE `+where, args...))
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
		append(args, r.ID.String())...)
	return err
}

func (t *tx) ListRefunds(ctx context.Context, chargeID uuid.UUID, p payment.ListParams) (payment.Page[*payment.Refund], error) {
	return listPage(ctx, t.tx, refundColumns, "refunds", "charge_id = ?", []any{chargeID.String()}, p, scanRefund)
}

func (t *tx) RefundedAmount(ctx context.Context, chargeID uuid.UUID) (int64, error) {
	var sum int64
	err := t.tx.QueryRowContext(ctx, `SELECT COALESCE(SUM(amount), 0) FROM refunds WHERE charge_id = ? AND status IN ('pending', 'successful')`,
		chargeID.String()).Scan(&sum)
	return sum, err
}

func (t *tx) PendingRefundFor(ctx context.Context, chargeID uuid.UUID) (bool, error) {
	var n int
	err := t.tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM refunds WHERE charge_id = ? AND status = 'pending'`, chargeID.String()).Scan(&n)
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
	return []any{c.ID.String(), c.StoreID.String(), c.MerchantID.String(), c.ChargeID.String(), string(c.Mode),
		string(c.Status), perr, md, micros(c.CreatedOn), micros(c.UpdatedOn)}, nil
}

func scanCancel(row scanner) (*payment.Cancel, error) {
	var c payment.Cancel
	var id, sid, mid, cid, mode, status, md string
	var perr sql.NullString
	var created, updated int64
	if err := row.Scan(&id, &sid, &mid, &cid, &mode, &status, &perr, &md, &created, &updated); err != nil {
		return nil, err
	}
	var err error
	if c.Metadata, err = parseMetadata(md); err != nil {
		return nil, err
	}
	if c.Error, err = parseError(perr); err != nil {
		return nil, err
	}
	ids := idColumns{table: "cancels"}
	c.ID, c.StoreID, c.MerchantID = ids.parse("id", id), ids.parse("store_id", sid), ids.parse("merchant_id", mid)
	if c.ChargeID = ids.parse("charge_id", cid); ids.err != nil {
		return nil, ids.err
	}
	c.Mode, c.Status = payment.Mode(mode), payment.OperationStatus(status)
	c.CreatedOn, c.UpdatedOn = fromMicros(created), fromMicros(updated)
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
	return t.cancelWhere(ctx, `id = ? AND store_id = ? AND charge_id = ?`, id.String(), storeID.String(), chargeID.String())
}

func (t *tx) QueuedCancel(ctx context.Context, id uuid.UUID) (*payment.Cancel, error) {
	return t.cancelWhere(ctx, `id = ?`, id.String())
}

func (t *tx) cancelWhere(ctx context.Context, where string, args ...any) (*payment.Cancel, error) {
	c, err := scanCancel(t.tx.QueryRowContext(ctx, `SELECT `+cancelColumns+` FROM cancels WHERE `+where, args...))
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
		append(args, c.ID.String())...)
	return err
}

func (t *tx) ListCancels(ctx context.Context, chargeID uuid.UUID, p payment.ListParams) (payment.Page[*payment.Cancel], error) {
	return listPage(ctx, t.tx, cancelColumns, "cancels", "charge_id = ?", []any{chargeID.String()}, p, scanCancel)
}

func (t *tx) PendingCancelFor(ctx context.Context, chargeID uuid.UUID) (bool, error) {
	var n int
	err := t.tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM cancels WHERE charge_id = ? AND status = 'pending'`, chargeID.String()).Scan(&n)
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
		e.ResourceID.String(), e.StoreID.String(), e.MerchantID.String(), e.ChargeID.String(), e.Type, e.Status,
		e.Amount, e.Currency, string(e.Mode), md, micros(e.CreatedOn), micros(e.UpdatedOn))
	return err
}

func scanLedger(row scanner) (*payment.LedgerEntry, error) {
	var e payment.LedgerEntry
	var id, sid, mid, cid, mode, md string
	var created, updated int64
	if err := row.Scan(&id, &sid, &mid, &cid, &e.Type, &e.Status, &e.Amount, &e.Currency, &mode, &md, &created, &updated); err != nil {
		return nil, err
	}
	var err error
	if e.Metadata, err = parseMetadata(md); err != nil {
		return nil, err
	}
	ids := idColumns{table: "ledger"}
	e.ResourceID, e.StoreID, e.MerchantID = ids.parse("id", id), ids.parse("store_id", sid), ids.parse("merchant_id", mid)
	if e.ChargeID = ids.parse("charge_id", cid); ids.err != nil {
		return nil, ids.err
	}
	e.Mode, e.CreatedOn, e.UpdatedOn = payment.Mode(mode), fromMicros(created), fromMicros(updated)
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

// scanWork reads a work row and its seq, the order of items due together.
func scanWork(row scanner) (payment.Work, int64, error) {
	var w payment.Work
	var seq, due, lease int64
	var kind, id string
	if err := row.Scan(&seq, &kind, &id, &w.Attempts, &due, &w.ClaimedBy, &lease, &w.LastError); err != nil {
		return w, 0, err
	}
	// Every item is for an object: here the empty string is no "absent" id.
	if id == "" {
		return w, 0, fmt.Errorf("sqlite: corrupt id in work.object_id: empty")
	}
	ids := idColumns{table: "work"}
	if w.ID = ids.parse("object_id", id); ids.err != nil {
		return w, 0, ids.err
	}
	w.Kind, w.Due = payment.WorkKind(kind), fromMicros(due)
	if w.ClaimedBy != "" {
		w.LeaseUntil = fromMicros(lease)
	}
	return w, seq, nil
}

func (t *tx) EnqueueWork(ctx context.Context, kind payment.WorkKind, id uuid.UUID, due time.Time) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO work (kind, object_id, due_at) VALUES (?, ?, ?)
		ON CONFLICT (kind, object_id) DO NOTHING`, string(kind), id.String(), micros(due))
	return err
}

// RescheduleWork moves only due_at of an item already queued: its seq,
// attempts, last error and claim stay.
func (t *tx) RescheduleWork(ctx context.Context, kind payment.WorkKind, id uuid.UUID, due time.Time) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO work (kind, object_id, due_at) VALUES (?, ?, ?)
		ON CONFLICT (kind, object_id) DO UPDATE SET due_at = excluded.due_at`, string(kind), id.String(), micros(due))
	return err
}

func (t *tx) Work(ctx context.Context, kind payment.WorkKind, id uuid.UUID) (*payment.Work, error) {
	w, _, err := scanWork(t.tx.QueryRowContext(ctx, `SELECT `+workColumns+` FROM work WHERE kind = ? AND object_id = ?`,
		string(kind), id.String()))
	if err != nil {
		return nil, notFound(err, "work")
	}
	return &w, nil
}

// ClaimWork is one statement in a write transaction, and SQLite has one
// writer at a time (across processes too), so no two claims interleave.
func (t *tx) ClaimWork(ctx context.Context, claimant string, now, leaseUntil time.Time, limit int) ([]payment.Work, error) {
	if claimant == "" {
		return nil, fmt.Errorf("sqlite: claiming work needs a claimant")
	}
	at := micros(now)
	rows, err := t.tx.QueryContext(ctx, `UPDATE work SET claimed_by = ?, lease_until = ?
		WHERE seq IN (SELECT seq FROM work WHERE due_at <= ? AND lease_until <= ? ORDER BY due_at, seq LIMIT ?)
		RETURNING `+workColumns, claimant, micros(leaseUntil), at, at, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	type claimed struct {
		w   payment.Work
		seq int64
	}
	var got []claimed
	for rows.Next() {
		w, seq, err := scanWork(rows)
		if err != nil {
			return nil, err
		}
		got = append(got, claimed{w, seq})
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	// RETURNING gives rows in no particular order.
	slices.SortFunc(got, func(a, b claimed) int {
		return cmp.Or(a.w.Due.Compare(b.w.Due), cmp.Compare(a.seq, b.seq))
	})
	work := make([]payment.Work, len(got))
	for i, c := range got {
		work[i] = c.w
	}
	return work, nil
}

// heldBy is the condition that an item is still claimed by w's claimant;
// an empty claimant holds nothing.
const heldBy = `kind = ? AND object_id = ? AND claimed_by = ? AND claimed_by != ''`

func heldArgs(w payment.Work) []any { return []any{string(w.Kind), w.ID.String(), w.ClaimedBy} }

func (t *tx) ExtendWorkLease(ctx context.Context, w payment.Work, until time.Time) error {
	_, err := t.tx.ExecContext(ctx, `UPDATE work SET lease_until = ? WHERE `+heldBy, append([]any{micros(until)}, heldArgs(w)...)...)
	return err
}

func (t *tx) CompleteWork(ctx context.Context, w payment.Work) error {
	_, err := t.tx.ExecContext(ctx, `DELETE FROM work WHERE `+heldBy, heldArgs(w)...)
	return err
}

func (t *tx) RetryWork(ctx context.Context, w payment.Work, due time.Time, lastError string) error {
	_, err := t.tx.ExecContext(ctx, `UPDATE work SET attempts = attempts + 1, due_at = ?, last_error = ?, claimed_by = '', lease_until = 0
		WHERE `+heldBy, append([]any{micros(due), lastError}, heldArgs(w)...)...)
	return err
}

func (t *tx) ReleaseWork(ctx context.Context, w payment.Work) error {
	_, err := t.tx.ExecContext(ctx, `UPDATE work SET claimed_by = '', lease_until = 0 WHERE `+heldBy, heldArgs(w)...)
	return err
}

// WorkQueueStats is one pass over the work table, grouped by kind. An item
// is due when due_at <= now in Unix microseconds, the very comparison of
// ClaimWork (micros truncates now as it truncated the due times stored);
// the lease is not looked at, so a claimed item still counts as due.
//
// Cost: every queued row counts in some column, so no index can spare the
// query a row: it reads the whole table, O(queued items), in a read
// transaction (WAL: no writer waits for it). NOT INDEXED makes that one
// sequential scan, grouping the few kinds in a small temporary b-tree:
// left to itself SQLite walks the (kind, object_id) index to group
// without sorting and looks every row up, about three times slower. The
// table holds only pending work (CompleteWork deletes an item), hundreds
// of rows normally; a backlog of 100,000 reads in about 70 ms (200 ms
// through the index), once a scrape. A covering index (kind, due_at,
// attempts) would bring that to some 20 ms, at a cost on every enqueue,
// retry, reschedule and completion, for a size the queue reaches only in
// an incident, so there is none. Kinds sort as Go sorts them: SQLite's
// default collation is BINARY.
func (t *tx) WorkQueueStats(ctx context.Context, now time.Time) ([]payment.WorkQueueStats, error) {
	at := micros(now)
	rows, err := t.tx.QueryContext(ctx, `SELECT kind,
			COUNT(*) FILTER (WHERE due_at <= ?),
			COUNT(*) FILTER (WHERE due_at > ?),
			MIN(due_at) FILTER (WHERE due_at <= ?),
			COUNT(*) FILTER (WHERE attempts > 0),
			MAX(attempts)
		FROM work NOT INDEXED GROUP BY kind ORDER BY kind`, at, at, at)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []payment.WorkQueueStats{}
	for rows.Next() {
		var st payment.WorkQueueStats
		var kind string
		var oldest sql.NullInt64
		if err := rows.Scan(&kind, &st.Due, &st.Scheduled, &oldest, &st.Retrying, &st.MaxAttempts); err != nil {
			return nil, err
		}
		st.Kind = payment.WorkKind(kind)
		if oldest.Valid {
			st.OldestDue = fromMicros(oldest.Int64)
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
		a.Key, string(a.Kind), a.ResourceType, a.ResourceID.String(), a.StoreID.String(), a.MerchantID.String(),
		string(a.Mode), a.Brand, a.CallMethod, a.Amount, a.Currency, a.LastFour, a.Tries, string(a.Status),
		micros(a.ExpiresOn), micros(a.CreatedOn), micros(a.UpdatedOn),
	}
}

func scanApproval(row scanner) (*payment.Approval, error) {
	var a payment.Approval
	var kind, rid, sid, mid, mode, status string
	var expires, created, updated int64
	err := row.Scan(&a.Key, &kind, &a.ResourceType, &rid, &sid, &mid, &mode, &a.Brand, &a.CallMethod,
		&a.Amount, &a.Currency, &a.LastFour, &a.Tries, &status, &expires, &created, &updated)
	if err != nil {
		return nil, err
	}
	ids := idColumns{table: "approvals"}
	a.ResourceID, a.StoreID, a.MerchantID = ids.parse("resource_id", rid), ids.parse("store_id", sid), ids.parse("merchant_id", mid)
	if ids.err != nil {
		return nil, ids.err
	}
	a.Kind, a.Mode, a.Status = payment.ApprovalKind(kind), payment.Mode(mode), payment.ApprovalStatus(status)
	a.ExpiresOn, a.CreatedOn, a.UpdatedOn = fromMicros(expires), fromMicros(created), fromMicros(updated)
	return &a, nil
}

func (t *tx) CreateApproval(ctx context.Context, a *payment.Approval) error {
	args := approvalArgs(a)
	_, err := t.tx.ExecContext(ctx, `INSERT INTO approvals (`+approvalColumns+`) VALUES (`+placeholders(len(args))+`)`, args...)
	return err
}

func (t *tx) Approval(ctx context.Context, key string) (*payment.Approval, error) {
	a, err := scanApproval(t.tx.QueryRowContext(ctx, `SELECT `+approvalColumns+` FROM approvals WHERE key = ?`, key))
	if err != nil {
		return nil, notFound(err, "approval")
	}
	return a, nil
}

// ApprovalFor breaks a tie of creation times by rowid, the order of
// insertion.
func (t *tx) ApprovalFor(ctx context.Context, resourceID uuid.UUID) (*payment.Approval, error) {
	a, err := scanApproval(t.tx.QueryRowContext(ctx, `SELECT `+approvalColumns+` FROM approvals
		WHERE resource_id = ? ORDER BY created_on DESC, rowid DESC LIMIT 1`, resourceID.String()))
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
