package payment

import (
	"time"

	"github.com/google/uuid"
)

// LedgerEntry is one line of the transaction history: a charge or a
// refund, kept in step with its object in the same transaction as every
// change to it.
type LedgerEntry struct {
	ResourceID uuid.UUID // the charge's or refund's id; also the line's id
	StoreID    uuid.UUID
	MerchantID uuid.UUID
	ChargeID   uuid.UUID
	Type       string // "charge" or "refund"
	Status     string
	Amount     int64
	Currency   string
	Mode       Mode
	Metadata   Metadata
	CreatedOn  time.Time
	UpdatedOn  time.Time
}

// Ledger line types.
const (
	LedgerCharge = "charge"
	LedgerRefund = "refund"
)

// LedgerFilter narrows the transaction history.
type LedgerFilter struct {
	MerchantID uuid.UUID
	StoreID    uuid.UUID
	From, To   *time.Time
	Status     string
	Type       string
	Mode       Mode
	// Search keeps the lines whose charge or resource id is it, or whose
	// charge's e-mail contains it (ASCII letters in any case) or whose
	// charge's card ends in it (four digits).
	Search string
	// MetadataKey/Value match one metadata entry, as Metadata.Matches.
	MetadataKey   string
	MetadataValue string
}

// MatchesSearch reports whether a history search for q finds the line e,
// whose charge is ch (LedgerFilter.Search).
func (e *LedgerEntry) MatchesSearch(q string, ch *Charge) bool {
	return q == e.ResourceID.String() || q == e.ChargeID.String() || q == ch.CardLastFour || containsFold(ch.Email, q)
}
