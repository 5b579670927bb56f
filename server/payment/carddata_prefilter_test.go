package payment

import (
	"math/rand/v2"
	"testing"
)

// TestMayBeCardShaped: the quick test never rules out a string in which
// the card-shaped expression finds a run.
func TestMayBeCardShaped(t *testing.T) {
	cases := []string{"4000 0200 0000 0000", "4000-0200-0000-0000", "400002000000", "40000200000", "3782 822463 10005",
		"/stores/0196c5a0-2a4f-7c1e-9d3b-5f6a7b8c9d0e/charges/0196c5a0-2a4f-7c1e-9d3b-5f6a7b8c9d0f", "x4111111111111111y"}
	alphabet := []byte("0123456789 -a/")
	rng := rand.New(rand.NewPCG(3, 4))
	for range 50000 {
		b := make([]byte, rng.IntN(40))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		cases = append(cases, string(b))
	}
	matched := 0
	for _, c := range cases {
		if cardShaped.MatchString(c) {
			matched++
			if !mayBeCardShaped(c) {
				t.Errorf("mayBeCardShaped(%q) = false, but the expression matches", c)
			}
		}
	}
	if matched < 100 {
		t.Fatalf("only %d of the cases match: the test proves little", matched)
	}
}
