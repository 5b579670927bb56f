package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/kessai/kessai/server/payment"
)

// tx implements payment.Tx over one pgx transaction. write is set inside
// Update: its single-row reads lock the row (FOR UPDATE), which a READ ONLY
// transaction may not.
type tx struct {
	tx    querier
	write bool
}

// readOne reads the one row of table where holds. Inside an Update it
// marks the row as lockRow does (an UPDATE that sets updated_on to itself,
// RETURNING the row): another Update that read or wrote the row and
// commits first makes this one fail with 40001 and run again on a snapshot
// holding its writes, so two Updates that read one object take turns, as
// they would on one writer. A SELECT … FOR UPDATE would not: once the
// first commits, the second goes on with its snapshot, which misses what
// the first wrote elsewhere (a pending cancel of the charge both read). A
// View reads and marks nothing.
func (t *tx) readOne(ctx context.Context, columns, table, where string, args ...any) pgx.Row {
	if t.write {
		return t.tx.QueryRowContext(ctx, `UPDATE `+table+` SET updated_on = updated_on WHERE `+where+` RETURNING `+columns, args...)
	}
	return t.tx.QueryRowContext(ctx, `SELECT `+columns+` FROM `+table+` WHERE `+where, args...)
}

// readMarking is readOne for a table without updated_on (the console's):
// inside an Update it marks the row by setting mark, a column no index
// holds, to itself.
func (t *tx) readMarking(ctx context.Context, mark, columns, table, where string, args ...any) pgx.Row {
	if t.write {
		return t.tx.QueryRowContext(ctx, `UPDATE `+table+` SET `+mark+` = `+mark+` WHERE `+where+` RETURNING `+columns, args...)
	}
	return t.tx.QueryRowContext(ctx, `SELECT `+columns+` FROM `+table+` WHERE `+where, args...)
}

// nullID stores uuid.Nil as NULL, for an id column with a foreign key
// that holds only when the id is set.
func nullID(id uuid.UUID) *uuid.UUID {
	if id == uuid.Nil {
		return nil
	}
	return &id
}

// utc gives back a time read from a nullable column in UTC.
func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// notFound turns pgx.ErrNoRows into the domain's NOT_FOUND.
func notFound(err error, what string) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return payment.NotFound(what)
	}
	return err
}

type scanner interface{ Scan(dest ...any) error }

func (t *tx) CreateMerchant(ctx context.Context, m *payment.Merchant) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO merchants (id, name, email, verified, created_on) VALUES (?, ?, ?, ?, ?)`,
		m.ID, m.Name, m.Email, m.Verified, m.CreatedOn)
	return err
}

func (t *tx) Merchant(ctx context.Context, id uuid.UUID) (*payment.Merchant, error) {
	var m payment.Merchant
	err := t.tx.QueryRowContext(ctx, `SELECT id, name, email, verified, created_on FROM merchants WHERE id = ?`, id).
		Scan(&m.ID, &m.Name, &m.Email, &m.Verified, &m.CreatedOn)
	if err != nil {
		return nil, notFound(err, "merchant")
	}
	return &m, nil
}

func (t *tx) CountMerchants(ctx context.Context) (int, error) {
	if t.write {
		// First-start seeding decides on this count (payment's SeedDemo),
		// and no row conflict can stop two processes starting at once
		// from both counting zero. The lock makes them take turns; LOCK
		// TABLE takes no snapshot, so as the transaction's first statement
		// it makes the count's snapshot follow the other's commit.
		if _, err := t.tx.ExecContext(ctx, `LOCK TABLE merchants IN SHARE ROW EXCLUSIVE MODE`); err != nil {
			return 0, err
		}
	}
	var n int
	err := t.tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM merchants`).Scan(&n)
	return n, err
}

func (t *tx) CreateUser(ctx context.Context, u *payment.User) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO users (id, merchant_id, email, password_hash, created_on) VALUES (?, ?, ?, ?, ?)`,
		u.ID, u.MerchantID, strings.ToLower(u.Email), u.PasswordHash, u.CreatedOn)
	return err
}

func (t *tx) UserByEmail(ctx context.Context, email string) (*payment.User, error) {
	var u payment.User
	err := t.tx.QueryRowContext(ctx, `SELECT id, merchant_id, email, password_hash, created_on FROM users WHERE email = ?`,
		strings.ToLower(email)).Scan(&u.ID, &u.MerchantID, &u.Email, &u.PasswordHash, &u.CreatedOn)
	if err != nil {
		return nil, notFound(err, "user")
	}
	return &u, nil
}

func (t *tx) SetUserPassword(ctx context.Context, id uuid.UUID, hash []byte) error {
	_, err := t.tx.ExecContext(ctx, `UPDATE users SET password_hash = ? WHERE id = ?`, hash, id)
	return err
}

const storeColumns = `id, merchant_id, name, pci_compliant, settings, created_on`

func scanStore(row scanner) (*payment.Store, error) {
	var s payment.Store
	var settings string
	if err := row.Scan(&s.ID, &s.MerchantID, &s.Name, &s.PCICompliant, &settings, &s.CreatedOn); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(settings), &s.Settings); err != nil {
		return nil, err
	}
	return &s, nil
}

func (t *tx) CreateStore(ctx context.Context, s *payment.Store) error {
	settings, err := json.Marshal(s.Settings)
	if err != nil {
		return err
	}
	_, err = t.tx.ExecContext(ctx, `INSERT INTO stores (`+storeColumns+`) VALUES (?, ?, ?, ?, ?, ?)`,
		s.ID, s.MerchantID, s.Name, s.PCICompliant, string(settings), s.CreatedOn)
	return err
}

func (t *tx) Store(ctx context.Context, id uuid.UUID) (*payment.Store, error) {
	s, err := scanStore(t.tx.QueryRowContext(ctx, `SELECT `+storeColumns+` FROM stores WHERE id = ?`, id))
	if err != nil {
		return nil, notFound(err, "store")
	}
	return s, nil
}

func (t *tx) ListStores(ctx context.Context, merchantID uuid.UUID, p payment.ListParams) (payment.Page[*payment.Store], error) {
	return listPage(ctx, t.tx, storeColumns, "stores", "merchant_id = ?", []any{merchantID}, p, scanStore)
}

const appTokenColumns = `id, merchant_id, store_id, creator_id, mode, domains, secret_hash, jwt, created_on, revoked_on`

func scanAppToken(row scanner) (*payment.AppToken, error) {
	var a payment.AppToken
	var mode, domains string
	if err := row.Scan(&a.ID, &a.MerchantID, &a.StoreID, &a.CreatorID, &mode, &domains, &a.SecretHash, &a.JWT,
		&a.CreatedOn, &a.RevokedOn); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(domains), &a.Domains); err != nil {
		return nil, err
	}
	a.Mode = payment.Mode(mode)
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
		a.ID, a.MerchantID, a.StoreID, a.CreatorID, string(a.Mode), string(dj),
		a.SecretHash, a.JWT, a.CreatedOn, a.RevokedOn)
	return err
}

func (t *tx) AppToken(ctx context.Context, id uuid.UUID) (*payment.AppToken, error) {
	a, err := scanAppToken(t.tx.QueryRowContext(ctx, `SELECT `+appTokenColumns+` FROM app_tokens WHERE id = ?`, id))
	if err != nil {
		return nil, notFound(err, "app token")
	}
	return a, nil
}

func (t *tx) ListAppTokens(ctx context.Context, f payment.AppTokenFilter, p payment.ListParams) (payment.Page[*payment.AppToken], error) {
	return listPage(ctx, t.tx, appTokenColumns, "app_tokens", "merchant_id = ? AND store_id = ? AND revoked_on IS NULL",
		[]any{f.MerchantID, f.StoreID}, p, scanAppToken)
}

func (t *tx) RevokeAppToken(ctx context.Context, id uuid.UUID, at time.Time) error {
	_, err := t.tx.ExecContext(ctx, `UPDATE app_tokens SET revoked_on = ? WHERE id = ? AND revoked_on IS NULL`, at, id)
	return err
}

func (t *tx) ActiveDomains(ctx context.Context) ([]string, error) {
	rows, err := t.tx.QueryContext(ctx, `SELECT DISTINCT d FROM app_tokens, json_array_elements_text(app_tokens.domains::json) AS d
		WHERE revoked_on IS NULL`)
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

// TakeQuota is one statement: the row is created with its first unit or,
// when it exists, counted up only while under the limit. PostgreSQL takes
// the row's lock and evaluates the guard on its latest committed version,
// so of two transactions after the last unit one waits for the other and
// then finds the limit reached.
func (t *tx) TakeQuota(ctx context.Context, k payment.QuotaKey, limit int) (bool, error) {
	res, err := t.tx.ExecContext(ctx, `INSERT INTO quota_usage AS q (resource, scope, period, used)
		SELECT ?, ?, ?, 1 WHERE ? > 0
		ON CONFLICT (resource, scope, period) DO UPDATE SET used = q.used + 1 WHERE q.used < ?`,
		k.Resource, k.Scope, k.Period, limit, limit)
	if err != nil {
		return false, err
	}
	return res.RowsAffected() == 1, nil
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
		condArgs = append(condArgs, p.Cursor)
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
