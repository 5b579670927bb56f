package payment

import (
	"time"

	"github.com/google/uuid"
)

// OperationStatus is the status of a refund or a cancel.
type OperationStatus string

// Refund and cancel statuses (UnivaPay's wire format).
const (
	OperationPending    OperationStatus = "pending"
	OperationSuccessful OperationStatus = "successful"
	OperationFailed     OperationStatus = "failed"
	OperationError      OperationStatus = "error"
)

// Refund gives back part or all of a successful charge (UnivaPay's wire format).
type Refund struct {
	ID         uuid.UUID
	StoreID    uuid.UUID
	MerchantID uuid.UUID
	ChargeID   uuid.UUID
	Mode       Mode
	Status     OperationStatus
	Amount     int64
	Currency   string
	Reason     string
	Message    string
	Error      *PaymentError
	Metadata   Metadata
	CreatedOn  time.Time
	UpdatedOn  time.Time
}

// NewRefund asks for a refund.
type NewRefund struct {
	Amount   int64
	Currency string
	Reason   string
	Message  string
	Metadata Metadata
	// Idempotency is the reservation of the request's Idempotency-Key
	// (nil: none), on which the refund is recorded in its transaction.
	Idempotency *IdempotencyRef
}

// RefundUpdate changes a refund's descriptive fields.
type RefundUpdate struct {
	Reason   *string
	Message  *string
	Metadata Metadata
}

// Cancel voids an authorisation (UnivaPay's wire format); its charge ends
// canceled.
type Cancel struct {
	ID         uuid.UUID
	StoreID    uuid.UUID
	MerchantID uuid.UUID
	ChargeID   uuid.UUID
	Mode       Mode
	Status     OperationStatus
	Error      *PaymentError
	Metadata   Metadata
	CreatedOn  time.Time
	UpdatedOn  time.Time
}

// NewCancel asks for a cancel.
type NewCancel struct {
	Metadata Metadata
	// Idempotency is the reservation of the request's Idempotency-Key
	// (nil: none), on which the cancel is recorded in its transaction.
	Idempotency *IdempotencyRef
}
