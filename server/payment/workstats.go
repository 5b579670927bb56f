package payment

import (
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
