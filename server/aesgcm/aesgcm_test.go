package aesgcm_test

import (
	"bytes"
	"crypto/rand"
	"testing"

	"github.com/kessai/kessai/server/aesgcm"
	"github.com/kessai/kessai/server/payment"
)

func key(t *testing.T) []byte {
	t.Helper()
	k := make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		t.Fatal(err)
	}
	return k
}

func TestSealOpen(t *testing.T) {
	v, err := aesgcm.New(key(t))
	if err != nil {
		t.Fatal(err)
	}
	pan, aad := []byte("4242424242424242"), []byte("token-1")
	s, err := v.Seal(pan, aad)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(s.Data, pan) {
		t.Fatal("sealed data holds the plaintext")
	}
	again, _ := v.Seal(pan, aad)
	if bytes.Equal(again.Data, s.Data) {
		t.Fatal("two seals of the same plaintext are equal: the nonce is not fresh")
	}
	got, err := v.Open(s, aad)
	if err != nil || !bytes.Equal(got, pan) {
		t.Fatalf("Open = %q, %v", got, err)
	}
	for name, tamper := range map[string]func() (payment.Sealed, []byte){
		"other associated data": func() (payment.Sealed, []byte) { return s, []byte("token-2") },
		"flipped byte": func() (payment.Sealed, []byte) {
			d := append([]byte(nil), s.Data...)
			d[len(d)-1] ^= 1
			return payment.Sealed{KeyID: s.KeyID, Data: d}, aad
		},
		"unknown key id": func() (payment.Sealed, []byte) { return payment.Sealed{KeyID: "nope", Data: s.Data}, aad },
		"truncated":      func() (payment.Sealed, []byte) { return payment.Sealed{KeyID: s.KeyID, Data: s.Data[:4]}, aad },
	} {
		sealed, a := tamper()
		if _, err := v.Open(sealed, a); err == nil {
			t.Errorf("%s: Open succeeded", name)
		}
	}
}

func TestRotation(t *testing.T) {
	oldKey, newKey := key(t), key(t)
	before, _ := aesgcm.New(oldKey)
	s, err := before.Seal([]byte("4000020000000000"), nil)
	if err != nil {
		t.Fatal(err)
	}
	after, err := aesgcm.New(newKey, oldKey)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := after.Open(s, nil); err != nil || string(got) != "4000020000000000" {
		t.Fatalf("retired key cannot open old data: %q %v", got, err)
	}
	fresh, _ := after.Seal([]byte("x"), nil)
	if fresh.KeyID != aesgcm.KeyID(newKey) || fresh.KeyID == s.KeyID {
		t.Fatalf("new data sealed with key %s, want the current key %s", fresh.KeyID, aesgcm.KeyID(newKey))
	}
	if _, err := aesgcm.New(make([]byte, 16)); err == nil {
		t.Fatal("a 16-byte key was accepted")
	}
}
