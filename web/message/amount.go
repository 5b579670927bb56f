package message

import (
	"strconv"
	"strings"
)

// amountSymbols are the prefixes amounts are written with; other
// currencies are written with their code after the number.
var amountSymbols = map[string]string{
	"JPY": "¥", "USD": "$", "EUR": "€", "GBP": "£", "CNY": "CN¥", "KRW": "₩", "TWD": "NT$",
	"HKD": "HK$", "SGD": "S$", "AUD": "A$", "CAD": "CA$", "NZD": "NZ$", "THB": "฿", "INR": "₹",
}

// Amount writes an amount of money for people, the same in both languages.
// amount is in the currency's minor unit and minorUnits is how many
// decimals that unit is (0 for JPY, 2 for USD). The whole part is grouped
// by thousands with commas, and the currency's symbol goes in front
// ("¥1,000", "$12.50") or, for a currency without one here, its code after
// ("1,000.000 KWD").
func Amount(amount int64, currency string, minorUnits int) string {
	neg := amount < 0
	u := uint64(amount)
	if neg {
		u = -u // two's complement: right for the most negative amount too
	}
	s := strconv.FormatUint(u, 10)
	frac := ""
	if minorUnits > 0 {
		if len(s) <= minorUnits {
			s = strings.Repeat("0", minorUnits-len(s)+1) + s
		}
		s, frac = s[:len(s)-minorUnits], s[len(s)-minorUnits:]
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i := 0; i < len(s); i++ {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteByte(s[i])
	}
	if frac != "" {
		b.WriteString("." + frac)
	}
	if sym, ok := amountSymbols[currency]; ok {
		return sym + b.String()
	}
	return b.String() + " " + currency
}
