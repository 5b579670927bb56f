package merchants

import (
	"context"
	"slices"
	"time"

	"github.com/kessai/kessai/server/payment"
)

// Dashboard counts the charges the caller can see, in its mode, created on
// day's UTC date: all its merchant's stores for a merchant caller, one
// store for a store caller.
func (s *Service) Dashboard(ctx context.Context, c *payment.Caller, day time.Time) (*payment.Dashboard, error) {
	if err := c.RequireSecret(); err != nil {
		return nil, err
	}
	from := day.UTC().Truncate(24 * time.Hour)
	f := payment.ChargeStatsFilter{MerchantID: c.MerchantID(), Mode: c.Mode(), From: from, To: from.Add(24 * time.Hour)}
	if !c.IsMerchantToken() {
		f.StoreID = c.StoreID()
	}
	var stats []payment.ChargeStat
	err := s.db.View(ctx, func(tx payment.Tx) error {
		var err error
		stats, err = tx.ChargeStats(ctx, f)
		return err
	})
	if err != nil {
		return nil, err
	}
	d := &payment.Dashboard{Mode: f.Mode, From: f.From, To: f.To, Counts: map[payment.ChargeStatus]int{}, Volume: map[string]int64{}}
	order := payment.ChargeStatuses()
	slices.SortFunc(stats, func(a, b payment.ChargeStat) int {
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
		if st.Status == payment.ChargeSuccessful {
			d.Volume[st.Currency] += st.Amount
		}
	}
	return d, nil
}
