package payment

import (
	"time"
)

// Meter is told what the service did, for the operators' metrics (the
// gateway's /metrics, server/prometheus). Everything it is told is already
// committed: a transaction that ran its function twice, or failed, tells
// nothing of what it did. Its methods run on the paths they count, so they
// must be quick and never block; NewService's default counts nothing.
//
// What it is told is bounded for use as metric labels: kinds, statuses and
// payment error names from fixed sets, never an id, an amount or anything
// a client wrote.
type Meter interface {
	// Settled is a charge, refund or cancel (kind: SettledCharge…)
	// reaching a status other than pending. A charge authorised and later
	// captured is told of twice. errorName names its payment error
	// (PaymentErrorName), "" when none.
	Settled(kind, status, errorName string)
	// WorkAttempted is one attempt at an item of the work queue; failed
	// when it is to be tried again.
	WorkAttempted(kind WorkKind, failed bool)
	// WebhookAttempted is one attempt at sending a webhook delivery, with
	// its result (Delivery…); lag is how long after its event the
	// delivery was accepted (told only for DeliverySuccessful).
	WebhookAttempted(result DeliveryStatus, lag time.Duration)
	// Transaction is one storage transaction (kind: TransactionUpdate…)
	// and how long it took, its function's work included.
	Transaction(kind string, took time.Duration)
}

// The kinds of what Meter.Settled tells of.
const (
	SettledCharge = "charge"
	SettledRefund = "refund"
	SettledCancel = "cancel"
)

// The kinds of transaction Meter.Transaction tells of: read-write, read
// only, the single reads run without a transaction (OneReadViewer), and
// the idempotency keys' statements (each its own transaction).
const (
	TransactionUpdate      = "update"
	TransactionView        = "view"
	TransactionOneRead     = "one_read"
	TransactionIdempotency = "idempotency"
)

// DeliveryRetrying is the result of a delivery attempt that failed and will
// be tried again (the delivery itself stays DeliveryPending).
const DeliveryRetrying DeliveryStatus = "retrying"

// UnknownWorkKind stands, in what Meter is told, for a kind of work this
// version does not know (queued by a newer one), so that the values stay
// the known kinds.
const UnknownWorkKind WorkKind = "unknown"

// PaymentErrorName is the name of a payment error's code for metrics:
// UnivaPay's name for a code the SDKs know, "OTHER" for any other, ""
// for no error.
func PaymentErrorName(e *PaymentError) string {
	if e == nil {
		return ""
	}
	if name, ok := paymentErrorNames[e.Code]; ok {
		return name
	}
	return "OTHER"
}

// NoMeter counts nothing.
type NoMeter struct{}

func (NoMeter) Settled(string, string, string) {}

func (NoMeter) WorkAttempted(WorkKind, bool) {}

func (NoMeter) WebhookAttempted(DeliveryStatus, time.Duration) {}

func (NoMeter) Transaction(string, time.Duration) {}
