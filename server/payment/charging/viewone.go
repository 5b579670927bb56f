package charging

import (
	"context"
	"github.com/kessai/kessai/server/payment"
	"time"
)

// viewOne runs fn, which makes exactly one read, in the cheapest view the
// storage offers, timed for the Meter.
func (s *Service) viewOne(ctx context.Context, fn func(payment.Tx) error) error {
	v, ok := s.storage.(payment.OneReadViewer)
	if !ok {
		return s.view(ctx, fn)
	}
	start := time.Now()
	err := v.ViewOne(ctx, fn)
	s.meter.Transaction(payment.TransactionOneRead, time.Since(start))
	return err
}
