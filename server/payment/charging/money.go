package charging

import "github.com/kessai/kessai/server/payment"

// checkAmount validates an amount in a currency: the currency known, the
// amount positive and at most the currency's largest charge. Every
// operation that takes an amount (charge, capture, refund, subscription)
// bounds it this way before any arithmetic, so sums of amounts stay far
// from int64's limits.
func checkAmount(amount int64, currency string, amountField string) (payment.Currency, error) {
	var v payment.Validation
	cur, ok := payment.LookupCurrency(currency)
	if currency == "" {
		v.Add("currency", payment.ReasonRequired)
	} else if !ok {
		v.Add("currency", "INVALID_CURRENCY")
	}
	switch {
	case amount <= 0:
		v.Add(amountField, "INVALID_AMOUNT")
	case ok && amount > cur.MaxAmount:
		v.Add(amountField, payment.ReasonNumberMax)
	}
	return cur, v.Err()
}
