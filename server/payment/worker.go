package payment

import (
	"time"

	"github.com/google/uuid"
)

// WorkKind is what the worker has to do.
type WorkKind string

// The kinds of work: authorise a pending charge, capture a requested
// capture, carry out a pending refund or cancel, check a new token's CVV
// (cvvauth.go), ask for the capture of an authorisation at its capture_at.
// 3-D Secure, wallets, webhook deliveries and subscriptions' payments
// (scheduler.go) add their own kinds.
const (
	WorkAuthorize        WorkKind = "authorize"
	WorkCapture          WorkKind = "capture"
	WorkRefund           WorkKind = "refund"
	WorkCancel           WorkKind = "cancel"
	WorkCVVAuthorize     WorkKind = "cvv_authorize"
	WorkScheduledCapture WorkKind = "scheduled_capture"
)

// Work is one item of the work queue: an operation to carry out after the
// transaction that asked for it has committed. The item is written in that
// same transaction (an outbox), so an acknowledged request never loses its
// work and a rolled-back one never leaves any; a crash loses nothing.
//
// A worker claims items with a lease, so that two workers (two instances
// on one database) never run one item at once, and renews the lease while
// it works on it; the items of a worker that crashed are claimed again
// once their lease has ended. The acquirer is called outside any
// transaction and its answer is applied, and the item completed, in one
// transaction, only if the object still waits for it. Running an item
// twice (a crash between the call and the commit, a lease lost to a stall)
// therefore changes nothing: the acquirer is idempotent per operation id.
type Work struct {
	Kind WorkKind
	// ID is the object the work is for: the charge (authorize, capture,
	// scheduled_capture), the refund, the cancel or the token
	// (cvv_authorize).
	ID uuid.UUID
	// Attempts counts the failed attempts at this item. Every item keeps
	// its own: a charge's capture does not inherit its authorisation's.
	Attempts int
	// Due is when the item may run (next).
	Due time.Time
	// ClaimedBy is the worker holding the item until LeaseUntil; empty
	// when nobody has claimed it since it was queued or last given back.
	ClaimedBy  string
	LeaseUntil time.Time
	// LastError is why the last attempt failed.
	LastError string
}

type WorkKey struct {
	kind WorkKind
	id   uuid.UUID
}

func (w Work) Key() WorkKey { return WorkKey{w.Kind, w.ID} }

// ReadyToAuthorize reports whether a charge waits for its authorisation:
// pending, or awaiting after its shopper passed a 3-D Secure challenge.
func (ch *Charge) ReadyToAuthorize() bool {
	return ch.Status == ChargePending || ch.Status == ChargeAwaiting && ch.ThreeDS.Status == ThreeDSSuccessful
}

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
