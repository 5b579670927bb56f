package univapay

import (
	"encoding/json"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
)

// Transaction is one line of the transaction history: a charge or a
// refund as the ledger has it.
type Transaction struct {
	ID              uuid.UUID        `json:"id"`
	StoreID         uuid.UUID        `json:"store_id"`
	ResourceID      uuid.UUID        `json:"resource_id"`
	ChargeID        uuid.UUID        `json:"charge_id"`
	Type            string           `json:"type"`
	Status          string           `json:"status"`
	Amount          int64            `json:"amount"`
	Currency        string           `json:"currency"`
	AmountFormatted json.Number      `json:"amount_formatted"`
	PaymentType     string           `json:"payment_type"`
	Metadata        payment.Metadata `json:"metadata"`
	Mode            payment.Mode     `json:"mode"`
	CreatedOn       Time             `json:"created_on"`
	UpdatedOn       Time             `json:"updated_on"`
}

// TransactionOf shows a line of the ledger.
func TransactionOf(e *payment.LedgerEntry) Transaction {
	return Transaction{
		ID: e.ResourceID, StoreID: e.StoreID, ResourceID: e.ResourceID, ChargeID: e.ChargeID, Type: e.Type,
		Status: e.Status, Amount: e.Amount, Currency: e.Currency, AmountFormatted: formatted(e.Amount, e.Currency),
		PaymentType: payment.PaymentTypeCard, Metadata: metadata(e.Metadata), Mode: e.Mode,
		CreatedOn: Time(e.CreatedOn), UpdatedOn: Time(e.UpdatedOn),
	}
}
