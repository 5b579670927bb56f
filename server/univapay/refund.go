package univapay

import (
	"encoding/json"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
)

// Refund is a refund (UnivaPay's wire format).
type Refund struct {
	ID              uuid.UUID        `json:"id"`
	StoreID         uuid.UUID        `json:"store_id"`
	ChargeID        uuid.UUID        `json:"charge_id"`
	LedgerID        *string          `json:"ledger_id"`
	Status          string           `json:"status"`
	Amount          int64            `json:"amount"`
	Currency        string           `json:"currency"`
	AmountFormatted json.Number      `json:"amount_formatted"`
	Reason          *string          `json:"reason"`
	Message         *string          `json:"message"`
	Error           *PaymentError    `json:"error"`
	Metadata        payment.Metadata `json:"metadata"`
	Mode            payment.Mode     `json:"mode"`
	CreatedOn       Time             `json:"created_on"`
	UpdatedOn       Time             `json:"updated_on"`
}

// RefundOf shows a refund.
func RefundOf(rf *payment.Refund) Refund {
	return Refund{
		ID: rf.ID, StoreID: rf.StoreID, ChargeID: rf.ChargeID, Status: string(rf.Status), Amount: rf.Amount,
		Currency: rf.Currency, AmountFormatted: formatted(rf.Amount, rf.Currency), Reason: optionalString(rf.Reason),
		Message: optionalString(rf.Message), Error: paymentErrorOf(rf.Error), Metadata: metadata(rf.Metadata),
		Mode: rf.Mode, CreatedOn: Time(rf.CreatedOn), UpdatedOn: Time(rf.UpdatedOn),
	}
}

// Cancel is a cancel (UnivaPay's wire format).
type Cancel struct {
	ID        uuid.UUID        `json:"id"`
	ChargeID  uuid.UUID        `json:"charge_id"`
	StoreID   uuid.UUID        `json:"store_id"`
	Status    string           `json:"status"`
	Error     *PaymentError    `json:"error"`
	Metadata  payment.Metadata `json:"metadata"`
	Mode      payment.Mode     `json:"mode"`
	CreatedOn Time             `json:"created_on"`
	UpdatedOn Time             `json:"updated_on"`
}

// CancelOf shows a cancel.
func CancelOf(cn *payment.Cancel) Cancel {
	return Cancel{
		ID: cn.ID, ChargeID: cn.ChargeID, StoreID: cn.StoreID, Status: string(cn.Status),
		Error: paymentErrorOf(cn.Error), Metadata: metadata(cn.Metadata), Mode: cn.Mode,
		CreatedOn: Time(cn.CreatedOn), UpdatedOn: Time(cn.UpdatedOn),
	}
}
