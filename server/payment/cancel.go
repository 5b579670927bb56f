package payment

import (
	"time"

	"github.com/google/uuid"
)

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
