package payment

import (
	"context"
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

func chargeLedgerEntry(ch *Charge) *LedgerEntry {
	amount := ch.RequestedAmount
	if ch.ChargedAmount != nil {
		amount = *ch.ChargedAmount
	}
	return &LedgerEntry{
		ResourceID: ch.ID, StoreID: ch.StoreID, MerchantID: ch.MerchantID, ChargeID: ch.ID,
		Type: LedgerCharge, Status: string(ch.Status), Amount: amount, Currency: ch.Currency,
		Mode: ch.Mode, Metadata: ch.Metadata, CreatedOn: ch.CreatedOn, UpdatedOn: ch.UpdatedOn,
	}
}

func refundLedgerEntry(r *Refund) *LedgerEntry {
	return &LedgerEntry{
		ResourceID: r.ID, StoreID: r.StoreID, MerchantID: r.MerchantID, ChargeID: r.ChargeID,
		Type: LedgerRefund, Status: string(r.Status), Amount: r.Amount, Currency: r.Currency,
		Mode: r.Mode, Metadata: r.Metadata, CreatedOn: r.CreatedOn, UpdatedOn: r.UpdatedOn,
	}
}

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

// Transactions lists the transaction history of one store or of all the
// caller's stores.
func (s *Service) Transactions(ctx context.Context, c *Caller, storeID uuid.UUID, f LedgerFilter, p ListParams) (Page[*LedgerEntry], error) {
	if err := c.requireSecret(); err != nil {
		return Page[*LedgerEntry]{}, err
	}
	if f.Type != "" && f.Type != LedgerCharge && f.Type != LedgerRefund {
		return Page[*LedgerEntry]{}, Invalid("type", ReasonInvalidFormat)
	}
	if f.Mode != "" && !f.Mode.Valid() {
		return Page[*LedgerEntry]{}, Invalid("mode", ReasonInvalidFormat)
	}
	var ok bool
	if f.Mode, ok = c.ownMode(f.Mode); !ok {
		return emptyPage[*LedgerEntry](p), nil
	}
	var page Page[*LedgerEntry]
	err := s.view(ctx, func(tx Tx) error {
		scope, err := s.listScope(ctx, tx, c, storeID)
		if err != nil {
			return err
		}
		f.MerchantID, f.StoreID = scope.MerchantID, scope.StoreID
		page, err = tx.ListLedger(ctx, f, p)
		return err
	})
	return page, err
}

// MatchesSearch reports whether a history search for q finds the line e,
// whose charge is ch (LedgerFilter.Search).
func (e *LedgerEntry) MatchesSearch(q string, ch *Charge) bool {
	return q == e.ResourceID.String() || q == e.ChargeID.String() || q == ch.CardLastFour || containsFold(ch.Email, q)
}
