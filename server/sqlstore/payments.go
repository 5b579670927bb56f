package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
)

// ---- transaction tokens

const tokenColumns = `id, store_id, merchant_id, mode, payment_type, type, usage_limit, email, active, used, metadata,
	customer_id, ip_address, cardholder, exp_month, exp_year, card_bin, last_four, brand, billing,
	number_key_id, number_sealed, cvc_key_id, cvc_sealed, cvv_authorize, three_ds, from_browser, last_used_on, created_on, updated_on,
	data`

func tokenArgs(d Dialect, t *payment.TransactionToken) ([]any, error) {
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
	data, err := marshal(t.Data)
	if err != nil {
		return nil, err
	}
	sealed := t.Card.SealedNumber.Data
	if sealed == nil {
		sealed = []byte{} // a wallet token has no card
	}
	customer := t.CustomerID()
	return []any{
		d.ID(t.ID), d.ID(t.StoreID), d.ID(t.MerchantID), string(t.Mode), t.PaymentType, string(t.Type),
		t.UsageLimit, t.Email, t.Active, t.Used, md, customer, t.IPAddress, t.Card.Cardholder, t.Card.ExpMonth,
		t.Card.ExpYear, t.Card.BIN, t.Card.LastFour, t.Card.Brand, billing, t.Card.SealedNumber.KeyID,
		sealed, t.Card.SealedCVC.KeyID, t.Card.SealedCVC.Data, cvvAuth, threeDS, t.FromBrowser,
		nullTime(d, t.LastUsedOn), d.Time(t.CreatedOn), d.Time(t.UpdatedOn), data,
	}, nil
}

func scanToken(d Dialect, row Row) (*payment.TransactionToken, error) {
	var t payment.TransactionToken
	var id, sid, mid, mode, typ, md, customer, billing, cvvAuth, threeDS, data string
	var lastUsed, created, updated instant
	err := row.Scan(&id, &sid, &mid, &mode, &t.PaymentType, &typ, &t.UsageLimit, &t.Email, &t.Active, &t.Used, &md,
		&customer, &t.IPAddress, &t.Card.Cardholder, &t.Card.ExpMonth, &t.Card.ExpYear, &t.Card.BIN, &t.Card.LastFour,
		&t.Card.Brand, &billing, &t.Card.SealedNumber.KeyID, &t.Card.SealedNumber.Data, &t.Card.SealedCVC.KeyID,
		&t.Card.SealedCVC.Data, &cvvAuth, &threeDS, &t.FromBrowser, &lastUsed, &created, &updated, &data)
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
	if err := json.Unmarshal([]byte(data), &t.Data); err != nil {
		return nil, err
	}
	if len(t.Card.SealedNumber.Data) == 0 {
		t.Card.SealedNumber.Data = nil
	}
	ids := idColumns{d: d, table: "tokens"}
	t.ID, t.StoreID, t.MerchantID = ids.parse("id", id), ids.parse("store_id", sid), ids.parse("merchant_id", mid)
	if ids.err != nil {
		return nil, ids.err
	}
	t.Mode, t.Type = payment.Mode(mode), payment.TokenType(typ)
	t.LastUsedOn, t.CreatedOn, t.UpdatedOn = lastUsed.ptr(), created.t, updated.t
	return &t, nil
}

func (t *Tx) CreateToken(ctx context.Context, tok *payment.TransactionToken) error {
	args, err := tokenArgs(t.d, tok)
	if err != nil {
		return err
	}
	_, err = t.q.ExecContext(ctx, `INSERT INTO tokens (`+tokenColumns+`) VALUES (`+placeholders(len(args))+`)`, args...)
	return err
}

var tokenByID = newPointRead("updated_on", tokenColumns, "tokens", "id = ?")

func (t *Tx) Token(ctx context.Context, id uuid.UUID) (*payment.TransactionToken, error) {
	tok, err := scanToken(t.d, t.readOne(ctx, tokenByID, t.d.ID(id)))
	if err != nil {
		return nil, notFound(err, "transaction token")
	}
	return tok, nil
}

func (t *Tx) UpdateToken(ctx context.Context, tok *payment.TransactionToken) error {
	args, err := tokenArgs(t.d, tok)
	if err != nil {
		return err
	}
	_, err = t.q.ExecContext(ctx, `UPDATE tokens SET (`+tokenColumns+`) = (`+placeholders(len(args))+`) WHERE id = ?`,
		append(args, t.d.ID(tok.ID))...)
	return err
}

func (t *Tx) EraseTokenCVC(ctx context.Context, id uuid.UUID) error {
	_, err := t.q.ExecContext(ctx, `UPDATE tokens SET cvc_sealed = NULL, cvc_key_id = '' WHERE id = ?`, t.d.ID(id))
	return err
}

func (t *Tx) ListTokens(ctx context.Context, f payment.TokenFilter, p payment.ListParams) (payment.Page[*payment.TransactionToken], error) {
	c := conditions{d: t.d}
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
	return listPage(ctx, t, tokenColumns, "tokens", c.where(), c.args, p, scanToken)
}

// ---- charges

const chargeColumns = `id, store_id, merchant_id, token_id, token_type, subscription_id, mode, requested_amount, currency,
	charged_amount, capture, capture_at, capture_state, capture_amount, descriptor, status, error, error_code, metadata, three_ds,
	redirect_endpoint, merchant_transaction_id, ip_address, last_four, email, only_direct_currency, created_on, updated_on,
	payment_type, payment_id, from_browser`

func chargeArgs(d Dialect, ch *payment.Charge) ([]any, error) {
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
		d.ID(ch.ID), d.ID(ch.StoreID), d.ID(ch.MerchantID), d.ID(ch.TokenID), string(ch.TokenType),
		d.OptionalID(ch.SubscriptionID), string(ch.Mode), ch.RequestedAmount, ch.Currency, nullAmount(ch.ChargedAmount),
		ch.Capture, nullTime(d, ch.CaptureAt), string(ch.CaptureState), ch.CaptureAmount, ch.Descriptor,
		string(ch.Status), perr, errorCode(ch.Error), md, threeDS, ch.RedirectEndpoint, ch.MerchantTransactionID, ch.IPAddress,
		ch.CardLastFour, ch.Email, ch.OnlyDirectCurrency, d.Time(ch.CreatedOn), d.Time(ch.UpdatedOn),
		ch.PaymentType, nullID(d, ch.PaymentID), ch.FromBrowser,
	}, nil
}

func scanCharge(d Dialect, row Row) (*payment.Charge, error) {
	// The charge and its raw columns in one allocation: each variable
	// whose address goes to Scan escapes, one allocation apiece (twenty of
	// a charge's read).
	var sc struct {
		ch                                                                       payment.Charge
		id, sid, mid, tid, ttype, subID, mode, captureState, status, md, threeDS string
		charged, errCode                                                         sql.NullInt64
		perr, payID                                                              sql.NullString
		captureAt, created, updated                                              instant
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
	ids := idColumns{d: d, table: "charges"}
	ch.ID, ch.StoreID, ch.MerchantID = ids.parse("id", sc.id), ids.parse("store_id", sc.sid), ids.parse("merchant_id", sc.mid)
	ch.TokenID, ch.SubscriptionID = ids.parse("token_id", sc.tid), ids.parse("subscription_id", sc.subID)
	ch.PaymentID = ids.parseNull("payment_id", sc.payID)
	if ids.err != nil {
		return nil, ids.err
	}
	ch.TokenType, ch.Mode = payment.TokenType(sc.ttype), payment.Mode(sc.mode)
	ch.ChargedAmount, ch.CaptureAt = amountPtr(sc.charged), sc.captureAt.ptr()
	ch.CaptureState, ch.Status = payment.CaptureState(sc.captureState), payment.ChargeStatus(sc.status)
	ch.CreatedOn, ch.UpdatedOn = sc.created.t, sc.updated.t
	return ch, nil
}

func (t *Tx) CreateCharge(ctx context.Context, ch *payment.Charge) error {
	args, err := chargeArgs(t.d, ch)
	if err != nil {
		return err
	}
	_, err = t.q.ExecContext(ctx, `INSERT INTO charges (`+chargeColumns+`) VALUES (`+placeholders(len(args))+`)`, args...)
	return err
}

var chargeByID = newPointRead("updated_on", chargeColumns, "charges", "id = ?")

func (t *Tx) Charge(ctx context.Context, id uuid.UUID) (*payment.Charge, error) {
	ch, err := scanCharge(t.d, t.readOne(ctx, chargeByID, t.d.ID(id)))
	if err != nil {
		return nil, notFound(err, "charge")
	}
	return ch, nil
}

func (t *Tx) UpdateCharge(ctx context.Context, ch *payment.Charge) error {
	args, err := chargeArgs(t.d, ch)
	if err != nil {
		return err
	}
	_, err = t.q.ExecContext(ctx, `UPDATE charges SET (`+chargeColumns+`) = (`+placeholders(len(args))+`) WHERE id = ?`,
		append(args, t.d.ID(ch.ID))...)
	return err
}

func timeRange(c *conditions, from, to *time.Time) {
	if from != nil {
		c.add("created_on >= ?", c.d.Time(*from))
	}
	if to != nil {
		c.add("created_on <= ?", c.d.Time(*to))
	}
}

func (t *Tx) ListCharges(ctx context.Context, f payment.ChargeFilter, p payment.ListParams) (payment.Page[*payment.Charge], error) {
	c := conditions{d: t.d}
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
		c.add("token_id = ?", t.d.ID(f.TokenID))
	}
	if f.SubscriptionID != uuid.Nil {
		c.add("subscription_id = ?", t.d.ID(f.SubscriptionID))
	}
	if f.PaymentID != uuid.Nil {
		c.add("payment_id = ?", t.d.ID(f.PaymentID))
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
	return listPage(ctx, t, chargeColumns, "charges", c.where(), c.args, p, scanCharge)
}

// RecentCharge first marks the token's row inside an Update that marks
// its reads (lockRow): a second charge on the token waits there until the
// first one's transaction ends and then fails, so that the engine runs it
// again on a snapshot that holds the first one's charge. Of concurrent
// identical charges on one token, in any number of processes, exactly one
// is accepted.
func (t *Tx) RecentCharge(ctx context.Context, tokenID uuid.UUID, amount int64, currency string, since time.Time) (bool, error) {
	if err := t.lockRow(ctx, "tokens", "updated_on", tokenID); err != nil {
		return false, err
	}
	var found bool
	err := t.q.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM charges
		WHERE token_id = ? AND requested_amount = ? AND currency = ? AND created_on >= ?
			AND (error_code IS NULL OR error_code != ?))`,
		t.d.ID(tokenID), amount, currency, t.d.Time(since), int64(payment.ErrTooManyCharges)).Scan(&found)
	return found, err
}

// ---- refunds

const refundColumns = `id, store_id, merchant_id, charge_id, mode, status, amount, currency, reason, message, error,
	metadata, created_on, updated_on`

func refundArgs(d Dialect, r *payment.Refund) ([]any, error) {
	md, err := metadataJSON(r.Metadata)
	if err != nil {
		return nil, err
	}
	perr, err := errorJSON(r.Error)
	if err != nil {
		return nil, err
	}
	return []any{d.ID(r.ID), d.ID(r.StoreID), d.ID(r.MerchantID), d.ID(r.ChargeID), string(r.Mode),
		string(r.Status), r.Amount, r.Currency, r.Reason, r.Message, perr, md, d.Time(r.CreatedOn), d.Time(r.UpdatedOn)}, nil
}

func scanRefund(d Dialect, row Row) (*payment.Refund, error) {
	var r payment.Refund
	var id, sid, mid, cid, mode, status, md string
	var perr sql.NullString
	var created, updated instant
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
	ids := idColumns{d: d, table: "refunds"}
	r.ID, r.StoreID, r.MerchantID = ids.parse("id", id), ids.parse("store_id", sid), ids.parse("merchant_id", mid)
	if r.ChargeID = ids.parse("charge_id", cid); ids.err != nil {
		return nil, ids.err
	}
	r.Mode, r.Status = payment.Mode(mode), payment.OperationStatus(status)
	r.CreatedOn, r.UpdatedOn = created.t, updated.t
	return &r, nil
}

func (t *Tx) CreateRefund(ctx context.Context, r *payment.Refund) error {
	args, err := refundArgs(t.d, r)
	if err != nil {
		return err
	}
	_, err = t.q.ExecContext(ctx, `INSERT INTO refunds (`+refundColumns+`) VALUES (`+placeholders(len(args))+`)`, args...)
	return err
}

var (
	refundInScope = newPointRead("updated_on", refundColumns, "refunds", `id = ? AND store_id = ? AND charge_id = ?`)
	refundByID    = newPointRead("updated_on", refundColumns, "refunds", `id = ?`)
)

func (t *Tx) Refund(ctx context.Context, storeID, chargeID, id uuid.UUID) (*payment.Refund, error) {
	return t.refund(ctx, refundInScope, t.d.ID(id), t.d.ID(storeID), t.d.ID(chargeID))
}

func (t *Tx) QueuedRefund(ctx context.Context, id uuid.UUID) (*payment.Refund, error) {
	return t.refund(ctx, refundByID, t.d.ID(id))
}

func (t *Tx) refund(ctx context.Context, read pointRead, args ...any) (*payment.Refund, error) {
	r, err := scanRefund(t.d, t.readOne(ctx, read, args...))
	if err != nil {
		return nil, notFound(err, "refund")
	}
	return r, nil
}

func (t *Tx) UpdateRefund(ctx context.Context, r *payment.Refund) error {
	args, err := refundArgs(t.d, r)
	if err != nil {
		return err
	}
	_, err = t.q.ExecContext(ctx, `UPDATE refunds SET (`+refundColumns+`) = (`+placeholders(len(args))+`) WHERE id = ?`,
		append(args, t.d.ID(r.ID))...)
	return err
}

func (t *Tx) ListRefunds(ctx context.Context, chargeID uuid.UUID, p payment.ListParams) (payment.Page[*payment.Refund], error) {
	return listPage(ctx, t, refundColumns, "refunds", "charge_id = ?", []any{t.d.ID(chargeID)}, p, scanRefund)
}

// RefundedAmount marks the charge's row inside an Update that marks its
// reads (lockRow), so that two refunds of one charge take turns: the
// second runs again after the first one's COMMIT and sums its refund too,
// and cannot promise back more than was charged.
func (t *Tx) RefundedAmount(ctx context.Context, chargeID uuid.UUID) (int64, error) {
	if err := t.lockRow(ctx, "charges", "updated_on", chargeID); err != nil {
		return 0, err
	}
	var sum int64
	err := t.q.QueryRowContext(ctx, `SELECT COALESCE(SUM(amount), 0) FROM refunds WHERE charge_id = ? AND status IN ('pending', 'successful')`,
		t.d.ID(chargeID)).Scan(&sum)
	return sum, err
}

func (t *Tx) PendingRefundFor(ctx context.Context, chargeID uuid.UUID) (bool, error) {
	var n int
	err := t.q.QueryRowContext(ctx, `SELECT COUNT(*) FROM refunds WHERE charge_id = ? AND status = 'pending'`, t.d.ID(chargeID)).Scan(&n)
	return n > 0, err
}

// ---- cancels

const cancelColumns = `id, store_id, merchant_id, charge_id, mode, status, error, metadata, created_on, updated_on`

func cancelArgs(d Dialect, c *payment.Cancel) ([]any, error) {
	md, err := metadataJSON(c.Metadata)
	if err != nil {
		return nil, err
	}
	perr, err := errorJSON(c.Error)
	if err != nil {
		return nil, err
	}
	return []any{d.ID(c.ID), d.ID(c.StoreID), d.ID(c.MerchantID), d.ID(c.ChargeID), string(c.Mode),
		string(c.Status), perr, md, d.Time(c.CreatedOn), d.Time(c.UpdatedOn)}, nil
}

func scanCancel(d Dialect, row Row) (*payment.Cancel, error) {
	var c payment.Cancel
	var id, sid, mid, cid, mode, status, md string
	var perr sql.NullString
	var created, updated instant
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
	ids := idColumns{d: d, table: "cancels"}
	c.ID, c.StoreID, c.MerchantID = ids.parse("id", id), ids.parse("store_id", sid), ids.parse("merchant_id", mid)
	if c.ChargeID = ids.parse("charge_id", cid); ids.err != nil {
		return nil, ids.err
	}
	c.Mode, c.Status = payment.Mode(mode), payment.OperationStatus(status)
	c.CreatedOn, c.UpdatedOn = created.t, updated.t
	return &c, nil
}

func (t *Tx) CreateCancel(ctx context.Context, c *payment.Cancel) error {
	args, err := cancelArgs(t.d, c)
	if err != nil {
		return err
	}
	_, err = t.q.ExecContext(ctx, `INSERT INTO cancels (`+cancelColumns+`) VALUES (`+placeholders(len(args))+`)`, args...)
	return err
}

var (
	cancelInScope = newPointRead("updated_on", cancelColumns, "cancels", `id = ? AND store_id = ? AND charge_id = ?`)
	cancelByID    = newPointRead("updated_on", cancelColumns, "cancels", `id = ?`)
)

func (t *Tx) Cancel(ctx context.Context, storeID, chargeID, id uuid.UUID) (*payment.Cancel, error) {
	return t.cancel(ctx, cancelInScope, t.d.ID(id), t.d.ID(storeID), t.d.ID(chargeID))
}

func (t *Tx) QueuedCancel(ctx context.Context, id uuid.UUID) (*payment.Cancel, error) {
	return t.cancel(ctx, cancelByID, t.d.ID(id))
}

func (t *Tx) cancel(ctx context.Context, read pointRead, args ...any) (*payment.Cancel, error) {
	c, err := scanCancel(t.d, t.readOne(ctx, read, args...))
	if err != nil {
		return nil, notFound(err, "cancel")
	}
	return c, nil
}

func (t *Tx) UpdateCancel(ctx context.Context, c *payment.Cancel) error {
	args, err := cancelArgs(t.d, c)
	if err != nil {
		return err
	}
	_, err = t.q.ExecContext(ctx, `UPDATE cancels SET (`+cancelColumns+`) = (`+placeholders(len(args))+`) WHERE id = ?`,
		append(args, t.d.ID(c.ID))...)
	return err
}

func (t *Tx) ListCancels(ctx context.Context, chargeID uuid.UUID, p payment.ListParams) (payment.Page[*payment.Cancel], error) {
	return listPage(ctx, t, cancelColumns, "cancels", "charge_id = ?", []any{t.d.ID(chargeID)}, p, scanCancel)
}

func (t *Tx) PendingCancelFor(ctx context.Context, chargeID uuid.UUID) (bool, error) {
	var n int
	err := t.q.QueryRowContext(ctx, `SELECT COUNT(*) FROM cancels WHERE charge_id = ? AND status = 'pending'`, t.d.ID(chargeID)).Scan(&n)
	return n > 0, err
}

// ---- ledger

const ledgerColumns = `id, store_id, merchant_id, charge_id, type, status, amount, currency, mode, metadata, created_on, updated_on`

func (t *Tx) PutLedgerEntry(ctx context.Context, e *payment.LedgerEntry) error {
	md, err := metadataJSON(e.Metadata)
	if err != nil {
		return err
	}
	_, err = t.q.ExecContext(ctx, `INSERT INTO ledger (`+ledgerColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET status = excluded.status, amount = excluded.amount,
			metadata = excluded.metadata, updated_on = excluded.updated_on`,
		t.d.ID(e.ResourceID), t.d.ID(e.StoreID), t.d.ID(e.MerchantID), t.d.ID(e.ChargeID), e.Type, e.Status,
		e.Amount, e.Currency, string(e.Mode), md, t.d.Time(e.CreatedOn), t.d.Time(e.UpdatedOn))
	return err
}

func scanLedger(d Dialect, row Row) (*payment.LedgerEntry, error) {
	var e payment.LedgerEntry
	var id, sid, mid, cid, mode, md string
	var created, updated instant
	if err := row.Scan(&id, &sid, &mid, &cid, &e.Type, &e.Status, &e.Amount, &e.Currency, &mode, &md, &created, &updated); err != nil {
		return nil, err
	}
	var err error
	if e.Metadata, err = parseMetadata(md); err != nil {
		return nil, err
	}
	ids := idColumns{d: d, table: "ledger"}
	e.ResourceID, e.StoreID, e.MerchantID = ids.parse("id", id), ids.parse("store_id", sid), ids.parse("merchant_id", mid)
	if e.ChargeID = ids.parse("charge_id", cid); ids.err != nil {
		return nil, ids.err
	}
	e.Mode, e.CreatedOn, e.UpdatedOn = payment.Mode(mode), created.t, updated.t
	return &e, nil
}

func (t *Tx) ListLedger(ctx context.Context, f payment.LedgerFilter, p payment.ListParams) (payment.Page[*payment.LedgerEntry], error) {
	c := conditions{d: t.d}
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
	return listPage(ctx, t, ledgerColumns, "ledger", c.where(), c.args, p, scanLedger)
}

// ---- approvals

const approvalColumns = `key, kind, resource_type, resource_id, store_id, merchant_id, mode, brand, call_method,
	amount, currency, last_four, tries, status, expires_on, created_on, updated_on, slip`

func approvalArgs(d Dialect, a *payment.Approval) ([]any, error) {
	// A time in the slip's document is kept as the columns keep theirs:
	// in UTC, to the microsecond.
	sl := a.Slip
	if sl.ExtendedOn != nil {
		t := sl.ExtendedOn.UTC().Truncate(time.Microsecond)
		sl.ExtendedOn = &t
	}
	slip, err := marshal(sl)
	if err != nil {
		return nil, err
	}
	return []any{
		a.Key, string(a.Kind), a.ResourceType, d.ID(a.ResourceID), d.ID(a.StoreID), d.ID(a.MerchantID),
		string(a.Mode), a.Brand, a.CallMethod, a.Amount, a.Currency, a.LastFour, a.Tries, string(a.Status),
		d.Time(a.ExpiresOn), d.Time(a.CreatedOn), d.Time(a.UpdatedOn), slip,
	}, nil
}

func scanApproval(d Dialect, row Row) (*payment.Approval, error) {
	var a payment.Approval
	var kind, rid, sid, mid, mode, status, slip string
	var expires, created, updated instant
	err := row.Scan(&a.Key, &kind, &a.ResourceType, &rid, &sid, &mid, &mode, &a.Brand, &a.CallMethod,
		&a.Amount, &a.Currency, &a.LastFour, &a.Tries, &status, &expires, &created, &updated, &slip)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(slip), &a.Slip); err != nil {
		return nil, err
	}
	ids := idColumns{d: d, table: "approvals"}
	a.ResourceID, a.StoreID, a.MerchantID = ids.parse("resource_id", rid), ids.parse("store_id", sid), ids.parse("merchant_id", mid)
	if ids.err != nil {
		return nil, ids.err
	}
	a.Kind, a.Mode, a.Status = payment.ApprovalKind(kind), payment.Mode(mode), payment.ApprovalStatus(status)
	a.ExpiresOn, a.CreatedOn, a.UpdatedOn = expires.t, created.t, updated.t
	return &a, nil
}

func (t *Tx) CreateApproval(ctx context.Context, a *payment.Approval) error {
	args, err := approvalArgs(t.d, a)
	if err != nil {
		return err
	}
	_, err = t.q.ExecContext(ctx, `INSERT INTO approvals (`+approvalColumns+`) VALUES (`+placeholders(len(args))+`)`, args...)
	return err
}

var approvalByKey = newPointRead("updated_on", approvalColumns, "approvals", "key = ?")

func (t *Tx) Approval(ctx context.Context, key string) (*payment.Approval, error) {
	a, err := scanApproval(t.d, t.readOne(ctx, approvalByKey, key))
	if err != nil {
		return nil, notFound(err, "approval")
	}
	return a, nil
}

// ApprovalFor breaks a tie of creation times by the order of insertion.
func (t *Tx) ApprovalFor(ctx context.Context, resourceID uuid.UUID) (*payment.Approval, error) {
	latest := newPointRead("updated_on", approvalColumns, "approvals", `key = (SELECT key FROM approvals
		WHERE resource_id = ? ORDER BY created_on DESC, `+t.d.InsertionOrder()+` DESC LIMIT 1)`)
	a, err := scanApproval(t.d, t.readOne(ctx, latest, t.d.ID(resourceID)))
	if err != nil {
		return nil, notFound(err, "approval")
	}
	return a, nil
}

func (t *Tx) UpdateApproval(ctx context.Context, a *payment.Approval) error {
	args, err := approvalArgs(t.d, a)
	if err != nil {
		return err
	}
	_, err = t.q.ExecContext(ctx, `UPDATE approvals SET (`+approvalColumns+`) = (`+placeholders(len(args))+`) WHERE key = ?`,
		append(args, a.Key)...)
	return err
}

// ---- bank transfers' ledgers

const transferColumns = `id, charge_id, store_id, merchant_id, mode, kind, amount, balance, deposited, currency,
	payment_status, virtual_account_id, created_on`

func (t *Tx) AddTransferEntry(ctx context.Context, e *payment.TransferEntry) error {
	_, err := t.q.ExecContext(ctx, `INSERT INTO transfer_ledger (`+transferColumns+`) VALUES (`+placeholders(13)+`)`,
		t.d.ID(e.ID), t.d.ID(e.ChargeID), t.d.ID(e.StoreID), t.d.ID(e.MerchantID), string(e.Mode), string(e.Kind),
		e.Amount, e.Balance, e.Deposited, e.Currency, string(e.PaymentStatus), e.VirtualAccountID, t.d.Time(e.CreatedOn))
	return err
}

func scanTransferEntry(d Dialect, row Row) (*payment.TransferEntry, error) {
	var e payment.TransferEntry
	var id, cid, sid, mid, mode, kind, status string
	var created instant
	err := row.Scan(&id, &cid, &sid, &mid, &mode, &kind, &e.Amount, &e.Balance, &e.Deposited, &e.Currency,
		&status, &e.VirtualAccountID, &created)
	if err != nil {
		return nil, err
	}
	ids := idColumns{d: d, table: "transfer_ledger"}
	e.ID, e.ChargeID = ids.parse("id", id), ids.parse("charge_id", cid)
	if e.StoreID, e.MerchantID = ids.parse("store_id", sid), ids.parse("merchant_id", mid); ids.err != nil {
		return nil, ids.err
	}
	e.Mode, e.Kind, e.PaymentStatus = payment.Mode(mode), payment.TransferEntryKind(kind), payment.TransferPaymentStatus(status)
	e.CreatedOn = created.t
	return &e, nil
}

func (t *Tx) LatestTransferEntry(ctx context.Context, chargeID uuid.UUID) (*payment.TransferEntry, error) {
	row := t.q.QueryRowContext(ctx, `SELECT `+transferColumns+` FROM transfer_ledger WHERE charge_id = ? ORDER BY id DESC LIMIT 1`,
		t.d.ID(chargeID))
	e, err := scanTransferEntry(t.d, row)
	if err != nil {
		return nil, notFound(err, "bank transfer ledger")
	}
	return e, nil
}

func (t *Tx) ListTransferEntries(ctx context.Context, chargeID uuid.UUID, p payment.ListParams) (payment.Page[*payment.TransferEntry], error) {
	return listPage(ctx, t, transferColumns, "transfer_ledger", "charge_id = ?", []any{t.d.ID(chargeID)}, p, scanTransferEntry)
}
