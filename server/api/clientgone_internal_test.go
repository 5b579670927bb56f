package api

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"testing"
)

// TestClientGoneAnswerIsNotStored: the 499 recorded for a client that went
// away is never kept as an Idempotency-Key's answer: the request may have
// been cut short, and the client's retry must run it.
func TestClientGoneAnswerIsNotStored(t *testing.T) {
	if storable(statusClientClosedRequest) {
		t.Error("a 499 answer would be stored for its idempotency key")
	}
}

func TestClientGone(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	gone := httptest.NewRequest("GET", "/", nil).WithContext(ctx)
	live := httptest.NewRequest("GET", "/", nil)
	for _, tc := range []struct {
		name string
		live bool
		err  error
		want bool
	}{
		{"canceled, client gone", false, context.Canceled, true},
		{"wrapped, client gone", false, fmt.Errorf("sqlite: begin: %w", context.Canceled), true},
		{"other error, client gone", false, errors.New("disk full"), false},
		{"canceled, client still there", true, context.Canceled, false},
		{"deadline, client gone", false, context.DeadlineExceeded, false},
	} {
		r := gone
		if tc.live {
			r = live
		}
		if got := clientGone(r, tc.err); got != tc.want {
			t.Errorf("%s: clientGone = %v, want %v", tc.name, got, tc.want)
		}
	}
}
