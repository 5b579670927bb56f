package gateway_test

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kessai/kessai/server/gateway"
	"github.com/kessai/kessai/server/gateway/gatewaytest"
	"github.com/kessai/kessai/server/postgres/postgrestest"
)

// TestKeyCheck: the processes of one database must share its signing and
// card keys. One after another, processes open the database with keys of
// their own (or the keys generated into a data directory of their own),
// on each engine: a key other than the recorded one is refused with a
// message naming its variable, and a card key rotated with the old one
// retired is accepted and recorded.
func TestKeyCheck(t *testing.T) {
	key := func(b byte) []byte { return bytes.Repeat([]byte{b}, 32) }
	type process struct {
		// dataDir is the process's own data directory ("" for the
		// first's), whose generated keys it uses unless given its own:
		// PostgreSQL only, an embedded store being its data directory's.
		dataDir       string
		signing, card []byte // nil: the data directory's
		retired       [][]byte
		wantErr       string // what the refusal names; "" to start
	}
	tests := []struct {
		name  string
		steps []process
	}{
		{"same keys start", []process{
			{signing: key(1), card: key(2)},
			{signing: key(1), card: key(2)},
		}},
		{"same keys in another data directory", []process{
			{signing: key(1), card: key(2)},
			{signing: key(1), card: key(2), dataDir: "other"},
		}},
		{"generated keys of one data directory", []process{
			{},
			{},
		}},
		{"generated keys of another data directory", []process{
			{},
			{dataDir: "other", wantErr: "KESSAI_SIGNING_KEY"},
		}},
		{"other signing key", []process{
			{signing: key(1), card: key(2)},
			{signing: key(3), card: key(2), wantErr: "KESSAI_SIGNING_KEY"},
			{signing: key(1), card: key(2)},
		}},
		{"other card key", []process{
			{signing: key(1), card: key(2)},
			{signing: key(1), card: key(4), wantErr: "KESSAI_CARD_KEY"},
			{signing: key(1), card: key(4), retired: [][]byte{key(5)}, wantErr: "KESSAI_CARD_KEY"},
			{signing: key(1), card: key(2)},
		}},
		{"rotation", []process{
			{signing: key(1), card: key(2)},
			{signing: key(1), card: key(4), retired: [][]byte{key(2)}},
			// The new key is the recorded one now: the old one alone is
			// refused, the new one alone starts.
			{signing: key(1), card: key(2), wantErr: "KESSAI_CARD_KEY"},
			{signing: key(1), card: key(4)},
			{signing: key(1), card: key(4), retired: [][]byte{key(2)}},
		}},
	}
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					root := t.TempDir()
					dbURL := ""
					if engine == "postgres" {
						if testing.Short() {
							t.Skip("PostgreSQL under -short")
						}
						dbURL = postgrestest.Schema(t)
					}
					for i, p := range tt.steps {
						cfg, _ := gatewaytest.Config(t, gatewaytest.Options{DataDir: filepath.Join(root, "first")})
						if p.dataDir != "" {
							if engine == "sqlite" {
								t.Skip("an embedded store is its data directory's")
							}
							cfg.DataDir = filepath.Join(root, p.dataDir)
						}
						cfg.DatabaseURL = dbURL
						cfg.SigningKey, cfg.CardKey, cfg.RetiredCardKeys = p.signing, p.card, p.retired
						err := openAndClose(t, cfg)
						switch {
						case p.wantErr == "" && err != nil:
							t.Fatalf("process %d: %v", i, err)
						case p.wantErr != "" && err == nil:
							t.Fatalf("process %d started; want a refusal naming %s", i, p.wantErr)
						case p.wantErr != "" && !strings.Contains(err.Error(), p.wantErr):
							t.Fatalf("process %d: %v; want it to name %s", i, err, p.wantErr)
						}
					}
				})
			}
		})
	}
}

func openAndClose(t *testing.T, cfg gateway.Config) error {
	t.Helper()
	_, closeStore, err := gateway.OpenService(context.Background(), cfg, cfg.Logger(&bytes.Buffer{}))
	if err != nil {
		return err
	}
	return closeStore()
}
