package workqueue

import (
	"context"
	"slices"
	"testing"

	"github.com/kessai/kessai/server/payment"
)

// TestHandleTwicePanics: a kind is carried out by one handler; a second
// registration is a wiring mistake caught when the gateway is made, not a
// handler silently replaced.
func TestHandleTwicePanics(t *testing.T) {
	q := New(nil, Config{})
	run := func(context.Context, payment.Work) error { return nil }
	q.Handle(payment.WorkAuthorize, Handler{Run: run})
	defer func() {
		if recover() == nil {
			t.Fatal("a kind registered twice did not panic")
		}
	}()
	q.Handle(payment.WorkAuthorize, Handler{Run: run})
}

// TestKindsAreRegistered: Kinds lists what was registered, sorted, and a
// handler without a back-off gets RetryDelay's.
func TestKindsAreRegistered(t *testing.T) {
	q := New(nil, Config{})
	run := func(context.Context, payment.Work) error { return nil }
	q.Handle(payment.WorkRefund, Handler{Run: run})
	q.Handle(payment.WorkCapture, Handler{Run: run})
	if got, want := q.Kinds(), []payment.WorkKind{payment.WorkCapture, payment.WorkRefund}; !slices.Equal(got, want) {
		t.Errorf("Kinds() = %v, want %v", got, want)
	}
	if got := q.kinds[payment.WorkRefund].Backoff(3); got != RetryDelay(3) {
		t.Errorf("default back-off after 3 failures = %v, want RetryDelay's %v", got, RetryDelay(3))
	}
}
