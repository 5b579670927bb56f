package api_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"testing"
)

// BenchmarkAuthenticate measures what every secret-bearing API call pays
// to be authenticated once its token is in the auth cache: splitting the
// header, verifying the JWT's HS256 signature and claims, a cache lookup
// and the keyed hash of the secret. Compare with BenchmarkSecretHMAC:
//
//	go test -run '^$' -bench 'Authenticate|SecretHMAC' -benchmem ./server/api
func BenchmarkAuthenticate(b *testing.B) {
	f := newFixture(b)
	ctx := context.Background()
	auth := server(f.tokA1)
	// Warm the cache; the fake clock never moves, so it stays warm.
	if _, err := f.svc.Access.Authenticate(ctx, auth, ""); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		c, err := f.svc.Access.Authenticate(ctx, auth, "")
		if err != nil || !c.WithSecret() {
			b.Fatalf("Authenticate: %v, %v", c, err)
		}
	}
}

var sink []byte

// BenchmarkSecretHMAC is the floor: the HMAC-SHA256 of a secret alone,
// which Authenticate cannot avoid.
func BenchmarkSecretHMAC(b *testing.B) {
	secret := []byte("0123456789abcdefghijklmnopqrstuvwxyzABCDEFG") // 43 characters, as issued
	b.ReportAllocs()
	for b.Loop() {
		m := hmac.New(sha256.New, secretKey)
		m.Write(secret)
		sink = m.Sum(nil)
	}
}
