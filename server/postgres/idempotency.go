package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/kessai/kessai/server/payment"
)

// DB implements payment.IdempotencyStore on the idempotency_keys table.
// Each method is one short transaction of its own (one statement, or the
// statements of Reserve), never a part of the request's.

// sweepBatch bounds one DELETE of DeleteExpired, so that a large sweep
// never holds many row locks for long.
const sweepBatch = 1000

const idempotencyColumns = `scope, idem_key, fingerprint, lock_id, state, created_on, locked_on, expires_on, status, header, body`

// Reserve inserts rec unless its (scope, key) exists and otherwise reads
// the existing row. The INSERT … ON CONFLICT DO NOTHING waits for a
// reservation of the same key that is not yet committed, so no two
// reservations both insert; the SELECT after it sees the row that
// prevented the insert, unless it was deleted in between (released or
// swept), and then the insert is tried again.
func (db *DB) Reserve(ctx context.Context, rec *payment.IdempotencyRecord) (existing *payment.IdempotencyRecord, reserved bool, err error) {
	for range maxAttempts {
		tag, err := db.pool.Exec(ctx, `INSERT INTO idempotency_keys (`+idempotencyColumns+`)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, NULL, NULL, NULL)
			ON CONFLICT (scope, idem_key) DO NOTHING`,
			rec.Scope, rec.Key, rec.Fingerprint, rec.Lock, string(rec.State), rec.CreatedOn, rec.LockedOn, rec.ExpiresOn)
		if err != nil {
			return nil, false, err
		}
		if tag.RowsAffected() == 1 {
			return nil, true, nil
		}
		existing, err = scanIdempotency(db.pool.QueryRow(ctx,
			`SELECT `+idempotencyColumns+` FROM idempotency_keys WHERE scope = $1 AND idem_key = $2`, rec.Scope, rec.Key))
		if err == nil {
			return existing, false, nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return nil, false, err
		}
	}
	return nil, false, fmt.Errorf("postgres: idempotency key %q kept changing under its reservation", rec.Key)
}

// Replace overwrites the row, its effect cleared, while it still holds
// lock: a compare-and-swap in one statement.
func (db *DB) Replace(ctx context.Context, lock string, rec *payment.IdempotencyRecord) (bool, error) {
	return affectedOne(db.pool.Exec(ctx, `UPDATE idempotency_keys
		SET fingerprint = $1, lock_id = $2, state = $3, created_on = $4, locked_on = $5, expires_on = $6,
			status = NULL, header = NULL, body = NULL,
			effect_kind = NULL, effect_store_id = NULL, effect_charge_id = NULL, effect_id = NULL
		WHERE scope = $7 AND idem_key = $8 AND lock_id = $9`,
		rec.Fingerprint, rec.Lock, string(rec.State), rec.CreatedOn, rec.LockedOn, rec.ExpiresOn,
		rec.Scope, rec.Key, lock))
}

const effectColumns = `effect_kind, effect_store_id, effect_charge_id, effect_id`

// TakeOver moves the lock of the in-flight row still holding lock and
// returns its effect, in one statement. A domain transaction recording an
// effect under the old lock holds the row until it ends: the UPDATE waits
// for it, then (READ COMMITTED) checks the row as it committed, effect
// included, and RETURNING gives that row. One that has not written yet
// finds the lock moved and records nothing.
func (db *DB) TakeOver(ctx context.Context, lock string, rec *payment.IdempotencyRecord) (*payment.IdempotentEffect, bool, error) {
	effect, err := scanEffect(db.pool.QueryRow(ctx, `UPDATE idempotency_keys SET lock_id = $1, locked_on = $2, expires_on = $3
		WHERE scope = $4 AND idem_key = $5 AND lock_id = $6 AND state = $7
		RETURNING `+effectColumns,
		rec.Lock, rec.LockedOn, rec.ExpiresOn, rec.Scope, rec.Key, lock, string(payment.IdempotencyInFlight)))
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, false, nil
	case err != nil:
		return nil, false, err
	}
	return effect, true, nil
}

// Complete stores the answer of the in-flight reservation holding lock.
func (db *DB) Complete(ctx context.Context, scope, key, lock string, resp *payment.IdempotentResponse, expiresOn time.Time) (bool, error) {
	var header *string
	if len(resp.Header) > 0 {
		b, err := json.Marshal(resp.Header)
		if err != nil {
			return false, err
		}
		s := string(b)
		header = &s
	}
	body := resp.Body
	if body == nil {
		body = []byte{}
	}
	return affectedOne(db.pool.Exec(ctx, `UPDATE idempotency_keys
		SET state = $1, status = $2, header = $3, body = $4, expires_on = $5
		WHERE scope = $6 AND idem_key = $7 AND lock_id = $8 AND state = $9`,
		string(payment.IdempotencyCompleted), resp.Status, header, body, expiresOn,
		scope, key, lock, string(payment.IdempotencyInFlight)))
}

// Release deletes the row while it still holds lock, unless it has an
// effect, which it then returns. Only the holder of lock writes the effect
// (and it is done with the request by now) or moves the lock away, so the
// row read after a DELETE that left it is the one the DELETE saw, or gone.
func (db *DB) Release(ctx context.Context, scope, key, lock string) (*payment.IdempotentEffect, error) {
	tag, err := db.pool.Exec(ctx, `DELETE FROM idempotency_keys
		WHERE scope = $1 AND idem_key = $2 AND lock_id = $3 AND effect_kind IS NULL`, scope, key, lock)
	if err != nil || tag.RowsAffected() == 1 {
		return nil, err
	}
	effect, err := scanEffect(db.pool.QueryRow(ctx, `SELECT `+effectColumns+` FROM idempotency_keys
		WHERE scope = $1 AND idem_key = $2 AND lock_id = $3`, scope, key, lock))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil // no longer ours
	}
	return effect, err
}

// RecordIdempotentEffect notes eff on the row while ref's reservation
// holds it in flight: the domain transaction's one write of the keys. A
// takeover that committed after this transaction's snapshot makes the
// UPDATE fail with a serialization failure, and Update runs the
// transaction again on a snapshot where the lock has moved.
func (t *tx) RecordIdempotentEffect(ctx context.Context, ref payment.IdempotencyRef, eff payment.IdempotentEffect) (bool, error) {
	return affectedOne(t.tx.ExecContext(ctx, `UPDATE idempotency_keys
		SET effect_kind = ?, effect_store_id = ?, effect_charge_id = ?, effect_id = ?
		WHERE scope = ? AND idem_key = ? AND lock_id = ? AND state = ?`,
		string(eff.Kind), nullID(eff.StoreID), nullID(eff.ChargeID), nullID(eff.ID),
		ref.Scope, ref.Key, ref.Lock, string(payment.IdempotencyInFlight)))
}

// scanEffect reads the effect columns: nil when none was recorded.
func scanEffect(row scanner) (*payment.IdempotentEffect, error) {
	var kind *string
	var storeID, chargeID, id *uuid.UUID
	if err := row.Scan(&kind, &storeID, &chargeID, &id); err != nil {
		return nil, err
	}
	if kind == nil {
		return nil, nil
	}
	eff := &payment.IdempotentEffect{Kind: payment.EffectKind(*kind)}
	for _, c := range []struct {
		dst *uuid.UUID
		src *uuid.UUID
	}{{&eff.StoreID, storeID}, {&eff.ChargeID, chargeID}, {&eff.ID, id}} {
		if c.src != nil {
			*c.dst = *c.src
		}
	}
	return eff, nil
}

// DeleteExpired deletes expired rows in batches of sweepBatch, each its own
// short statement; rows another sweep is deleting are skipped, not waited
// for.
func (db *DB) DeleteExpired(ctx context.Context, before time.Time) (int, error) {
	total := 0
	for {
		tag, err := db.pool.Exec(ctx, `DELETE FROM idempotency_keys WHERE (scope, idem_key) IN
			(SELECT scope, idem_key FROM idempotency_keys WHERE expires_on <= $1 LIMIT $2 FOR UPDATE SKIP LOCKED)`,
			before, sweepBatch)
		if err != nil {
			return total, err
		}
		n := tag.RowsAffected()
		total += int(n)
		if n < sweepBatch {
			return total, nil
		}
	}
}

func affectedOne(tag pgconn.CommandTag, err error) (bool, error) {
	if err != nil {
		return false, err
	}
	return tag.RowsAffected() == 1, nil
}

func scanIdempotency(row scanner) (*payment.IdempotencyRecord, error) {
	var rec payment.IdempotencyRecord
	var state string
	var status *int64
	var header *string
	var body []byte
	if err := row.Scan(&rec.Scope, &rec.Key, &rec.Fingerprint, &rec.Lock, &state,
		&rec.CreatedOn, &rec.LockedOn, &rec.ExpiresOn, &status, &header, &body); err != nil {
		return nil, err
	}
	rec.State = payment.IdempotencyState(state)
	if rec.State == payment.IdempotencyCompleted {
		resp := &payment.IdempotentResponse{Body: body}
		if status != nil {
			resp.Status = int(*status)
		}
		if resp.Body == nil {
			resp.Body = []byte{}
		}
		if header != nil {
			if err := json.Unmarshal([]byte(*header), &resp.Header); err != nil {
				return nil, fmt.Errorf("postgres: idempotency header: %w", err)
			}
		}
		rec.Response = resp
	}
	return &rec, nil
}
