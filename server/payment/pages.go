package payment

import (
	"time"

	"github.com/google/uuid"
)

// TokenReceipt is what a gateway page may learn of a transaction token of
// its store: enough to tell the shopper that the card was saved, none of
// what the token holds about them (e-mail, name, card).
type TokenReceipt struct {
	ID        uuid.UUID
	StoreID   uuid.UUID
	Type      TokenType
	CreatedOn time.Time
}
