package message

import (
	"math"
	"testing"
)

func TestAmount(t *testing.T) {
	for _, tt := range []struct {
		amount int64
		code   string
		minor  int
		want   string
	}{
		{1000, "JPY", 0, "¥1,000"},
		{0, "JPY", 0, "¥0"},
		{50, "JPY", 0, "¥50"},
		{1234567, "JPY", 0, "¥1,234,567"},
		{9999999, "JPY", 0, "¥9,999,999"},
		{1250, "USD", 2, "$12.50"},
		{5, "USD", 2, "$0.05"},
		{0, "USD", 2, "$0.00"},
		{100000, "EUR", 2, "€1,000.00"},
		{150000, "THB", 2, "฿1,500.00"},
		{1000, "KRW", 0, "₩1,000"},
		{1234567, "KWD", 3, "1,234.567 KWD"},
		{-1500, "JPY", 0, "¥-1,500"},
		{math.MinInt64, "XXX", 0, "-9,223,372,036,854,775,808 XXX"},
		{math.MaxInt64, "JPY", 0, "¥9,223,372,036,854,775,807"},
		{7, "USD", -1, "$7"},
	} {
		if got := Amount(tt.amount, tt.code, tt.minor); got != tt.want {
			t.Errorf("Amount(%d, %s, %d) = %q, want %q", tt.amount, tt.code, tt.minor, got, tt.want)
		}
	}
}
