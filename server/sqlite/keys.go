package sqlite

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrFingerprintChanged is ReplaceKeyFingerprint's answer when the
// recorded fingerprint is no longer the one the caller replaces: another
// process replaced it first.
var ErrFingerprintChanged = errors.New("sqlite: the key fingerprint changed meanwhile")

// KeyFingerprint records fp as the fingerprint of the key called name
// unless one is recorded already, and returns the recorded one.
func (db *DB) KeyFingerprint(ctx context.Context, name string, fp []byte) ([]byte, error) {
	if _, err := db.write.ExecContext(ctx,
		`INSERT INTO key_fingerprints (name, fingerprint, recorded_on) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING`,
		name, fp, time.Now().UnixMicro()); err != nil {
		return nil, fmt.Errorf("sqlite: key fingerprint: %w", err)
	}
	var recorded []byte
	if err := db.write.QueryRowContext(ctx, `SELECT fingerprint FROM key_fingerprints WHERE name = ?`, name).Scan(&recorded); err != nil {
		return nil, fmt.Errorf("sqlite: key fingerprint: %w", err)
	}
	return recorded, nil
}

// ReplaceKeyFingerprint records fp in place of old as the fingerprint of
// the key called name (a rotated card key), or fails with
// ErrFingerprintChanged if old is no longer the one recorded.
func (db *DB) ReplaceKeyFingerprint(ctx context.Context, name string, old, fp []byte) error {
	res, err := db.write.ExecContext(ctx,
		`UPDATE key_fingerprints SET fingerprint = ?, recorded_on = ? WHERE name = ? AND fingerprint = ?`,
		fp, time.Now().UnixMicro(), name, old)
	if err != nil {
		return fmt.Errorf("sqlite: key fingerprint: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("sqlite: key fingerprint: %w", err)
	} else if n != 1 {
		return ErrFingerprintChanged
	}
	return nil
}
