package sqlite

import (
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
)

// tx implements payment.Tx over one SQL transaction: a *sql.Tx for a
// View, a member of a group for an Update (group.go).
type tx struct {
	tx querier
}

func micros(t time.Time) int64 { return t.UnixMicro() }

func fromMicros(v int64) time.Time { return time.UnixMicro(v).UTC() }

func nullMicros(t *time.Time) sql.NullInt64 {
	if t == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: micros(*t), Valid: true}
}

func timePtr(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := fromMicros(v.Int64)
	return &t
}

// idString stores uuid.Nil as ” so that "no store" reads as absent.
func idString(id uuid.UUID) string {
	if id == uuid.Nil {
		return ""
	}
	return id.String()
}

// idColumns parses the id columns of one row of table. The empty string
// is how an absent id is stored (idString) and reads as uuid.Nil; anything
// else must be a UUID as idString writes it. A corrupt value is an error
// naming the table and column (the first one is kept), never uuid.Nil
// passing for "absent".
type idColumns struct {
	table string
	err   error
}

// nullID stores uuid.Nil as NULL, for an id column with a foreign key
// that holds only when the id is set.
func nullID(id uuid.UUID) sql.NullString {
	if id == uuid.Nil {
		return sql.NullString{}
	}
	return sql.NullString{String: id.String(), Valid: true}
}

// parseNull parses a nullable id column: NULL is absent; anything else
// must be a UUID (not even the empty string).
func (c *idColumns) parseNull(column string, s sql.NullString) uuid.UUID {
	if !s.Valid {
		return uuid.Nil
	}
	if s.String == "" {
		if c.err == nil {
			c.err = fmt.Errorf("sqlite: corrupt id in %s.%s: empty", c.table, column)
		}
		return uuid.Nil
	}
	return c.parse(column, s.String)
}

func (c *idColumns) parse(column, s string) uuid.UUID {
	if s == "" {
		return uuid.Nil
	}
	id, err := uuid.Parse(s)
	if err == nil && !canonicalID(id, s) {
		err = errors.New("not in the canonical form")
	}
	if err != nil {
		if c.err == nil {
			c.err = fmt.Errorf("sqlite: corrupt id in %s.%s: %w", c.table, column, err)
		}
		return uuid.Nil
	}
	return id
}

// canonicalID reports whether s is id as idString writes it (lower-case
// hex with dashes, what uuid.UUID.String gives), without allocating its
// string: a charge's read parses six ids.
func canonicalID(id uuid.UUID, s string) bool {
	var b [36]byte
	hex.Encode(b[:8], id[:4])
	b[8] = '-'
	hex.Encode(b[9:13], id[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], id[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], id[8:10])
	b[23] = '-'
	hex.Encode(b[24:], id[10:])
	return string(b[:]) == s
}

// unmarshalUnlessEmpty decodes a JSON object column into v, which is left
// as it is when the column holds {} (what a zero struct with omitempty
// fields marshals to): most rows, read without reflection.
func unmarshalUnlessEmpty(s string, v any) error {
	if s == "{}" {
		return nil
	}
	return json.Unmarshal([]byte(s), v)
}

// notFound turns sql.ErrNoRows into the domain's NOT_FOUND.
func notFound(err error, what string) error {
	if errors.Is(err, sql.ErrNoRows) {
		return payment.NotFound(what)
	}
	return err
}

type scanner interface{ Scan(dest ...any) error }

func (t *tx) CreateMerchant(ctx context.Context, m *payment.Merchant) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO merchants (id, name, email, verified, created_on) VALUES (?, ?, ?, ?, ?)`,
		m.ID.String(), m.Name, m.Email, m.Verified, micros(m.CreatedOn))
	return err
}

func (t *tx) Merchant(ctx context.Context, id uuid.UUID) (*payment.Merchant, error) {
	var m payment.Merchant
	var sid string
	var created int64
	err := t.tx.QueryRowContext(ctx, `SELECT id, name, email, verified, created_on FROM merchants WHERE id = ?`, id.String()).
		Scan(&sid, &m.Name, &m.Email, &m.Verified, &created)
	if err != nil {
		return nil, notFound(err, "merchant")
	}
	ids := idColumns{table: "merchants"}
	m.ID, m.CreatedOn = ids.parse("id", sid), fromMicros(created)
	if ids.err != nil {
		return nil, ids.err
	}
	return &m, nil
}

func (t *tx) CountMerchants(ctx context.Context) (int, error) {
	var n int
	err := t.tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM merchants`).Scan(&n)
	return n, err
}

func (t *tx) CreateUser(ctx context.Context, u *payment.User) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO users (id, merchant_id, email, password_hash, created_on) VALUES (?, ?, ?, ?, ?)`,
		u.ID.String(), u.MerchantID.String(), strings.ToLower(u.Email), u.PasswordHash, micros(u.CreatedOn))
	return err
}

func (t *tx) UserByEmail(ctx context.Context, email string) (*payment.User, error) {
	var u payment.User
	var id, mid string
	var created int64
	err := t.tx.QueryRowContext(ctx, `SELECT id, merchant_id, email, password_hash, created_on FROM users WHERE email = ?`,
		strings.ToLower(email)).Scan(&id, &mid, &u.Email, &u.PasswordHash, &created)
	if err != nil {
		return nil, notFound(err, "user")
	}
	ids := idColumns{table: "users"}
	u.ID, u.MerchantID, u.CreatedOn = ids.parse("id", id), ids.parse("merchant_id", mid), fromMicros(created)
	if ids.err != nil {
		return nil, ids.err
	}
	return &u, nil
}

func (t *tx) SetUserPassword(ctx context.Context, id uuid.UUID, hash []byte) error {
	_, err := t.tx.ExecContext(ctx, `UPDATE users SET password_hash = ? WHERE id = ?`, hash, id.String())
	return err
}

const storeColumns = `id, merchant_id, name, pci_compliant, settings, created_on`

func scanStore(row scanner) (*payment.Store, error) {
	var s payment.Store
	var id, mid, settings string
	var created int64
	if err := row.Scan(&id, &mid, &s.Name, &s.PCICompliant, &settings, &created); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(settings), &s.Settings); err != nil {
		return nil, err
	}
	ids := idColumns{table: "stores"}
	s.ID, s.MerchantID, s.CreatedOn = ids.parse("id", id), ids.parse("merchant_id", mid), fromMicros(created)
	if ids.err != nil {
		return nil, ids.err
	}
	return &s, nil
}

func (t *tx) CreateStore(ctx context.Context, s *payment.Store) error {
	settings, err := json.Marshal(s.Settings)
	if err != nil {
		return err
	}
	_, err = t.tx.ExecContext(ctx, `INSERT INTO stores (`+storeColumns+`) VALUES (?, ?, ?, ?, ?, ?)`,
		s.ID.String(), s.MerchantID.String(), s.Name, s.PCICompliant, string(settings), micros(s.CreatedOn))
	return err
}

func (t *tx) Store(ctx context.Context, id uuid.UUID) (*payment.Store, error) {
	s, err := scanStore(t.tx.QueryRowContext(ctx, `SELECT `+storeColumns+` FROM stores WHERE id = ?`, id.String()))
	if err != nil {
		return nil, notFound(err, "store")
	}
	return s, nil
}

func (t *tx) ListStores(ctx context.Context, merchantID uuid.UUID, p payment.ListParams) (payment.Page[*payment.Store], error) {
	return listPage(ctx, t.tx, storeColumns, "stores", "merchant_id = ?", []any{merchantID.String()}, p, scanStore)
}

const appTokenColumns = `id, merchant_id, store_id, creator_id, mode, domains, secret_hash, jwt, created_on, revoked_on`

func scanAppToken(row scanner) (*payment.AppToken, error) {
	var a payment.AppToken
	var id, mid, sid, cid, mode, domains string
	var created int64
	var revoked sql.NullInt64
	if err := row.Scan(&id, &mid, &sid, &cid, &mode, &domains, &a.SecretHash, &a.JWT, &created, &revoked); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(domains), &a.Domains); err != nil {
		return nil, err
	}
	ids := idColumns{table: "app_tokens"}
	a.ID, a.MerchantID = ids.parse("id", id), ids.parse("merchant_id", mid)
	a.StoreID, a.CreatorID = ids.parse("store_id", sid), ids.parse("creator_id", cid)
	a.Mode, a.CreatedOn, a.RevokedOn = payment.Mode(mode), fromMicros(created), timePtr(revoked)
	if ids.err != nil {
		return nil, ids.err
	}
	return &a, nil
}

func (t *tx) CreateAppToken(ctx context.Context, a *payment.AppToken) error {
	domains := a.Domains
	if domains == nil {
		domains = []string{}
	}
	dj, err := json.Marshal(domains)
	if err != nil {
		return err
	}
	_, err = t.tx.ExecContext(ctx, `INSERT INTO app_tokens (`+appTokenColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		a.ID.String(), a.MerchantID.String(), idString(a.StoreID), idString(a.CreatorID), string(a.Mode), string(dj),
		a.SecretHash, a.JWT, micros(a.CreatedOn), nullMicros(a.RevokedOn))
	return err
}

func (t *tx) AppToken(ctx context.Context, id uuid.UUID) (*payment.AppToken, error) {
	a, err := scanAppToken(t.tx.QueryRowContext(ctx, `SELECT `+appTokenColumns+` FROM app_tokens WHERE id = ?`, id.String()))
	if err != nil {
		return nil, notFound(err, "app token")
	}
	return a, nil
}

func (t *tx) ListAppTokens(ctx context.Context, f payment.AppTokenFilter, p payment.ListParams) (payment.Page[*payment.AppToken], error) {
	return listPage(ctx, t.tx, appTokenColumns, "app_tokens", "merchant_id = ? AND store_id = ? AND revoked_on IS NULL",
		[]any{f.MerchantID.String(), idString(f.StoreID)}, p, scanAppToken)
}

func (t *tx) RevokeAppToken(ctx context.Context, id uuid.UUID, at time.Time) error {
	_, err := t.tx.ExecContext(ctx, `UPDATE app_tokens SET revoked_on = ? WHERE id = ? AND revoked_on IS NULL`, micros(at), id.String())
	return err
}

func (t *tx) ActiveDomains(ctx context.Context) ([]string, error) {
	rows, err := t.tx.QueryContext(ctx, `SELECT DISTINCT j.value FROM app_tokens, json_each(app_tokens.domains) AS j WHERE revoked_on IS NULL`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var d string
		if err := rows.Scan(&d); err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

func (t *tx) TakeQuota(ctx context.Context, k payment.QuotaKey, limit int) (bool, error) {
	if _, err := t.tx.ExecContext(ctx, `INSERT INTO quota_usage (resource, scope, period, used) VALUES (?, ?, ?, 0)
		ON CONFLICT (resource, scope, period) DO NOTHING`, k.Resource, k.Scope, k.Period); err != nil {
		return false, err
	}
	// The guard in the WHERE clause makes the check and the count one
	// statement, atomic on any engine.
	res, err := t.tx.ExecContext(ctx, `UPDATE quota_usage SET used = used + 1
		WHERE resource = ? AND scope = ? AND period = ? AND used < ?`, k.Resource, k.Scope, k.Period, limit)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

func (t *tx) ReleaseQuota(ctx context.Context, k payment.QuotaKey) error {
	_, err := t.tx.ExecContext(ctx, `UPDATE quota_usage SET used = used - 1
		WHERE resource = ? AND scope = ? AND period = ? AND used > 0`, k.Resource, k.Scope, k.Period)
	return err
}

// listPage reads one page of table rows matching where, ordered by id (the
// creation order of v7 ids). It fetches one row more than asked to know
// whether more follow, and counts the total only for a first page.
func listPage[T any](ctx context.Context, q querier, columns, table, where string, args []any,
	p payment.ListParams, scan func(scanner) (T, error)) (payment.Page[T], error) {
	page := payment.Page[T]{Items: []T{}}
	order, cmp := "DESC", "<"
	if p.Direction == payment.Asc {
		order, cmp = "ASC", ">"
	}
	limit := p.Limit
	if limit <= 0 {
		limit = payment.DefaultLimit
	}
	cond, condArgs := where, append([]any(nil), args...)
	if p.Cursor != uuid.Nil {
		cond += " AND id " + cmp + " ?"
		condArgs = append(condArgs, p.Cursor.String())
	} else {
		var total int
		if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+table+` WHERE `+where, args...).Scan(&total); err != nil {
			return page, err
		}
		page.TotalHits = &total
	}
	rows, err := q.QueryContext(ctx, `SELECT `+columns+` FROM `+table+` WHERE `+cond+` ORDER BY id `+order+` LIMIT ?`,
		append(condArgs, limit+1)...)
	if err != nil {
		return page, err
	}
	defer rows.Close()
	for rows.Next() {
		item, err := scan(rows)
		if err != nil {
			return page, err
		}
		page.Items = append(page.Items, item)
	}
	if err := rows.Err(); err != nil {
		return page, err
	}
	if len(page.Items) > limit {
		page.Items, page.HasMore = page.Items[:limit], true
	}
	return page, nil
}
