package gateway

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Key files generated into the data directory on first start when no key
// is configured. Losing server.key invalidates every app token; losing
// card.key makes every stored card unusable.
const (
	masterKeyFile = "server.key"
	cardKeyFile   = "card.key"
)

// masterKey returns the configured key, or the one in the data directory,
// generating it on first start.
func masterKey(cfg Config) ([]byte, error) {
	if cfg.SigningKey != nil {
		return cfg.SigningKey, nil
	}
	return keyInDataDir(filepath.Join(cfg.DataDir, masterKeyFile))
}

// cardKeys returns the key that seals card data and the retired keys that
// still open older data.
func cardKeys(cfg Config) (current []byte, retired [][]byte, err error) {
	if cfg.CardKey != nil {
		return cfg.CardKey, cfg.RetiredCardKeys, nil
	}
	k, err := keyInDataDir(filepath.Join(cfg.DataDir, cardKeyFile))
	return k, cfg.RetiredCardKeys, err
}

// keyInDataDir reads a 32-byte hex key from path, creating it first if it
// does not exist.
func keyInDataDir(path string) ([]byte, error) {
	if b, err := os.ReadFile(path); err == nil {
		k, err := hex.DecodeString(strings.TrimSpace(string(b)))
		if err != nil || len(k) < 32 {
			return nil, fmt.Errorf("%s is not a hex key of at least 32 bytes", path)
		}
		// A key file left readable by others (an older version, a copy)
		// is made the owner's only.
		if err := os.Chmod(path, 0o600); err != nil {
			return nil, err
		}
		return k, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	k := make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		return nil, err
	}
	// O_EXCL: two processes starting together must not each write a key.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return keyInDataDir(path)
	}
	if err != nil {
		return nil, err
	}
	if _, err := f.WriteString(hex.EncodeToString(k) + "\n"); err != nil {
		f.Close()
		return nil, err
	}
	return k, f.Close()
}

// deriveKey gives each use of the master key its own key, so that no two
// mechanisms ever share one.
func deriveKey(master []byte, purpose string) []byte {
	m := hmac.New(sha256.New, master)
	m.Write([]byte("kessai/" + purpose))
	return m.Sum(nil)
}
