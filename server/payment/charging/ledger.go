package charging

import (
	"github.com/kessai/kessai/server/payment"
)

func chargeLedgerEntry(ch *payment.Charge) *payment.LedgerEntry {
	amount := ch.RequestedAmount
	if ch.ChargedAmount != nil {
		amount = *ch.ChargedAmount
	}
	return &payment.LedgerEntry{
		ResourceID: ch.ID, StoreID: ch.StoreID, MerchantID: ch.MerchantID, ChargeID: ch.ID,
		Type: payment.LedgerCharge, Status: string(ch.Status), Amount: amount, Currency: ch.Currency,
		Mode: ch.Mode, Metadata: ch.Metadata, CreatedOn: ch.CreatedOn, UpdatedOn: ch.UpdatedOn,
	}
}

func refundLedgerEntry(r *payment.Refund) *payment.LedgerEntry {
	return &payment.LedgerEntry{
		ResourceID: r.ID, StoreID: r.StoreID, MerchantID: r.MerchantID, ChargeID: r.ChargeID,
		Type: payment.LedgerRefund, Status: string(r.Status), Amount: r.Amount, Currency: r.Currency,
		Mode: r.Mode, Metadata: r.Metadata, CreatedOn: r.CreatedOn, UpdatedOn: r.UpdatedOn,
	}
}
