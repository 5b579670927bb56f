package postgres

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/kessai/kessai/server/payment"
)

// The console's users, sessions and reset links, store settings and the
// dashboard's counts. A user, session or reset read inside an Update is
// marked (readMarking), so that a rule decided on it (a reset link still
// unused) cannot be decided twice on two snapshots: the second Update
// waits for the first, fails and runs again on its writes.

func (t *tx) User(ctx context.Context, id uuid.UUID) (*payment.User, error) {
	var u payment.User
	err := t.readMarking(ctx, "password_hash", `id, merchant_id, email, password_hash, created_on`, "users", "id = ?", id).
		Scan(&u.ID, &u.MerchantID, &u.Email, &u.PasswordHash, &u.CreatedOn)
	if err != nil {
		return nil, notFound(err, "user")
	}
	return &u, nil
}

// UpdateStore needs no mark on the read before it: the store's row is the
// one it writes, and under REPEATABLE READ a write to a row another
// transaction changed since this one's snapshot fails (40001) and runs
// again, so a read-modify-write of a store loses no other. Marking every
// read of a store would make every token and charge on it take turns.
func (t *tx) UpdateStore(ctx context.Context, s *payment.Store) error {
	settings, err := json.Marshal(s.Settings)
	if err != nil {
		return err
	}
	tag, err := t.tx.ExecContext(ctx, `UPDATE stores SET name = ?, pci_compliant = ?, settings = ? WHERE id = ?`,
		s.Name, s.PCICompliant, string(settings), s.ID)
	return mustAffect(tag, err, "store")
}

// mustAffect turns an UPDATE that found no row into NOT_FOUND.
func mustAffect(tag pgconn.CommandTag, err error, what string) error {
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return payment.NotFound(what)
	}
	return nil
}

const consoleSessionColumns = `token_hash, user_id, merchant_id, mode, created_on, last_seen_on`

func (t *tx) CreateConsoleSession(ctx context.Context, s *payment.ConsoleSession) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO console_sessions (`+consoleSessionColumns+`) VALUES (?, ?, ?, ?, ?, ?)`,
		s.TokenHash, s.UserID, s.MerchantID, string(s.Mode), s.CreatedOn, s.LastSeenOn)
	return err
}

func (t *tx) ConsoleSession(ctx context.Context, tokenHash []byte) (*payment.ConsoleSession, error) {
	var s payment.ConsoleSession
	var mode string
	err := t.readMarking(ctx, "last_seen_on", consoleSessionColumns, "console_sessions", "token_hash = ?", tokenHash).
		Scan(&s.TokenHash, &s.UserID, &s.MerchantID, &mode, &s.CreatedOn, &s.LastSeenOn)
	if err != nil {
		return nil, notFound(err, "console session")
	}
	s.Mode = payment.Mode(mode)
	return &s, nil
}

// UpdateConsoleSession writes what a session's life changes: its mode and
// when it was last seen.
func (t *tx) UpdateConsoleSession(ctx context.Context, s *payment.ConsoleSession) error {
	tag, err := t.tx.ExecContext(ctx, `UPDATE console_sessions SET mode = ?, last_seen_on = ? WHERE token_hash = ?`,
		string(s.Mode), s.LastSeenOn, s.TokenHash)
	return mustAffect(tag, err, "console session")
}

// DeleteConsoleSession deletes nothing, and is no error, for a session
// already gone: signing out twice is signing out.
func (t *tx) DeleteConsoleSession(ctx context.Context, tokenHash []byte) error {
	_, err := t.tx.ExecContext(ctx, `DELETE FROM console_sessions WHERE token_hash = ?`, tokenHash)
	return err
}

func (t *tx) DeleteConsoleSessions(ctx context.Context, userID uuid.UUID, createdBefore, seenBefore time.Time) error {
	_, err := t.tx.ExecContext(ctx, `DELETE FROM console_sessions WHERE user_id = ? AND (created_on < ? OR last_seen_on < ?)`,
		userID, createdBefore, seenBefore)
	return err
}

const passwordResetColumns = `token_hash, user_id, created_on, expires_on, used_on`

func (t *tx) CreatePasswordReset(ctx context.Context, r *payment.PasswordReset) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO password_resets (`+passwordResetColumns+`) VALUES (?, ?, ?, ?, ?)`,
		r.TokenHash, r.UserID, r.CreatedOn, r.ExpiresOn, r.UsedOn)
	return err
}

func (t *tx) PasswordReset(ctx context.Context, tokenHash []byte) (*payment.PasswordReset, error) {
	var r payment.PasswordReset
	err := t.readMarking(ctx, "expires_on", passwordResetColumns, "password_resets", "token_hash = ?", tokenHash).
		Scan(&r.TokenHash, &r.UserID, &r.CreatedOn, &r.ExpiresOn, &r.UsedOn)
	if err != nil {
		return nil, notFound(err, "password reset")
	}
	r.UsedOn = utc(r.UsedOn)
	return &r, nil
}

// UsePasswordResets leaves the resets already used as they were: when a
// link was used is part of its story.
func (t *tx) UsePasswordResets(ctx context.Context, userID uuid.UUID, at time.Time) error {
	_, err := t.tx.ExecContext(ctx, `UPDATE password_resets SET used_on = ? WHERE user_id = ? AND used_on IS NULL`, at, userID)
	return err
}

// ChargeStats is served by charges_by_merchant_day (migration 0003); the
// store's filter, when there is one, is applied to the day's rows it
// finds.
func (t *tx) ChargeStats(ctx context.Context, f payment.ChargeStatsFilter) ([]payment.ChargeStat, error) {
	where := `merchant_id = ? AND mode = ? AND created_on >= ? AND created_on < ?`
	args := []any{f.MerchantID, string(f.Mode), f.From, f.To}
	if f.StoreID != uuid.Nil {
		where += ` AND store_id = ?`
		args = append(args, f.StoreID)
	}
	query := `SELECT status, currency, COUNT(*), SUM(requested_amount)::bigint FROM charges WHERE ` + where + ` GROUP BY status, currency`
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
