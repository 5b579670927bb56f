package payment

import (
	"context"
	"slices"
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

// Dashboard counts the charges the caller can see, in its mode, created on
// day's UTC date: all its merchant's stores for a merchant caller, one
// store for a store caller.
func (s *Service) Dashboard(ctx context.Context, c *Caller, day time.Time) (*Dashboard, error) {
	if err := c.requireSecret(); err != nil {
		return nil, err
	}
	from := day.UTC().Truncate(24 * time.Hour)
	f := ChargeStatsFilter{MerchantID: c.MerchantID(), Mode: c.token.Mode, From: from, To: from.Add(24 * time.Hour)}
	if !c.token.IsMerchantToken() {
		f.StoreID = c.token.StoreID
	}
	var stats []ChargeStat
	err := s.view(ctx, func(tx Tx) error {
		var err error
		stats, err = tx.ChargeStats(ctx, f)
		return err
	})
	if err != nil {
		return nil, err
	}
	d := &Dashboard{Mode: f.Mode, From: f.From, To: f.To, Counts: map[ChargeStatus]int{}, Volume: map[string]int64{}}
	order := ChargeStatuses()
	slices.SortFunc(stats, func(a, b ChargeStat) int {
		if ia, ib := slices.Index(order, a.Status), slices.Index(order, b.Status); ia != ib {
			return ia - ib
		}
		switch {
		case a.Currency < b.Currency:
			return -1
		case a.Currency > b.Currency:
			return 1
		}
		return 0
	})
	d.Stats = stats
	for _, st := range order {
		d.Counts[st] = 0
	}
	for _, st := range stats {
		d.Counts[st.Status] += st.Count
		d.Total += st.Count
		if st.Status == ChargeSuccessful {
			d.Volume[st.Currency] += st.Amount
		}
	}
	return d, nil
}
