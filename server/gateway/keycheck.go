package gateway

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"fmt"
)

// KeyFingerprints is what an engine keeps of the keys its processes must
// share: a fingerprint of each, recorded by the first process to start.
type KeyFingerprints interface {
	// KeyFingerprint records fp for name unless one is recorded, and
	// returns the recorded one.
	KeyFingerprint(ctx context.Context, name string, fp []byte) ([]byte, error)
	// ReplaceKeyFingerprint records fp in place of old.
	ReplaceKeyFingerprint(ctx context.Context, name string, old, fp []byte) error
}

// The names of the fingerprints in the database.
const (
	signingKeyName = "signing"
	cardKeyName    = "card"
)

// fingerprint identifies key without revealing it: HMAC-SHA256 of a fixed
// label under the key.
func fingerprint(key []byte, name string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("kessai/key-fingerprint/" + name))
	return m.Sum(nil)
}

// CheckStoreKeys checks db against the keys the configuration gives (or
// its data directory holds, generated if missing) as a gateway starting
// on it would, and records them when db has no record yet: kessai migrate
// runs it on the store it copies, so that the copy carries the record.
func CheckStoreKeys(ctx context.Context, cfg Config, db KeyFingerprints) error {
	master, err := masterKey(cfg)
	if err != nil {
		return err
	}
	card, retired, err := cardKeys(cfg)
	if err != nil {
		return err
	}
	return checkKeys(ctx, db, master, card, retired)
}

// checkKeys refuses a signing key or card key other than the ones the
// database was first used with. Every process on one database must share
// both: each would otherwise generate its own into its data directory,
// and mint app tokens and sessions the others refuse, or seal cards they
// cannot open. A card key rotation is accepted when the recorded card key
// is among the retired ones, and the new key is recorded in its place.
func checkKeys(ctx context.Context, db KeyFingerprints, signing, card []byte, retired [][]byte) error {
	fp := fingerprint(signing, signingKeyName)
	recorded, err := db.KeyFingerprint(ctx, signingKeyName, fp)
	if err != nil {
		return err
	}
	if !hmac.Equal(recorded, fp) {
		return errors.New("the signing key is not the one this database was first used with: " +
			"every process on one database needs the same KESSAI_SIGNING_KEY (or the same server.key in its data directory)")
	}
	fp = fingerprint(card, cardKeyName)
	recorded, err = db.KeyFingerprint(ctx, cardKeyName, fp)
	if err != nil {
		return err
	}
	if hmac.Equal(recorded, fp) {
		return nil
	}
	for _, r := range retired {
		if hmac.Equal(recorded, fingerprint(r, cardKeyName)) {
			if err := db.ReplaceKeyFingerprint(ctx, cardKeyName, recorded, fp); err != nil {
				// Another process rotating to the same key at once
				// recorded it first.
				if now, rerr := db.KeyFingerprint(ctx, cardKeyName, fp); rerr == nil && hmac.Equal(now, fp) {
					return nil
				}
				return fmt.Errorf("recording the rotated card key: %w", err)
			}
			return nil
		}
	}
	return errors.New("the card key is not the one this database was first used with: " +
		"every process on one database needs the same KESSAI_CARD_KEY (or the same card.key in its data directory); " +
		"to rotate it, keep the old key in KESSAI_RETIRED_CARD_KEYS")
}
