package postgres

import (
	"strconv"
	"strings"
	"testing"
)

func TestRebind(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", ""},
		{"SELECT 1", "SELECT 1"},
		{"?", "$1"},
		{"id = ?", "id = $1"},
		{"a = ? AND b = ?", "a = $1 AND b = $2"},
		{"??", "$1$2"},
		{"(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", "($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)"},
		{"x = ?::text", "x = $1::text"},
		{"渋谷 ? 店", "渋谷 $1 店"},
		{"$1 ?", "$1 $1"}, // the engine writes no $n of its own: rebind leaves them
	}
	for _, c := range cases {
		if got := rebind(c.in); got != c.want {
			t.Errorf("rebind(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// FuzzRebind: every ? becomes $1, $2, … in order and nothing else changes.
func FuzzRebind(f *testing.F) {
	for _, s := range []string{"", "?", "a ? b ? c", "??", "é?\x00?"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got := rebind(in)
		if strings.Contains(got, "?") {
			t.Fatalf("rebind(%q) = %q keeps a ?", in, got)
		}
		var want strings.Builder
		n := 0
		for _, part := range strings.SplitAfter(in, "?") {
			if strings.HasSuffix(part, "?") {
				n++
				part = strings.TrimSuffix(part, "?") + "$" + strconv.Itoa(n)
			}
			want.WriteString(part)
		}
		if got != want.String() {
			t.Fatalf("rebind(%q) = %q, want %q", in, got, want.String())
		}
	})
}
