package card

import (
	"testing"
	"time"
)

// testNow is mid-month in a fixed year, so the tables below read as dates.
var testNow = time.Date(2025, time.June, 15, 12, 0, 0, 0, time.UTC)

func TestParseExpiry(t *testing.T) {
	tests := []struct {
		in          string
		month, year int
		ok          bool
	}{
		{"12/25", 12, 2025, true},
		{"12 / 25", 12, 2025, true},
		{"1225", 12, 2025, true},
		{"12/2025", 12, 2025, true},
		{"122025", 12, 2025, true},
		{"01/30", 1, 2030, true},
		{"1/30", 1, 2030, true},
		{" 07/27 ", 7, 2027, true},
		{"07-27", 7, 2027, true},
		{"07.27", 7, 2027, true},
		{"07 27", 7, 2027, true},
		{"０７／２７", 7, 2027, true},
		{"07/00", 7, 2000, true},
		{"", 0, 0, false},
		{"/", 0, 0, false},
		{"13/25", 0, 0, false},
		{"00/25", 0, 0, false},
		{"0/25", 0, 0, false},
		{"1325", 0, 0, false},
		{"12/5", 0, 0, false},
		{"12/025", 0, 0, false},
		{"12/20255", 0, 0, false},
		{"01/0025", 0, 0, false}, // not 2025
		{"010000", 0, 0, false},
		{"125", 0, 0, false}, // 1/25 or 12/5: refuse to guess
		{"12345", 0, 0, false},
		{"1234567", 0, 0, false},
		{"12/25/26", 0, 0, false},
		{"012/25", 0, 0, false},
		{"12/25a", 0, 0, false},
		{"December 2025", 0, 0, false},
	}
	for _, tt := range tests {
		m, y, err := ParseExpiry(tt.in)
		if (err == nil) != tt.ok || m != tt.month || y != tt.year {
			t.Errorf("ParseExpiry(%q) = %d, %d, %v; want %d, %d, ok=%v", tt.in, m, y, err, tt.month, tt.year, tt.ok)
		}
		if err != nil && err != ErrInvalidExpiry {
			t.Errorf("ParseExpiry(%q) error %v, want ErrInvalidExpiry", tt.in, err)
		}
	}
}

func TestParseMonthYear(t *testing.T) {
	months := []struct {
		in   string
		want int
		ok   bool
	}{
		{"1", 1, true},
		{"01", 1, true},
		{" 12 ", 12, true},
		{"１２", 12, true},
		{"0", 0, false},
		{"00", 0, false},
		{"13", 0, false},
		{"001", 0, false},
		{"", 0, false},
		{"1/2", 0, false},
		{"-1", 1, true}, // a separator, not a sign; harmless
		{"x", 0, false},
	}
	for _, tt := range months {
		got, err := ParseMonth(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseMonth(%q) = %d, %v; want %d, ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
	years := []struct {
		in   string
		want int
		ok   bool
	}{
		{"25", 2025, true},
		{"2025", 2025, true},
		{"00", 2000, true},
		{"99", 2099, true},
		{" 30 ", 2030, true},
		{"5", 0, false},
		{"025", 0, false},
		{"20255", 0, false},
		{"", 0, false},
		{"2o25", 0, false},
		{"0025", 0, false},
		{"1999", 1999, true},
	}
	for _, tt := range years {
		got, err := ParseYear(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseYear(%q) = %d, %v; want %d, ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestNormalizeYear(t *testing.T) {
	for _, tt := range []struct{ in, want int }{
		{0, 2000}, {25, 2025}, {99, 2099}, {100, 100}, {2025, 2025}, {-1, -1},
	} {
		if got := NormalizeYear(tt.in); got != tt.want {
			t.Errorf("NormalizeYear(%d) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

func TestValidExpiry(t *testing.T) {
	jst := time.FixedZone("JST", 9*60*60)
	lastDay := time.Date(2025, time.June, 30, 23, 59, 59, 999999999, time.UTC)
	firstOfNext := time.Date(2025, time.July, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name        string
		month, year int
		now         time.Time
		want        bool
	}{
		{"this month", 6, 2025, testNow, true},
		{"this month, two-digit year", 6, 25, testNow, true},
		{"last day of the expiry month", 6, 2025, lastDay, true},
		{"first day after", 6, 2025, firstOfNext, false},
		{"first day of the expiry month", 6, 2025, time.Date(2025, time.June, 1, 0, 0, 0, 0, time.UTC), true},
		{"last month", 5, 2025, testNow, false},
		{"last year", 12, 2024, testNow, false},
		{"next month", 7, 2025, testNow, true},
		{"December, year end", 12, 2025, time.Date(2025, time.December, 31, 23, 59, 59, 0, time.UTC), true},
		{"December, new year", 12, 2025, time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC), false},
		{"now's zone decides", 6, 2025, time.Date(2025, time.July, 1, 8, 0, 0, 0, jst), false},
		{"same instant in UTC", 6, 2025, time.Date(2025, time.July, 1, 8, 0, 0, 0, jst).UTC(), true},
		{"month 0", 0, 2026, testNow, false},
		{"month 13", 13, 2026, testNow, false},
		{"negative month", -1, 2026, testNow, false},
		{"20 years ahead", 12, 2045, testNow, true},
		{"21 years ahead", 1, 2046, testNow, false},
		{"two-digit 45", 1, 45, testNow, true},
		{"two-digit 46", 1, 46, testNow, false},
		{"two-digit 24", 12, 24, testNow, false},
		{"three-digit year", 1, 125, testNow, false},
		{"negative year", 1, -2026, testNow, false},
	}
	for _, tt := range tests {
		if got := ValidExpiry(tt.month, tt.year, tt.now); got != tt.want {
			t.Errorf("%s: ValidExpiry(%d, %d, %v) = %v, want %v", tt.name, tt.month, tt.year, tt.now, got, tt.want)
		}
	}
}

func TestExpiryState(t *testing.T) {
	tests := []struct{ in, want string }{
		{"12/25", ""},
		{"06/25", ""},
		{"0625", ""},
		{"", ReasonRequired},
		{"   ", ReasonRequired},
		{"05/25", StateExpired},
		{"12/24", StateExpired},
		{"12/2099", ReasonInvalidExpiration},
		{"13/25", ReasonInvalidExpiration},
		{"00", ReasonInvalidExpiration},
		{"13", ReasonInvalidExpiration},
		{"ab", ReasonInvalidExpiration},
		{"12/25/1", ReasonInvalidExpiration},
		{"122/", ReasonInvalidExpiration},
		{"12/20255", ReasonInvalidExpiration},
		{"0", StateIncompleteExpiry},
		{"1", StateIncompleteExpiry},
		{"9", StateIncompleteExpiry},
		{"12", StateIncompleteExpiry},
		{"12/", StateIncompleteExpiry},
		{"12 / ", StateIncompleteExpiry},
		{"1/", StateIncompleteExpiry},
		{"12/2", StateIncompleteExpiry},
		{"12/202", StateIncompleteExpiry},
		{"122", StateIncompleteExpiry},
		{"12202", StateIncompleteExpiry},
		{"１２／", StateIncompleteExpiry},
	}
	for _, tt := range tests {
		if got := ExpiryState(tt.in, testNow); got != tt.want {
			t.Errorf("ExpiryState(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
