package charging

import (
	"context"

	"github.com/kessai/kessai/server/payment"
)

// WorkQueueStats describes the work queue at the service's now, one row per
// kind of work that has queued items, sorted by kind: for the metrics, read
// at every scrape. It reads in one aggregate query (see Tx.WorkQueueStats),
// outside any write transaction, and takes no caller: it is the operator's,
// not a merchant's, and names no object.
func (s *Service) WorkQueueStats(ctx context.Context) ([]payment.WorkQueueStats, error) {
	now := s.clock.Now()
	var stats []payment.WorkQueueStats
	err := s.db.View(ctx, func(tx payment.Tx) error {
		var err error
		stats, err = tx.WorkQueueStats(ctx, now)
		return err
	})
	if err != nil {
		return nil, err
	}
	return stats, nil
}
