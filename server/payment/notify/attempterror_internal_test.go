package notify

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/kessai/kessai/server/payment"
)

// TestAttemptError: what a merchant is shown of a failed attempt is one of
// a few coarse words, whatever the connection said.
func TestAttemptError(t *testing.T) {
	for _, c := range []struct {
		status int
		err    error
		want   string
	}{
		{503, errors.New("the receiver answered 503"), "status 503"},
		{302, nil, "status 302"},
		{0, errors.New("webhookhttp: dial tcp 127.0.0.1:22: connect: connection refused"), "failed"},
		{0, errors.New("webhookhttp: dial tcp 10.0.0.9:80: connect: no route to host"), "failed"},
		{0, errors.New("webhookhttp: read tcp 127.0.0.1:5->127.0.0.1:6: read: connection reset by peer"), "failed"},
		{0, errors.New("webhookhttp: TLS: tls: first record does not look like a TLS handshake"), "failed"},
		{0, errors.New("webhookhttp: the receiver's answer is not valid HTTP"), "failed"},
		{0, fmt.Errorf("webhookhttp: %w", payment.ErrWebhookTimeout), "timed out"},
		{0, context.DeadlineExceeded, "timed out"},
		{0, fmt.Errorf("webhookhttp: refused at dial: %w", payment.ErrWebhookAddress), "failed: address not allowed"},
		{0, errWebhookGone, "the webhook was deleted"},
		{0, errWebhookInactive, "the webhook is inactive"},
	} {
		if got := attemptError(c.status, c.err); got != c.want {
			t.Errorf("attemptError(%d, %v) = %q, want %q", c.status, c.err, got, c.want)
		}
	}
}
