package payment_test

import (
	"testing"

	"github.com/kessai/kessai/server/payment"
)

// TestParsePhone: a phone number written as one string, as the widget's
// phoneNumber option takes it, split as the wire format splits it, and
// refused where a token's billing phone number would be.
func TestParsePhone(t *testing.T) {
	cases := []struct {
		in    string
		code  int
		local string
		ok    bool
	}{
		// Japanese numbers as shoppers type them: the country is Japan.
		{"090-1234-5678", 81, "090-1234-5678", true},
		{" 0312345678 ", 81, "0312345678", true},
		{"(03) 1234 5678", 81, "(03) 1234 5678", true},
		// International: E.164's country codes are a prefix code.
		{"+81 90-1234-5678", 81, "90-1234-5678", true},
		{"+819012345678", 81, "9012345678", true},
		{"+1 (555) 123-4567", 1, "(555) 123-4567", true},
		{"+15551234567", 1, "5551234567", true},
		{"+74951234567", 7, "4951234567", true},
		{"+442071234567", 44, "2071234567", true},
		{"+8613812345678", 86, "13812345678", true},
		{"+85221234567", 852, "21234567", true},
		{"+420212345678", 420, "212345678", true},
		{"+3512123456789", 351, "2123456789", true},
		{"+20 2 12345678", 20, "2 12345678", true},
		{"+2712345678", 27, "12345678", true},
		{"+2112345678", 211, "2345678", true},
		{"+9712345678", 971, "2345678", true},
		// Refused: what Billing would refuse, and what has no country code.
		{"", 0, "", false},
		{"+", 0, "", false},
		{"+81", 0, "", false},
		{"+81 ", 0, "", false},
		{"+ 81 90 1234 5678", 0, "", false},
		{"+0123456", 0, "", false},
		{"+8", 0, "", false},
		{"+85", 0, "", false},
		{"+81 90+1234", 0, "", false},
		{"090-1234-5678 ext. 9", 0, "", false},
		{"090.1234.5678", 0, "", false},
		{"０９０１２３４５６７８", 0, "", false},
		{"090123456789012345678", 0, "", false},
		{"4000020000000000", 0, "", false},
		{"+81 4000 0200 0000 0000", 0, "", false},
		{"<script>", 0, "", false},
	}
	for _, c := range cases {
		p, ok := payment.ParsePhone(c.in)
		if ok != c.ok || (ok && (p.CountryCode != c.code || p.LocalNumber != c.local)) {
			t.Errorf("ParsePhone(%q) = %+v, %v; want {%d %q}, %v", c.in, p, ok, c.code, c.local, c.ok)
		}
	}
}
