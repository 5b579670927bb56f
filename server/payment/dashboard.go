package payment

import (
	"time"

	"github.com/google/uuid"
)

// ChargeStatsFilter selects the charges a ChargeStats counts: a
// merchant's (all its stores, or one), of one mode, created in [From, To).
type ChargeStatsFilter struct {
	MerchantID uuid.UUID
	StoreID    uuid.UUID
	Mode       Mode
	From, To   time.Time
}

// ChargeStat is how many charges of one status and currency there are,
// and the sum of their requested amounts.
type ChargeStat struct {
	Status   ChargeStatus
	Currency string
	Count    int
	Amount   int64
}

// Dashboard is a day of a merchant's charges at a glance.
type Dashboard struct {
	Mode     Mode
	From, To time.Time
	// Stats are the day's charges by status and currency, in a fixed
	// order: status as ChargeStatuses lists them, then currency.
	Stats []ChargeStat
	// Counts are the charges by status, every status listed.
	Counts map[ChargeStatus]int
	// Volume is what successful charges took, by currency.
	Volume map[string]int64
	Total  int
}

// ChargeStatuses are the statuses a charge can have, in the order of its
// life.
func ChargeStatuses() []ChargeStatus {
	return []ChargeStatus{ChargePending, ChargeAwaiting, ChargeAuthorized, ChargeSuccessful, ChargeFailed, ChargeError, ChargeCanceled}
}
