// Package aesgcm seals card data at rest with AES-256-GCM. Each ciphertext
// carries the id of the key that sealed it, so keys can rotate: the current
// key seals, every configured key can still open.
package aesgcm

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"

	"github.com/kessai/kessai/server/payment"
)

// Vault implements payment.CardVault.
type Vault struct {
	current string
	aeads   map[string]cipher.AEAD
}

var _ payment.CardVault = (*Vault)(nil)

// KeyID names a key without revealing it: the first 8 bytes of its SHA-256.
func KeyID(key []byte) string {
	sum := sha256.Sum256(key)
	return hex.EncodeToString(sum[:8])
}

// New returns a vault that seals with current and opens with current or
// any of retired.
func New(current []byte, retired ...[]byte) (*Vault, error) {
	v := &Vault{aeads: map[string]cipher.AEAD{}}
	for i, k := range append([][]byte{current}, retired...) {
		if len(k) != 32 {
			return nil, errors.New("aesgcm: keys must be 32 bytes (AES-256)")
		}
		block, err := aes.NewCipher(k)
		if err != nil {
			return nil, err
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		id := KeyID(k)
		v.aeads[id] = aead
		if i == 0 {
			v.current = id
		}
	}
	return v, nil
}

// Seal encrypts plaintext with a fresh random nonce, prepended to the
// ciphertext.
func (v *Vault) Seal(plaintext, associated []byte) (payment.Sealed, error) {
	aead := v.aeads[v.current]
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plaintext)+aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return payment.Sealed{}, err
	}
	return payment.Sealed{KeyID: v.current, Data: aead.Seal(nonce, nonce, plaintext, associated)}, nil
}

var errOpen = errors.New("aesgcm: cannot open sealed data")

// Open decrypts data sealed by any configured key.
func (v *Vault) Open(s payment.Sealed, associated []byte) ([]byte, error) {
	aead, ok := v.aeads[s.KeyID]
	if !ok || len(s.Data) < aead.NonceSize() {
		return nil, errOpen
	}
	nonce, ct := s.Data[:aead.NonceSize()], s.Data[aead.NonceSize():]
	out, err := aead.Open(nil, nonce, ct, associated)
	if err != nil {
		return nil, errOpen
	}
	return out, nil
}
