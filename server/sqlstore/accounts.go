package sqlstore

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
)

// Merchants, their console users, sessions and reset links, stores, app
// tokens, quotas and the dashboard's counts.

func (t *Tx) CreateMerchant(ctx context.Context, m *payment.Merchant) error {
	_, err := t.q.ExecContext(ctx, `INSERT INTO merchants (id, name, email, verified, created_on) VALUES (?, ?, ?, ?, ?)`,
		t.d.ID(m.ID), m.Name, m.Email, m.Verified, t.d.Time(m.CreatedOn))
	return err
}

func (t *Tx) Merchant(ctx context.Context, id uuid.UUID) (*payment.Merchant, error) {
	var m payment.Merchant
	var sid string
	var created instant
	err := t.q.QueryRowContext(ctx, `SELECT id, name, email, verified, created_on FROM merchants WHERE id = ?`, t.d.ID(id)).
		Scan(&sid, &m.Name, &m.Email, &m.Verified, &created)
	if err != nil {
		return nil, notFound(err, "merchant")
	}
	ids := idColumns{d: t.d, table: "merchants"}
	m.ID, m.CreatedOn = ids.parse("id", sid), created.t
	if ids.err != nil {
		return nil, ids.err
	}
	return &m, nil
}

// CountMerchants, inside an Update that marks its reads (Tx), first locks
// the table: first-start seeding decides on this count (payment's
// SeedDemo), and no row conflict can stop two processes starting at once
// from both counting zero. The lock makes them take turns; LOCK TABLE
// takes no snapshot, so as the transaction's first statement it makes
// the count's snapshot follow the other's commit.
func (t *Tx) CountMerchants(ctx context.Context) (int, error) {
	if t.marks {
		if _, err := t.q.ExecContext(ctx, `LOCK TABLE merchants IN SHARE ROW EXCLUSIVE MODE`); err != nil {
			return 0, err
		}
	}
	var n int
	err := t.q.QueryRowContext(ctx, `SELECT COUNT(*) FROM merchants`).Scan(&n)
	return n, err
}

func (t *Tx) CreateUser(ctx context.Context, u *payment.User) error {
	_, err := t.q.ExecContext(ctx, `INSERT INTO users (id, merchant_id, email, password_hash, created_on) VALUES (?, ?, ?, ?, ?)`,
		t.d.ID(u.ID), t.d.ID(u.MerchantID), strings.ToLower(u.Email), u.PasswordHash, t.d.Time(u.CreatedOn))
	return err
}

const userColumns = `id, merchant_id, email, password_hash, created_on`

func scanUser(d Dialect, row Row) (*payment.User, error) {
	var u payment.User
	var id, mid string
	var created instant
	if err := row.Scan(&id, &mid, &u.Email, &u.PasswordHash, &created); err != nil {
		return nil, err
	}
	ids := idColumns{d: d, table: "users"}
	u.ID, u.MerchantID, u.CreatedOn = ids.parse("id", id), ids.parse("merchant_id", mid), created.t
	if ids.err != nil {
		return nil, ids.err
	}
	return &u, nil
}

const userByEmail = `SELECT ` + userColumns + ` FROM users WHERE email = ?`

func (t *Tx) UserByEmail(ctx context.Context, email string) (*payment.User, error) {
	u, err := scanUser(t.d, t.q.QueryRowContext(ctx, userByEmail, strings.ToLower(email)))
	if err != nil {
		return nil, notFound(err, "user")
	}
	return u, nil
}

// A user, session or reset read inside an Update that marks its reads is
// marked, so that a rule decided on it (a reset link still unused) cannot
// be decided twice on two snapshots: the second Update waits for the
// first, fails and runs again on its writes.
var userByID = newPointRead("password_hash", userColumns, "users", "id = ?")

func (t *Tx) User(ctx context.Context, id uuid.UUID) (*payment.User, error) {
	u, err := scanUser(t.d, t.readOne(ctx, userByID, t.d.ID(id)))
	if err != nil {
		return nil, notFound(err, "user")
	}
	return u, nil
}

func (t *Tx) SetUserPassword(ctx context.Context, id uuid.UUID, hash []byte) error {
	_, err := t.q.ExecContext(ctx, `UPDATE users SET password_hash = ? WHERE id = ?`, hash, t.d.ID(id))
	return err
}

const consoleSessionColumns = `token_hash, user_id, merchant_id, mode, created_on, last_seen_on`

func (t *Tx) CreateConsoleSession(ctx context.Context, s *payment.ConsoleSession) error {
	_, err := t.q.ExecContext(ctx, `INSERT INTO console_sessions (`+consoleSessionColumns+`) VALUES (?, ?, ?, ?, ?, ?)`,
		s.TokenHash, t.d.ID(s.UserID), t.d.ID(s.MerchantID), string(s.Mode), t.d.Time(s.CreatedOn), t.d.Time(s.LastSeenOn))
	return err
}

var consoleSessionByHash = newPointRead("last_seen_on", consoleSessionColumns, "console_sessions", "token_hash = ?")

func (t *Tx) ConsoleSession(ctx context.Context, tokenHash []byte) (*payment.ConsoleSession, error) {
	var s payment.ConsoleSession
	var uid, mid, mode string
	var created, seen instant
	err := t.readOne(ctx, consoleSessionByHash, tokenHash).Scan(&s.TokenHash, &uid, &mid, &mode, &created, &seen)
	if err != nil {
		return nil, notFound(err, "console session")
	}
	ids := idColumns{d: t.d, table: "console_sessions"}
	s.UserID, s.MerchantID = ids.parse("user_id", uid), ids.parse("merchant_id", mid)
	s.Mode, s.CreatedOn, s.LastSeenOn = payment.Mode(mode), created.t, seen.t
	if ids.err != nil {
		return nil, ids.err
	}
	return &s, nil
}

// UpdateConsoleSession writes what a session's life changes: its mode and
// when it was last seen.
func (t *Tx) UpdateConsoleSession(ctx context.Context, s *payment.ConsoleSession) error {
	res, err := t.q.ExecContext(ctx, `UPDATE console_sessions SET mode = ?, last_seen_on = ? WHERE token_hash = ?`,
		string(s.Mode), t.d.Time(s.LastSeenOn), s.TokenHash)
	return mustAffect(res, err, "console session")
}

// DeleteConsoleSession deletes nothing, and is no error, for a session
// already gone: signing out twice is signing out.
func (t *Tx) DeleteConsoleSession(ctx context.Context, tokenHash []byte) error {
	_, err := t.q.ExecContext(ctx, `DELETE FROM console_sessions WHERE token_hash = ?`, tokenHash)
	return err
}

func (t *Tx) DeleteConsoleSessions(ctx context.Context, userID uuid.UUID, createdBefore, seenBefore time.Time) error {
	_, err := t.q.ExecContext(ctx, `DELETE FROM console_sessions WHERE user_id = ? AND (created_on < ? OR last_seen_on < ?)`,
		t.d.ID(userID), t.d.Time(createdBefore), t.d.Time(seenBefore))
	return err
}

const passwordResetColumns = `token_hash, user_id, created_on, expires_on, used_on`

func (t *Tx) CreatePasswordReset(ctx context.Context, r *payment.PasswordReset) error {
	_, err := t.q.ExecContext(ctx, `INSERT INTO password_resets (`+passwordResetColumns+`) VALUES (?, ?, ?, ?, ?)`,
		r.TokenHash, t.d.ID(r.UserID), t.d.Time(r.CreatedOn), t.d.Time(r.ExpiresOn), nullTime(t.d, r.UsedOn))
	return err
}

var passwordResetByHash = newPointRead("expires_on", passwordResetColumns, "password_resets", "token_hash = ?")

func (t *Tx) PasswordReset(ctx context.Context, tokenHash []byte) (*payment.PasswordReset, error) {
	var r payment.PasswordReset
	var uid string
	var created, expires, used instant
	err := t.readOne(ctx, passwordResetByHash, tokenHash).Scan(&r.TokenHash, &uid, &created, &expires, &used)
	if err != nil {
		return nil, notFound(err, "password reset")
	}
	ids := idColumns{d: t.d, table: "password_resets"}
	r.UserID = ids.parse("user_id", uid)
	r.CreatedOn, r.ExpiresOn, r.UsedOn = created.t, expires.t, used.ptr()
	if ids.err != nil {
		return nil, ids.err
	}
	return &r, nil
}

// UsePasswordResets leaves the resets already used as they were: when a
// link was used is part of its story.
func (t *Tx) UsePasswordResets(ctx context.Context, userID uuid.UUID, at time.Time) error {
	_, err := t.q.ExecContext(ctx, `UPDATE password_resets SET used_on = ? WHERE user_id = ? AND used_on IS NULL`,
		t.d.Time(at), t.d.ID(userID))
	return err
}

// ---- stores

const storeColumns = `id, merchant_id, name, pci_compliant, settings, created_on`

func scanStore(d Dialect, row Row) (*payment.Store, error) {
	var s payment.Store
	var id, mid, settings string
	var created instant
	if err := row.Scan(&id, &mid, &s.Name, &s.PCICompliant, &settings, &created); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(settings), &s.Settings); err != nil {
		return nil, err
	}
	ids := idColumns{d: d, table: "stores"}
	s.ID, s.MerchantID, s.CreatedOn = ids.parse("id", id), ids.parse("merchant_id", mid), created.t
	if ids.err != nil {
		return nil, ids.err
	}
	return &s, nil
}

func (t *Tx) CreateStore(ctx context.Context, s *payment.Store) error {
	settings, err := json.Marshal(s.Settings)
	if err != nil {
		return err
	}
	_, err = t.q.ExecContext(ctx, `INSERT INTO stores (`+storeColumns+`) VALUES (?, ?, ?, ?, ?, ?)`,
		t.d.ID(s.ID), t.d.ID(s.MerchantID), s.Name, s.PCICompliant, string(settings), t.d.Time(s.CreatedOn))
	return err
}

// Store does not mark the store's row (every token and charge on it would
// take turns): UpdateStore writes the row it read, and an engine that runs
// writers side by side fails that write when another transaction changed
// the row meanwhile.
func (t *Tx) Store(ctx context.Context, id uuid.UUID) (*payment.Store, error) {
	s, err := scanStore(t.d, t.q.QueryRowContext(ctx, `SELECT `+storeColumns+` FROM stores WHERE id = ?`, t.d.ID(id)))
	if err != nil {
		return nil, notFound(err, "store")
	}
	return s, nil
}

func (t *Tx) ListStores(ctx context.Context, merchantID uuid.UUID, p payment.ListParams) (payment.Page[*payment.Store], error) {
	return listPage(ctx, t, storeColumns, "stores", "merchant_id = ?", []any{t.d.ID(merchantID)}, p, scanStore)
}

// UpdateStore writes what CreateStore wrote of the store but its identity
// and creation. A missing store is NOT_FOUND, as reading it would be: the
// domain read it first, so a miss means it was never there.
func (t *Tx) UpdateStore(ctx context.Context, s *payment.Store) error {
	settings, err := json.Marshal(s.Settings)
	if err != nil {
		return err
	}
	res, err := t.q.ExecContext(ctx, `UPDATE stores SET name = ?, pci_compliant = ?, settings = ? WHERE id = ?`,
		s.Name, s.PCICompliant, string(settings), t.d.ID(s.ID))
	return mustAffect(res, err, "store")
}

// ---- app tokens

const appTokenColumns = `id, merchant_id, store_id, creator_id, mode, domains, secret_hash, jwt, created_on, revoked_on`

func scanAppToken(d Dialect, row Row) (*payment.AppToken, error) {
	var a payment.AppToken
	var id, mid, sid, cid, mode, domains string
	var created, revoked instant
	if err := row.Scan(&id, &mid, &sid, &cid, &mode, &domains, &a.SecretHash, &a.JWT, &created, &revoked); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(domains), &a.Domains); err != nil {
		return nil, err
	}
	ids := idColumns{d: d, table: "app_tokens"}
	a.ID, a.MerchantID = ids.parse("id", id), ids.parse("merchant_id", mid)
	a.StoreID, a.CreatorID = ids.parse("store_id", sid), ids.parse("creator_id", cid)
	a.Mode, a.CreatedOn, a.RevokedOn = payment.Mode(mode), created.t, revoked.ptr()
	if ids.err != nil {
		return nil, ids.err
	}
	return &a, nil
}

func (t *Tx) CreateAppToken(ctx context.Context, a *payment.AppToken) error {
	domains := a.Domains
	if domains == nil {
		domains = []string{}
	}
	dj, err := json.Marshal(domains)
	if err != nil {
		return err
	}
	_, err = t.q.ExecContext(ctx, `INSERT INTO app_tokens (`+appTokenColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		t.d.ID(a.ID), t.d.ID(a.MerchantID), t.d.OptionalID(a.StoreID), t.d.OptionalID(a.CreatorID), string(a.Mode), string(dj),
		a.SecretHash, a.JWT, t.d.Time(a.CreatedOn), nullTime(t.d, a.RevokedOn))
	return err
}

func (t *Tx) AppToken(ctx context.Context, id uuid.UUID) (*payment.AppToken, error) {
	a, err := scanAppToken(t.d, t.q.QueryRowContext(ctx, `SELECT `+appTokenColumns+` FROM app_tokens WHERE id = ?`, t.d.ID(id)))
	if err != nil {
		return nil, notFound(err, "app token")
	}
	return a, nil
}

func (t *Tx) ListAppTokens(ctx context.Context, f payment.AppTokenFilter, p payment.ListParams) (payment.Page[*payment.AppToken], error) {
	return listPage(ctx, t, appTokenColumns, "app_tokens", "merchant_id = ? AND store_id = ? AND revoked_on IS NULL",
		[]any{t.d.ID(f.MerchantID), t.d.OptionalID(f.StoreID)}, p, scanAppToken)
}

func (t *Tx) RevokeAppToken(ctx context.Context, id uuid.UUID, at time.Time) error {
	_, err := t.q.ExecContext(ctx, `UPDATE app_tokens SET revoked_on = ? WHERE id = ? AND revoked_on IS NULL`,
		t.d.Time(at), t.d.ID(id))
	return err
}

func (t *Tx) ActiveDomains(ctx context.Context) ([]string, error) {
	rows, err := t.q.QueryContext(ctx, `SELECT DISTINCT j.value FROM app_tokens, `+t.d.JSONElements("app_tokens.domains")+`
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

// ---- quotas

// TakeQuota is one statement: the row is created with its first unit or,
// when it exists, counted up only while under the limit. The guard in the
// statement makes the check and the count atomic on either engine:
// SQLite has one writer, and PostgreSQL takes the row's lock and evaluates
// the guard on its latest committed version, so of two transactions after
// the last unit one waits for the other and then finds the limit reached.
func (t *Tx) TakeQuota(ctx context.Context, k payment.QuotaKey, limit int) (bool, error) {
	return affectedOne(t.q.ExecContext(ctx, `INSERT INTO quota_usage AS q (resource, scope, period, used)
		SELECT ?, ?, ?, 1 WHERE ? > 0
		ON CONFLICT (resource, scope, period) DO UPDATE SET used = q.used + 1 WHERE q.used < ?`,
		k.Resource, k.Scope, k.Period, limit, limit))
}

func (t *Tx) ReleaseQuota(ctx context.Context, k payment.QuotaKey) error {
	_, err := t.q.ExecContext(ctx, `UPDATE quota_usage SET used = used - 1
		WHERE resource = ? AND scope = ? AND period = ? AND used > 0`, k.Resource, k.Scope, k.Period)
	return err
}

// ---- the dashboard

// ChargeStats is served by charges_by_merchant_day (SQLite's migration
// 0013, PostgreSQL's 0003); the store's filter, when there is one, is
// applied to the day's rows it finds.
func (t *Tx) ChargeStats(ctx context.Context, f payment.ChargeStatsFilter) ([]payment.ChargeStat, error) {
	where := `merchant_id = ? AND mode = ? AND created_on >= ? AND created_on < ?`
	args := []any{t.d.ID(f.MerchantID), string(f.Mode), t.d.Time(f.From), t.d.Time(f.To)}
	if f.StoreID != uuid.Nil {
		where += ` AND store_id = ?`
		args = append(args, t.d.ID(f.StoreID))
	}
	query := `SELECT status, currency, COUNT(*), CAST(SUM(requested_amount) AS BIGINT) FROM charges WHERE ` + where +
		` GROUP BY status, currency`
	rows, err := t.q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []payment.ChargeStat{}
	for rows.Next() {
		var st payment.ChargeStat
		var status string
		if err := rows.Scan(&status, &st.Currency, &st.Count, &st.Amount); err != nil {
			return nil, err
		}
		st.Status = payment.ChargeStatus(status)
		out = append(out, st)
	}
	return out, rows.Err()
}
