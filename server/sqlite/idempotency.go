package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
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

// Replace overwrites the row while it still holds lock: a compare-and-swap
// in one statement.
func (db *DB) Replace(ctx context.Context, lock string, rec *payment.IdempotencyRecord) (bool, error) {
	return db.writeOne(ctx, `UPDATE idempotency_keys
		SET fingerprint = ?, lock_id = ?, state = ?, created_on = ?, locked_on = ?, expires_on = ?,
			status = NULL, header = NULL, body = NULL
		WHERE scope = ? AND idem_key = ? AND lock_id = ?`,
		rec.Fingerprint, rec.Lock, string(rec.State), micros(rec.CreatedOn), micros(rec.LockedOn), micros(rec.ExpiresOn),
		rec.Scope, rec.Key, lock)
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

// Release deletes the row while it still holds lock.
func (db *DB) Release(ctx context.Context, scope, key, lock string) error {
	_, err := db.writeOne(ctx,
		`DELETE FROM idempotency_keys WHERE scope = ? AND idem_key = ? AND lock_id = ?`, scope, key, lock)
	return err
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
