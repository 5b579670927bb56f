package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/kessai/kessai/server/payment"
)

// Direct is what an engine's DB serves outside the domain's transactions:
// payment.IdempotencyStore on the idempotency_keys table, and the key
// fingerprints. An engine embeds it, with the way it runs one write of
// its own.
type Direct struct {
	Dialect Dialect
	// Write runs fn as one write: in one transaction (SQLite's write
	// groups), or statement by statement, each its own transaction
	// (PostgreSQL, whose reasons are in its idempotency.go).
	Write func(ctx context.Context, fn func(Querier) error) error
}

var _ payment.IdempotencyStore = Direct{}

// sweepBatch bounds one DELETE of DeleteExpired, so that a large sweep
// never holds a lock for long.
const sweepBatch = 1000

// reserveAttempts bounds how often Reserve inserts again a key whose row
// was gone before it could be read (released or swept in between, which
// can happen only where the insert and the read are two transactions).
const reserveAttempts = 200

const idempotencyColumns = `scope, idem_key, fingerprint, lock_id, state, created_on, locked_on, expires_on, status, header, body`

// Reserve inserts rec unless its (scope, key) exists and otherwise reads
// the existing row: the INSERT … ON CONFLICT DO NOTHING waits for a
// reservation of the same key that is not yet committed, so no two
// reservations both insert, and the row read is the one that prevented
// the insert, unless it was deleted in between; then the insert is tried
// again.
func (s Direct) Reserve(ctx context.Context, rec *payment.IdempotencyRecord) (existing *payment.IdempotencyRecord, reserved bool, err error) {
	d := s.Dialect
	for range reserveAttempts {
		err = s.Write(ctx, func(q Querier) error {
			existing, reserved = nil, false
			inserted, err := affectedOne(q.ExecContext(ctx, `INSERT INTO idempotency_keys (`+idempotencyColumns+`)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, NULL)
			ON CONFLICT (scope, idem_key) DO NOTHING`,
				rec.Scope, rec.Key, rec.Fingerprint, rec.Lock, string(rec.State),
				d.Time(rec.CreatedOn), d.Time(rec.LockedOn), d.Time(rec.ExpiresOn)))
			if err != nil || inserted {
				reserved = inserted
				return err
			}
			existing, err = scanIdempotency(d, q.QueryRowContext(ctx,
				`SELECT `+idempotencyColumns+` FROM idempotency_keys WHERE scope = ? AND idem_key = ?`, rec.Scope, rec.Key))
			return err
		})
		if !errors.Is(err, sql.ErrNoRows) {
			break
		}
	}
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, false, fmt.Errorf("%s: idempotency key %q kept changing under its reservation", d.Name(), rec.Key)
	case err != nil:
		return nil, false, err
	}
	return existing, reserved, nil
}

// writeOne runs one statement as a write of its own and reports whether
// it changed exactly one row.
func (s Direct) writeOne(ctx context.Context, query string, args ...any) (one bool, err error) {
	err = s.Write(ctx, func(q Querier) error {
		one, err = affectedOne(q.ExecContext(ctx, query, args...))
		return err
	})
	return one, err
}

// Replace overwrites the row, its effect cleared, while it still holds
// lock: a compare-and-swap in one statement.
func (s Direct) Replace(ctx context.Context, lock string, rec *payment.IdempotencyRecord) (bool, error) {
	d := s.Dialect
	return s.writeOne(ctx, `UPDATE idempotency_keys
		SET fingerprint = ?, lock_id = ?, state = ?, created_on = ?, locked_on = ?, expires_on = ?,
			status = NULL, header = NULL, body = NULL,
			effect_kind = NULL, effect_store_id = NULL, effect_charge_id = NULL, effect_id = NULL
		WHERE scope = ? AND idem_key = ? AND lock_id = ?`,
		rec.Fingerprint, rec.Lock, string(rec.State), d.Time(rec.CreatedOn), d.Time(rec.LockedOn), d.Time(rec.ExpiresOn),
		rec.Scope, rec.Key, lock)
}

const effectColumns = `effect_kind, effect_store_id, effect_charge_id, effect_id`

// TakeOver moves the lock of the in-flight row still holding lock and
// returns its effect, in one statement. A domain transaction recording an
// effect under the old lock is serialised with it (SQLite's one writer),
// or holds the row until it ends, and then the UPDATE, which waited for
// it, checks the row as it committed, effect included (PostgreSQL's READ
// COMMITTED), and RETURNING gives that row. One that has not written yet
// finds the lock moved and records nothing.
func (s Direct) TakeOver(ctx context.Context, lock string, rec *payment.IdempotencyRecord) (effect *payment.IdempotentEffect, taken bool, err error) {
	d := s.Dialect
	err = s.Write(ctx, func(q Querier) error {
		effect, taken = nil, false
		e, err := scanEffect(d, q.QueryRowContext(ctx, `UPDATE idempotency_keys SET lock_id = ?, locked_on = ?, expires_on = ?
			WHERE scope = ? AND idem_key = ? AND lock_id = ? AND state = ?
			RETURNING `+effectColumns,
			rec.Lock, d.Time(rec.LockedOn), d.Time(rec.ExpiresOn), rec.Scope, rec.Key, lock, string(payment.IdempotencyInFlight)))
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return nil
		case err != nil:
			return err
		}
		effect, taken = e, true
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	return effect, taken, nil
}

// Complete stores the answer of the in-flight reservation holding lock.
func (s Direct) Complete(ctx context.Context, scope, key, lock string, resp *payment.IdempotentResponse, expiresOn time.Time) (bool, error) {
	var header any
	if len(resp.Header) > 0 {
		b, err := json.Marshal(resp.Header)
		if err != nil {
			return false, err
		}
		header = string(b)
	}
	body := resp.Body
	if body == nil {
		body = []byte{}
	}
	return s.writeOne(ctx, `UPDATE idempotency_keys
		SET state = ?, status = ?, header = ?, body = ?, expires_on = ?
		WHERE scope = ? AND idem_key = ? AND lock_id = ? AND state = ?`,
		string(payment.IdempotencyCompleted), resp.Status, header, body, s.Dialect.Time(expiresOn),
		scope, key, lock, string(payment.IdempotencyInFlight))
}

// Release deletes the row while it still holds lock, unless it has an
// effect, which it then returns. Only the holder of lock writes the effect
// (and it is done with the request by now) or moves the lock away, so the
// row read after a DELETE that left it is the one the DELETE saw, or gone.
func (s Direct) Release(ctx context.Context, scope, key, lock string) (effect *payment.IdempotentEffect, err error) {
	err = s.Write(ctx, func(q Querier) error {
		effect = nil
		deleted, err := affectedOne(q.ExecContext(ctx, `DELETE FROM idempotency_keys
			WHERE scope = ? AND idem_key = ? AND lock_id = ? AND effect_kind IS NULL`, scope, key, lock))
		if err != nil || deleted {
			return err
		}
		effect, err = scanEffect(s.Dialect, q.QueryRowContext(ctx, `SELECT `+effectColumns+` FROM idempotency_keys
			WHERE scope = ? AND idem_key = ? AND lock_id = ?`, scope, key, lock))
		if errors.Is(err, sql.ErrNoRows) {
			err = nil // no longer ours
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return effect, nil
}

// RecordIdempotentEffect notes eff on the row while ref's reservation
// holds it in flight: the domain transaction's one write of the keys. A
// takeover that committed meanwhile has moved the lock (under PostgreSQL's
// snapshots, after this transaction's snapshot: the UPDATE then fails as
// a conflict, and the transaction runs again and finds the lock moved).
func (t *Tx) RecordIdempotentEffect(ctx context.Context, ref payment.IdempotencyRef, eff payment.IdempotentEffect) (bool, error) {
	return affectedOne(t.q.ExecContext(ctx, `UPDATE idempotency_keys
		SET effect_kind = ?, effect_store_id = ?, effect_charge_id = ?, effect_id = ?
		WHERE scope = ? AND idem_key = ? AND lock_id = ? AND state = ?`,
		string(eff.Kind), t.d.EffectID(eff.StoreID), t.d.EffectID(eff.ChargeID), t.d.EffectID(eff.ID),
		ref.Scope, ref.Key, ref.Lock, string(payment.IdempotencyInFlight)))
}

// scanEffect reads the effect columns: nil when none was recorded.
func scanEffect(d Dialect, row Row) (*payment.IdempotentEffect, error) {
	var kind, storeID, chargeID, id sql.NullString
	if err := row.Scan(&kind, &storeID, &chargeID, &id); err != nil {
		return nil, err
	}
	if !kind.Valid {
		return nil, nil
	}
	ids := idColumns{d: d, table: "idempotency_keys"}
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
// short write, so that requests are not held up behind one long delete;
// rows another sweep is deleting are skipped, not waited for.
func (s Direct) DeleteExpired(ctx context.Context, before time.Time) (int, error) {
	total := 0
	for {
		var n int64
		err := s.Write(ctx, func(q Querier) error {
			res, err := q.ExecContext(ctx, `DELETE FROM idempotency_keys WHERE (scope, idem_key) IN
				(SELECT scope, idem_key FROM idempotency_keys WHERE expires_on <= ? LIMIT ?`+s.Dialect.SkipLocked()+`)`,
				s.Dialect.Time(before), sweepBatch)
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

func scanIdempotency(d Dialect, row Row) (*payment.IdempotencyRecord, error) {
	var rec payment.IdempotencyRecord
	var state string
	var created, locked, expires instant
	var status sql.NullInt64
	var header sql.NullString
	var body []byte
	if err := row.Scan(&rec.Scope, &rec.Key, &rec.Fingerprint, &rec.Lock, &state,
		&created, &locked, &expires, &status, &header, &body); err != nil {
		return nil, err
	}
	rec.State = payment.IdempotencyState(state)
	rec.CreatedOn, rec.LockedOn, rec.ExpiresOn = created.t, locked.t, expires.t
	if rec.State == payment.IdempotencyCompleted {
		resp := &payment.IdempotentResponse{Status: int(status.Int64), Body: body}
		if resp.Body == nil {
			resp.Body = []byte{}
		}
		if header.Valid {
			if err := json.Unmarshal([]byte(header.String), &resp.Header); err != nil {
				return nil, fmt.Errorf("%s: idempotency header: %w", d.Name(), err)
			}
		}
		rec.Response = resp
	}
	return &rec, nil
}

// ErrFingerprintChanged is ReplaceKeyFingerprint's answer when the
// recorded fingerprint is no longer the one the caller replaces: another
// process replaced it first.
var ErrFingerprintChanged = errors.New("the key fingerprint changed meanwhile")

// KeyFingerprint records fp as the fingerprint of the key called name
// unless one is recorded already, and returns the recorded one. The read
// comes after the insert, which waited for any concurrent first insert to
// commit.
func (s Direct) KeyFingerprint(ctx context.Context, name string, fp []byte) (recorded []byte, err error) {
	err = s.Write(ctx, func(q Querier) error {
		if _, err := q.ExecContext(ctx,
			`INSERT INTO key_fingerprints (name, fingerprint, recorded_on) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING`,
			name, fp, s.Dialect.Time(time.Now())); err != nil {
			return err
		}
		return q.QueryRowContext(ctx, `SELECT fingerprint FROM key_fingerprints WHERE name = ?`, name).Scan(&recorded)
	})
	if err != nil {
		return nil, fmt.Errorf("%s: key fingerprint: %w", s.Dialect.Name(), err)
	}
	return recorded, nil
}

// ReplaceKeyFingerprint records fp in place of old as the fingerprint of
// the key called name (a rotated card key), or fails with
// ErrFingerprintChanged if old is no longer the one recorded.
func (s Direct) ReplaceKeyFingerprint(ctx context.Context, name string, old, fp []byte) error {
	one, err := s.writeOne(ctx, `UPDATE key_fingerprints SET fingerprint = ?, recorded_on = ? WHERE name = ? AND fingerprint = ?`,
		fp, s.Dialect.Time(time.Now()), name, old)
	switch {
	case err != nil:
		return fmt.Errorf("%s: key fingerprint: %w", s.Dialect.Name(), err)
	case !one:
		return fmt.Errorf("%s: %w", s.Dialect.Name(), ErrFingerprintChanged)
	}
	return nil
}
