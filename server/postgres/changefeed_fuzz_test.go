package postgres

import (
	"slices"
	"testing"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
)

// FuzzDecodeNews feeds the change feed's decoder what anyone allowed to
// NOTIFY on the channel could send: it never panics, and what it accepts
// encodes back to news that decode to the same.
func FuzzDecodeNews(f *testing.F) {
	for _, p := range encodeNews("0123456789abcdef", payment.News{
		Changed: []uuid.UUID{uuid.New()}, Revoked: []uuid.UUID{uuid.New()}, Work: true, Events: true,
	}) {
		f.Add(p)
	}
	f.Add("v1 0123456789abcdef - c" + "00000000000000000000000000000000")
	f.Add("v1 0123456789abcdef x")
	f.Add("v2")
	f.Fuzz(func(t *testing.T, payload string) {
		origin, n, err := decodeNews(payload)
		if err != nil {
			return
		}
		var again payment.News
		for _, p := range encodeNews(origin, n) {
			if len(p) > maxPayload {
				t.Fatalf("a payload of %d bytes, over PostgreSQL's limit", len(p))
			}
			o2, n2, err := decodeNews(p)
			if err != nil || o2 != origin || n2.Work != n.Work || n2.Events != n.Events {
				t.Fatalf("%q decoded to %+v, which encodes to %q: %v", payload, n, p, err)
			}
			again.Changed = append(again.Changed, n2.Changed...)
			again.Revoked = append(again.Revoked, n2.Revoked...)
		}
		if !slices.Equal(again.Changed, n.Changed) || !slices.Equal(again.Revoked, n.Revoked) {
			t.Fatalf("%q: ids changed in a round trip", payload)
		}
	})
}
