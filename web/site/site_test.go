package site

import "testing"

func TestFrameAncestors(t *testing.T) {
	tests := []struct {
		domains []string
		want    string
	}{
		{nil, "'self'"},
		{[]string{"shop.example"}, "http://shop.example:* https://shop.example:* 'self'"},
		{[]string{"shop.example:8443"}, "http://shop.example:8443 https://shop.example:8443 'self'"},
		{[]string{"*.shop.example"}, "http://*.shop.example:* https://*.shop.example:* 'self'"},
		{[]string{"*", "a b", "x;y", "sh*p.example", "ok.example"}, "http://ok.example:* https://ok.example:* 'self'"},
	}
	for _, tt := range tests {
		if got := FrameAncestors(tt.domains); got != tt.want {
			t.Errorf("FrameAncestors(%q) = %q, want %q", tt.domains, got, tt.want)
		}
	}
}

func TestAmounts(t *testing.T) {
	for _, tt := range []struct {
		amount int64
		code   string
		want   string
	}{
		{1000, "JPY", "¥1,000"}, {0, "JPY", "¥0"}, {1234567, "JPY", "¥1,234,567"}, {9999999, "JPY", "¥9,999,999"},
		{1250, "USD", "$12.50"}, {5, "USD", "$0.05"}, {100000, "EUR", "€1,000.00"}, {150000, "THB", "฿1,500.00"},
	} {
		if got := Amount(tt.amount, tt.code); got != tt.want {
			t.Errorf("Amount(%d, %s) = %q, want %q", tt.amount, tt.code, got, tt.want)
		}
	}
}
