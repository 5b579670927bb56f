package web

import (
	"strconv"
	"strings"

	"github.com/kessai/kessai/server/payment"
)

// amountSymbols are the prefixes amounts are written with; other
// currencies are written "1,000 KRW".
var amountSymbols = map[string]string{
	"JPY": "¥", "USD": "$", "EUR": "€", "GBP": "£", "CNY": "CN¥", "KRW": "₩", "TWD": "NT$",
	"HKD": "HK$", "SGD": "S$", "AUD": "A$", "CAD": "CA$", "NZD": "NZ$", "THB": "฿", "INR": "₹",
}

// amountText writes an amount in minor units for people: "¥1,000",
// "$12.50".
func amountText(amount int64, c payment.Currency) string {
	neg := amount < 0
	if neg {
		amount = -amount
	}
	s := strconv.FormatInt(amount, 10)
	frac := ""
	if c.MinorUnits > 0 {
		for len(s) <= c.MinorUnits {
			s = "0" + s
		}
		s, frac = s[:len(s)-c.MinorUnits], s[len(s)-c.MinorUnits:]
	}
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	num := b.String()
	if frac != "" {
		num += "." + frac
	}
	if neg {
		num = "-" + num
	}
	if sym, ok := amountSymbols[c.Code]; ok {
		return sym + num
	}
	return num + " " + c.Code
}
