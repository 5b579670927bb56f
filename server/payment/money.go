package payment

import (
	"strconv"
	"strings"
)

// Currency is an ISO 4217 currency Kessai accepts, with its minor unit and
// the bounds of one charge in minor units.
type Currency struct {
	Code       string
	MinorUnits int
	MinAmount  int64
	MaxAmount  int64
}

// currencies are the accepted currencies. The bounds follow what card
// acquirers accept for one online payment: about 0.50 of a major unit (50
// yen) up to about ten million yen.
var currencies = map[string]Currency{
	"JPY": {"JPY", 0, 50, 9_999_999},
	"KRW": {"KRW", 0, 500, 99_999_999},
	"USD": {"USD", 2, 50, 99_999_99},
	"EUR": {"EUR", 2, 50, 99_999_99},
	"GBP": {"GBP", 2, 30, 99_999_99},
	"AUD": {"AUD", 2, 50, 99_999_99},
	"CAD": {"CAD", 2, 50, 99_999_99},
	"CHF": {"CHF", 2, 50, 99_999_99},
	"CNY": {"CNY", 2, 300, 699_999_99},
	"HKD": {"HKD", 2, 400, 699_999_99},
	"SGD": {"SGD", 2, 50, 99_999_99},
	"TWD": {"TWD", 2, 1500, 2_999_999_99},
	"THB": {"THB", 2, 1500, 2_999_999_99},
	"PHP": {"PHP", 2, 2500, 4_999_999_99},
	"NZD": {"NZD", 2, 50, 99_999_99},
}

// LookupCurrency returns the currency for a code in any case ("jpy" from
// the widget, "JPY" from SDKs).
func LookupCurrency(code string) (Currency, bool) {
	c, ok := currencies[strings.ToUpper(strings.TrimSpace(code))]
	return c, ok
}

// FormatAmount writes an amount in minor units as a major-unit decimal
// without trailing zeros (USD 1250 → "12.5", JPY 1000 → "1000"), the form of
// the wire's *_formatted fields.
func FormatAmount(amount int64, c Currency) string {
	s := strconv.FormatInt(amount, 10)
	if c.MinorUnits == 0 {
		return s
	}
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for len(s) <= c.MinorUnits {
		s = "0" + s
	}
	whole, frac := s[:len(s)-c.MinorUnits], strings.TrimRight(s[len(s)-c.MinorUnits:], "0")
	if frac != "" {
		whole += "." + frac
	}
	if neg {
		whole = "-" + whole
	}
	return whole
}

// CheckAmount validates an amount in a currency: the currency known, the
// amount positive and at most the currency's largest charge. Every
// operation that takes an amount (charge, capture, refund, subscription)
// bounds it this way before any arithmetic, so sums of amounts stay far
// from int64's limits.
func CheckAmount(amount int64, currency string, amountField string) (Currency, error) {
	var v Validation
	cur, ok := LookupCurrency(currency)
	if currency == "" {
		v.Add("currency", ReasonRequired)
	} else if !ok {
		v.Add("currency", "INVALID_CURRENCY")
	}
	switch {
	case amount <= 0:
		v.Add(amountField, "INVALID_AMOUNT")
	case ok && amount > cur.MaxAmount:
		v.Add(amountField, ReasonNumberMax)
	}
	return cur, v.Err()
}
