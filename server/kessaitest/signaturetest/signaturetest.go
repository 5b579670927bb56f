// Package signaturetest checks webhook signatures as a merchant's
// receiver does, for the tests of what the gateway sends: the gateway
// itself only signs (payment.SignWebhook).
package signaturetest

import (
	"crypto/hmac"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/kessai/kessai/server/payment"
)

// Verify checks a delivery's signature headers as a receiver should (the
// demo storefront does, with code of its own: it imports nothing of the
// gateway): one of the signatures in signatureHeader
// (space-separated) matches, and the timestamp is within tolerance of now,
// so that a captured delivery cannot be replayed later.
func Verify(secret, id, timestampHeader, signatureHeader string, body []byte, now time.Time, tolerance time.Duration) error {
	ts, err := strconv.ParseInt(timestampHeader, 10, 64)
	if err != nil {
		return errors.New("webhook: bad timestamp")
	}
	if d := now.Sub(time.Unix(ts, 0)); d > tolerance || d < -tolerance {
		return errors.New("webhook: timestamp out of tolerance")
	}
	want, err := payment.SignWebhook(secret, id, ts, body)
	if err != nil {
		return err
	}
	for _, sig := range strings.Fields(signatureHeader) {
		if hmac.Equal([]byte(sig), []byte(want)) {
			return nil
		}
	}
	return errors.New("webhook: no matching signature")
}
