package payment

import (
	"context"
	"time"
)

// WorkQueueStats describes the queued items of one kind of work.
type WorkQueueStats struct {
	Kind WorkKind
	// Due counts the items due at now (waiting to run, or running);
	// Scheduled those due later (scheduled captures, expiries, retries
	// backing off).
	Due, Scheduled int
	// OldestDue is the Due time of the earliest item due at now (zero when Due is 0):
	// now minus it is how late the queue runs.
	OldestDue time.Time
	// Retrying counts the items with at least one failed attempt;
	// MaxAttempts is the most failed attempts of any queued item.
	Retrying, MaxAttempts int
}

// WorkQueueStats describes the work queue at the service's now, one row per
// kind of work that has queued items, sorted by kind: for the metrics, read
// at every scrape. It reads in one aggregate query (see Tx.WorkQueueStats),
// outside any write transaction, and takes no caller: it is the operator's,
// not a merchant's, and names no object.
func (s *Service) WorkQueueStats(ctx context.Context) ([]WorkQueueStats, error) {
	now := s.clock.Now()
	var stats []WorkQueueStats
	err := s.view(ctx, func(tx Tx) error {
		var err error
		stats, err = tx.WorkQueueStats(ctx, now)
		return err
	})
	if err != nil {
		return nil, err
	}
	return stats, nil
}
