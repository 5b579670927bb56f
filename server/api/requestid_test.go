package api

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// TestValidClientRequestID: the hand-written check accepts exactly what
// ^[A-Za-z0-9._:-]{8,128}$ accepts.
func TestValidClientRequestID(t *testing.T) {
	re := regexp.MustCompile(`^[A-Za-z0-9._:-]{8,128}$`)
	cases := []string{"", "abcdefg", "abcdefgh", "abc-def_ghi.jkl:mno", "01HZX5Q3W8", "abcdefgh\n", "abcdefg\x00h", "abcdé123",
		"abcd efgh", "abcd/efgh", strings.Repeat("a", 128), strings.Repeat("a", 129), "ABCDEFGH", "12345678", "1234567+"}
	alphabet := []byte("aZ09._:-/ \n+é\x00")
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		b := make([]byte, rng.IntN(140))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		cases = append(cases, string(b))
	}
	for _, c := range cases {
		if got, want := validClientRequestID(c), re.MatchString(c); got != want {
			t.Errorf("validClientRequestID(%q) = %v, the expression says %v", c, got, want)
		}
	}
}
