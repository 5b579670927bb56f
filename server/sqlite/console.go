package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
)

// The console's users, sessions and reset links, store settings and the
// dashboard's counts. Every statement's text is a constant, so that the
// connections keep it prepared (keptstmt.go).

func (t *tx) User(ctx context.Context, id uuid.UUID) (*payment.User, error) {
	var u payment.User
	var sid, mid string
	var created int64
	err := t.tx.QueryRowContext(ctx, `SELECT id, merchant_id, email, password_hash, created_on FROM users WHERE id = ?`,
		id.String()).Scan(&sid, &mid, &u.Email, &u.PasswordHash, &created)
	if err != nil {
		return nil, notFound(err, "user")
	}
	ids := idColumns{table: "users"}
	u.ID, u.MerchantID, u.CreatedOn = ids.parse("id", sid), ids.parse("merchant_id", mid), fromMicros(created)
	if ids.err != nil {
		return nil, ids.err
	}
	return &u, nil
}

// UpdateStore writes what CreateStore wrote of the store but its identity
// and creation. A missing store is NOT_FOUND, as reading it would be: the
// domain read it first, so a miss means it was never there.
func (t *tx) UpdateStore(ctx context.Context, s *payment.Store) error {
	settings, err := json.Marshal(s.Settings)
	if err != nil {
		return err
	}
	res, err := t.tx.ExecContext(ctx, `UPDATE stores SET name = ?, pci_compliant = ?, settings = ? WHERE id = ?`,
		s.Name, s.PCICompliant, string(settings), s.ID.String())
	return mustAffect(res, err, "store")
}

// mustAffect turns an UPDATE that found no row into NOT_FOUND.
func mustAffect(res sql.Result, err error, what string) error {
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return payment.NotFound(what)
	}
	return nil
}

const consoleSessionColumns = `token_hash, user_id, merchant_id, mode, created_on, last_seen_on`

func (t *tx) CreateConsoleSession(ctx context.Context, s *payment.ConsoleSession) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO console_sessions (`+consoleSessionColumns+`) VALUES (?, ?, ?, ?, ?, ?)`,
		s.TokenHash, s.UserID.String(), s.MerchantID.String(), string(s.Mode), micros(s.CreatedOn), micros(s.LastSeenOn))
	return err
}

func (t *tx) ConsoleSession(ctx context.Context, tokenHash []byte) (*payment.ConsoleSession, error) {
	var s payment.ConsoleSession
	var uid, mid, mode string
	var created, seen int64
	err := t.tx.QueryRowContext(ctx, `SELECT `+consoleSessionColumns+` FROM console_sessions WHERE token_hash = ?`, tokenHash).
		Scan(&s.TokenHash, &uid, &mid, &mode, &created, &seen)
	if err != nil {
		return nil, notFound(err, "console session")
	}
	ids := idColumns{table: "console_sessions"}
	s.UserID, s.MerchantID = ids.parse("user_id", uid), ids.parse("merchant_id", mid)
	s.Mode, s.CreatedOn, s.LastSeenOn = payment.Mode(mode), fromMicros(created), fromMicros(seen)
	if ids.err != nil {
		return nil, ids.err
	}
	return &s, nil
}

// UpdateConsoleSession writes what a session's life changes: its mode and
// when it was last seen.
func (t *tx) UpdateConsoleSession(ctx context.Context, s *payment.ConsoleSession) error {
	res, err := t.tx.ExecContext(ctx, `UPDATE console_sessions SET mode = ?, last_seen_on = ? WHERE token_hash = ?`,
		string(s.Mode), micros(s.LastSeenOn), s.TokenHash)
	return mustAffect(res, err, "console session")
}

// DeleteConsoleSession deletes nothing, and is no error, for a session
// already gone: signing out twice is signing out.
func (t *tx) DeleteConsoleSession(ctx context.Context, tokenHash []byte) error {
	_, err := t.tx.ExecContext(ctx, `DELETE FROM console_sessions WHERE token_hash = ?`, tokenHash)
	return err
}

func (t *tx) DeleteConsoleSessions(ctx context.Context, userID uuid.UUID, createdBefore, seenBefore time.Time) error {
	_, err := t.tx.ExecContext(ctx, `DELETE FROM console_sessions WHERE user_id = ? AND (created_on < ? OR last_seen_on < ?)`,
		userID.String(), micros(createdBefore), micros(seenBefore))
	return err
}

const passwordResetColumns = `token_hash, user_id, created_on, expires_on, used_on`

func (t *tx) CreatePasswordReset(ctx context.Context, r *payment.PasswordReset) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO password_resets (`+passwordResetColumns+`) VALUES (?, ?, ?, ?, ?)`,
		r.TokenHash, r.UserID.String(), micros(r.CreatedOn), micros(r.ExpiresOn), nullMicros(r.UsedOn))
	return err
}

func (t *tx) PasswordReset(ctx context.Context, tokenHash []byte) (*payment.PasswordReset, error) {
	var r payment.PasswordReset
	var uid string
	var created, expires int64
	var used sql.NullInt64
	err := t.tx.QueryRowContext(ctx, `SELECT `+passwordResetColumns+` FROM password_resets WHERE token_hash = ?`, tokenHash).
		Scan(&r.TokenHash, &uid, &created, &expires, &used)
	if err != nil {
		return nil, notFound(err, "password reset")
	}
	ids := idColumns{table: "password_resets"}
	r.UserID = ids.parse("user_id", uid)
	r.CreatedOn, r.ExpiresOn, r.UsedOn = fromMicros(created), fromMicros(expires), timePtr(used)
	if ids.err != nil {
		return nil, ids.err
	}
	return &r, nil
}

// UsePasswordResets leaves the resets already used as they were: when a
// link was used is part of its story.
func (t *tx) UsePasswordResets(ctx context.Context, userID uuid.UUID, at time.Time) error {
	_, err := t.tx.ExecContext(ctx, `UPDATE password_resets SET used_on = ? WHERE user_id = ? AND used_on IS NULL`,
		micros(at), userID.String())
	return err
}

// ChargeStats is served by charges_by_merchant_day (migration 0013); the
// store's filter, when there is one, is applied to the day's rows it
// finds.
func (t *tx) ChargeStats(ctx context.Context, f payment.ChargeStatsFilter) ([]payment.ChargeStat, error) {
	where := `merchant_id = ? AND mode = ? AND created_on >= ? AND created_on < ?`
	args := []any{f.MerchantID.String(), string(f.Mode), micros(f.From), micros(f.To)}
	if f.StoreID != uuid.Nil {
		where += ` AND store_id = ?`
		args = append(args, f.StoreID.String())
	}
	query := `SELECT status, currency, COUNT(*), SUM(requested_amount) FROM charges WHERE ` + where + ` GROUP BY status, currency`
	rows, err := t.tx.QueryContext(ctx, query, args...)
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
