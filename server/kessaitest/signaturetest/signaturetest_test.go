package signaturetest_test

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kessai/kessai/server/kessaitest/signaturetest"
	"github.com/kessai/kessai/server/payment"
)

// TestVerifyWebhookTimestamp (issue 25): a receiver accepts a delivery
// whose timestamp is within the tolerance of its clock, on either side,
// edges included, and refuses one a nanosecond further in the past (a
// replay) or in the future (a delivery signed ahead to be replayed
// later), even with a good signature.
func TestVerifyWebhookTimestamp(t *testing.T) {
	const (
		secret    = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
		id        = "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W"
		tolerance = 5 * time.Minute
	)
	body := []byte(`{"event":"charge_finished"}`)
	const ts int64 = 1_800_000_000
	signedAt := time.Unix(ts, 0)
	sig, err := payment.SignWebhook(secret, id, ts, body)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		now  time.Time
		ok   bool
	}{
		{"at once", signedAt, true},
		{"as old as the tolerance", signedAt.Add(tolerance), true},
		{"a nanosecond older", signedAt.Add(tolerance + time.Nanosecond), false},
		{"an hour old", signedAt.Add(time.Hour), false},
		{"as far ahead as the tolerance", signedAt.Add(-tolerance), true},
		{"a nanosecond further ahead", signedAt.Add(-tolerance - time.Nanosecond), false},
		{"an hour ahead", signedAt.Add(-time.Hour), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := signaturetest.Verify(secret, id, strconv.FormatInt(ts, 10), sig, body, c.now, tolerance)
			switch {
			case c.ok && err != nil:
				t.Errorf("refused: %v", err)
			case !c.ok && (err == nil || !strings.Contains(err.Error(), "timestamp")):
				t.Errorf("err = %v, want the timestamp refused", err)
			}
		})
	}
	// Timestamps at the ends of int64, signed as they are, are far out of
	// any tolerance and must not wrap around into it.
	for _, far := range []int64{math.MaxInt64, math.MinInt64, math.MaxInt64 / 1_000_000_000, -math.MaxInt64 / 1_000_000_000} {
		s, err := payment.SignWebhook(secret, id, far, body)
		if err != nil {
			t.Fatal(err)
		}
		if err := signaturetest.Verify(secret, id, strconv.FormatInt(far, 10), s, body, signedAt, tolerance); err == nil {
			t.Errorf("timestamp %d accepted at %d", far, ts)
		}
	}
}
