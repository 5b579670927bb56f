package payment

import (
	"github.com/google/uuid"
)

// SubscriptionUpdate is a PATCH of a subscription: nil fields stay.
type SubscriptionUpdate struct {
	// TokenID replaces the token future payments are charged to.
	TokenID *uuid.UUID
	// Amount is what payments made from now on charge (the next one, made
	// already, keeps its amount: NextPayment.Amount changes that).
	Amount *int64
	// Status suspended pauses; unpaid (or current) resumes.
	Status             *SubscriptionStatus
	TerminationMode    *string
	RetryInterval      *string
	PreserveEndOfMonth *bool
	Descriptor         *string
	OnlyDirectCurrency *bool
	Metadata           Metadata
	NextPayment        *PaymentUpdate
	// ZoneID and StartOn cannot change once a subscription exists; an
	// update may repeat them as they are (the PHP SDK sends its whole
	// schedule_settings back).
	ZoneID  *string
	StartOn *Date
}

// PaymentUpdate is a PATCH of a scheduled payment: nil fields stay.
type PaymentUpdate struct {
	DueDate *Date
	// IsPaid true records the payment as paid outside Kessai: the next
	// one is made as if it had been charged.
	IsPaid *bool
	// TerminateWithStatus: suspended, canceled, or "" to withdraw.
	TerminateWithStatus *SubscriptionStatus
	RetryInterval       *string
	// Amount (only through the subscription's next_payment) changes this
	// payment's amount, for an unlimited subscription.
	Amount *int64
}
