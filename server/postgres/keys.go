package postgres

import (
	"context"
	"errors"
	"fmt"
)

// ErrFingerprintChanged is ReplaceKeyFingerprint's answer when the
// recorded fingerprint is no longer the one the caller replaces: another
// process replaced it first.
var ErrFingerprintChanged = errors.New("postgres: the key fingerprint changed meanwhile")

// KeyFingerprint records fp as the fingerprint of the key called name
// unless one is recorded already, and returns the recorded one. Two
// statements, each its own transaction: the SELECT's snapshot comes after
// the INSERT, which waited for any concurrent first insert to commit.
func (db *DB) KeyFingerprint(ctx context.Context, name string, fp []byte) ([]byte, error) {
	if _, err := db.pool.Exec(ctx,
		`INSERT INTO key_fingerprints (name, fingerprint, recorded_on) VALUES ($1, $2, now()) ON CONFLICT (name) DO NOTHING`,
		name, fp); err != nil {
		return nil, fmt.Errorf("postgres: key fingerprint: %w", err)
	}
	var recorded []byte
	if err := db.pool.QueryRow(ctx, `SELECT fingerprint FROM key_fingerprints WHERE name = $1`, name).Scan(&recorded); err != nil {
		return nil, fmt.Errorf("postgres: key fingerprint: %w", err)
	}
	return recorded, nil
}

// ReplaceKeyFingerprint records fp in place of old as the fingerprint of
// the key called name (a rotated card key), or fails with
// ErrFingerprintChanged if old is no longer the one recorded.
func (db *DB) ReplaceKeyFingerprint(ctx context.Context, name string, old, fp []byte) error {
	tag, err := db.pool.Exec(ctx,
		`UPDATE key_fingerprints SET fingerprint = $1, recorded_on = now() WHERE name = $2 AND fingerprint = $3`,
		fp, name, old)
	if err != nil {
		return fmt.Errorf("postgres: key fingerprint: %w", err)
	}
	if tag.RowsAffected() != 1 {
		return ErrFingerprintChanged
	}
	return nil
}
