package payment_test

import (
	"testing"

	"github.com/kessai/kessai/server/payment"
)

// TestApprovalTriesLeft: a challenge takes three one-time codes; the page
// says how many are left after each wrong one, never fewer than none.
func TestApprovalTriesLeft(t *testing.T) {
	for _, tt := range []struct{ tries, left int }{{0, 3}, {1, 2}, {2, 1}, {3, 0}, {4, 0}} {
		a := payment.Approval{Kind: payment.ApprovalThreeDS, Tries: tt.tries}
		if got := a.TriesLeft(); got != tt.left {
			t.Errorf("after %d wrong codes TriesLeft() = %d, want %d", tt.tries, got, tt.left)
		}
	}
}
