package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/kessai/kessai/server/payment"
)

// DB implements payment.IdempotencyStore on the idempotency_keys table.
// Every write is a member of the write groups (group.go), like an Update,
// so reservations are serialised with each other and with the domain's
// transactions, and answered once their COMMIT is durable.
var _ payment.IdempotencyStore = (*DB)(nil)

// sweepBatch bounds one DELETE of DeleteExpired, so that a large sweep
// never holds the write lock for long.
const sweepBatch = 1000

const idempotencyColumns = `scope, idem_key, fingerprint, lock_id, state, created_on, locked_on, expires_on, status, header, body`

// Reserve inserts rec unless its (scope, key) exists and otherwise reads the
// existing row, both in one IMMEDIATE transaction: no two reservations can
// both insert, and the row read is the one that prevented the insert.
func (db *DB) Reserve(ctx context.Context, rec *payment.IdempotencyRecord) (existing *payment.IdempotencyRecord, reserved bool, err error) {
	err = db.writer.update(ctx, func(q querier) error {
		existing, reserved = nil, false
		res, err := q.ExecContext(ctx, `INSERT INTO idempotency_keys (`+idempotencyColumns+`)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, NULL)
			ON CONFLICT (scope, idem_key) DO NOTHING`,
			rec.Scope, rec.Key, rec.Fingerprint, rec.Lock, string(rec.State),
			micros(rec.CreatedOn), micros(rec.LockedOn), micros(rec.ExpiresOn))
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		if reserved = n == 1; !reserved {
			existing, err = scanIdempotency(q.QueryRowContext(ctx,
				`SELECT `+idempotencyColumns+` FROM idempotency_keys WHERE scope = ? AND idem_key = ?`, rec.Scope, rec.Key))
		}
		return err
	})
	if err != nil {
		return nil, false, err
	}
	return existing, reserved, nil
}

// writeOne runs one statement as a write of its own and reports whether
// it changed exactly one row.
func (db *DB) writeOne(ctx context.Context, query string, args ...any) (one bool, err error) {
	err = db.writer.update(ctx, func(q querier) error {
		one, err = affectedOne(q.ExecContext(ctx, query, args...))
		return err
	})
	return one, err
}

// Replace overwrites the row, its effect cleared, while it still holds
// lock: a compare-and-swap in one statement.
func (db *DB) Replace(ctx context.Context, lock string, rec *payment.IdempotencyRecord) (bool, error) {
	return db.writeOne(ctx, `UPDATE idempotency_keys
		SET fingerprint = ?, lock_id = ?, state = ?, created_on = ?, locked_on = ?, expires_on = ?,
			status = NULL, header = NULL, body = NULL,
			effect_kind = NULL, effect_store_id = NULL, effect_charge_id = NULL, effect_id = NULL
		WHERE scope = ? AND idem_key = ? AND lock_id = ?`,
		rec.Fingerprint, rec.Lock, string(rec.State), micros(rec.CreatedOn), micros(rec.LockedOn), micros(rec.ExpiresOn),
		rec.Scope, rec.Key, lock)
}

const effectColumns = `effect_kind, effect_store_id, effect_charge_id, effect_id`

// TakeOver moves the lock of the in-flight row still holding lock, then
// reads its effect, in one write: every write is serialised with the
// domain's transactions (group.go), so the effect read is the last one any
// holder of the old lock recorded.
func (db *DB) TakeOver(ctx context.Context, lock string, rec *payment.IdempotencyRecord) (effect *payment.IdempotentEffect, taken bool, err error) {
	err = db.writer.update(ctx, func(q querier) error {
		effect, taken = nil, false
		one, err := affectedOne(q.ExecContext(ctx, `UPDATE idempotency_keys SET lock_id = ?, locked_on = ?, expires_on = ?
			WHERE scope = ? AND idem_key = ? AND lock_id = ? AND state = ?`,
			rec.Lock, micros(rec.LockedOn), micros(rec.ExpiresOn), rec.Scope, rec.Key, lock, string(payment.IdempotencyInFlight)))
		if err != nil || !one {
			return err
		}
		taken = true
		effect, err = scanEffect(q.QueryRowContext(ctx, `SELECT `+effectColumns+` FROM idempotency_keys
			WHERE scope = ? AND idem_key = ? AND lock_id = ?`, rec.Scope, rec.Key, rec.Lock))
		return err
	})
	if err != nil {
		return nil, false, err
	}
	return effect, taken, nil
}

// Complete stores the answer of the in-flight reservation holding lock.
func (db *DB) Complete(ctx context.Context, scope, key, lock string, resp *payment.IdempotentResponse, expiresOn time.Time) (bool, error) {
	var header sql.NullString
	if len(resp.Header) > 0 {
		b, err := json.Marshal(resp.Header)
		if err != nil {
			return false, err
		}
		header = sql.NullString{String: string(b), Valid: true}
	}
	body := resp.Body
	if body == nil {
		body = []byte{}
	}
	return db.writeOne(ctx, `UPDATE idempotency_keys
		SET state = ?, status = ?, header = ?, body = ?, expires_on = ?
		WHERE scope = ? AND idem_key = ? AND lock_id = ? AND state = ?`,
		string(payment.IdempotencyCompleted), resp.Status, header, body, micros(expiresOn),
		scope, key, lock, string(payment.IdempotencyInFlight))
}

// Release deletes the row while it still holds lock, unless it has an
// effect, which it then returns.
func (db *DB) Release(ctx context.Context, scope, key, lock string) (effect *payment.IdempotentEffect, err error) {
	err = db.writer.update(ctx, func(q querier) error {
		effect = nil
		if _, err := q.ExecContext(ctx, `DELETE FROM idempotency_keys
			WHERE scope = ? AND idem_key = ? AND lock_id = ? AND effect_kind IS NULL`, scope, key, lock); err != nil {
			return err
		}
		effect, err = scanEffect(q.QueryRowContext(ctx, `SELECT `+effectColumns+` FROM idempotency_keys
			WHERE scope = ? AND idem_key = ? AND lock_id = ?`, scope, key, lock))
		if errors.Is(err, sql.ErrNoRows) {
			err = nil // deleted, or no longer ours
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return effect, nil
}

// RecordIdempotentEffect notes eff on the row while ref's reservation
// holds it in flight: the domain transaction's one write of the keys.
func (t *tx) RecordIdempotentEffect(ctx context.Context, ref payment.IdempotencyRef, eff payment.IdempotentEffect) (bool, error) {
	return affectedOne(t.tx.ExecContext(ctx, `UPDATE idempotency_keys
		SET effect_kind = ?, effect_store_id = ?, effect_charge_id = ?, effect_id = ?
		WHERE scope = ? AND idem_key = ? AND lock_id = ? AND state = ?`,
		string(eff.Kind), idString(eff.StoreID), idString(eff.ChargeID), idString(eff.ID),
		ref.Scope, ref.Key, ref.Lock, string(payment.IdempotencyInFlight)))
}

// scanEffect reads the effect columns: nil when none was recorded.
func scanEffect(row scanner) (*payment.IdempotentEffect, error) {
	var kind, storeID, chargeID, id sql.NullString
	if err := row.Scan(&kind, &storeID, &chargeID, &id); err != nil {
		return nil, err
	}
	if !kind.Valid {
		return nil, nil
	}
	ids := idColumns{table: "idempotency_keys"}
	eff := &payment.IdempotentEffect{
		Kind:     payment.EffectKind(kind.String),
		StoreID:  ids.parse("effect_store_id", storeID.String),
		ChargeID: ids.parse("effect_charge_id", chargeID.String),
		ID:       ids.parse("effect_id", id.String),
	}
	if ids.err != nil {
		return nil, ids.err
	}
	return eff, nil
}

// DeleteExpired deletes expired rows in batches of sweepBatch, each its own
// short write, so that requests are not held up behind one long delete.
func (db *DB) DeleteExpired(ctx context.Context, before time.Time) (int, error) {
	total := 0
	for {
		var n int64
		err := db.writer.update(ctx, func(q querier) error {
			res, err := q.ExecContext(ctx, `DELETE FROM idempotency_keys WHERE rowid IN
				(SELECT rowid FROM idempotency_keys WHERE expires_on <= ? LIMIT ?)`, micros(before), sweepBatch)
			if err != nil {
				return err
			}
			n, err = res.RowsAffected()
			return err
		})
		if err != nil {
			return total, err
		}
		total += int(n)
		if n < sweepBatch {
			return total, nil
		}
	}
}

func affectedOne(res sql.Result, err error) (bool, error) {
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, err
	}
	return n == 1, nil
}

func scanIdempotency(row scanner) (*payment.IdempotencyRecord, error) {
	var rec payment.IdempotencyRecord
	var state string
	var created, locked, expires int64
	var status sql.NullInt64
	var header sql.NullString
	var body []byte
	if err := row.Scan(&rec.Scope, &rec.Key, &rec.Fingerprint, &rec.Lock, &state,
		&created, &locked, &expires, &status, &header, &body); err != nil {
		return nil, err
	}
	rec.State = payment.IdempotencyState(state)
	rec.CreatedOn, rec.LockedOn, rec.ExpiresOn = fromMicros(created), fromMicros(locked), fromMicros(expires)
	if rec.State == payment.IdempotencyCompleted {
		resp := &payment.IdempotentResponse{Status: int(status.Int64), Body: body}
		if resp.Body == nil {
			resp.Body = []byte{}
		}
		if header.Valid {
			if err := json.Unmarshal([]byte(header.String), &resp.Header); err != nil {
				return nil, fmt.Errorf("sqlite: idempotency header: %w", err)
			}
		}
		rec.Response = resp
	}
	return &rec, nil
}
