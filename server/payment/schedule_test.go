package payment_test

import (
	"strings"
	"testing"
	"time"

	"github.com/kessai/kessai/server/payment"
)

func date(tb testing.TB, s string) payment.Date {
	tb.Helper()
	d, ok := payment.ParseDate(s)
	if !ok {
		tb.Fatalf("bad date %q", s)
	}
	return d
}

func TestScheduleDueDates(t *testing.T) {
	monthly, _ := payment.PeriodCycle("monthly")
	annually, _ := payment.PeriodCycle("annually")
	weekly, _ := payment.PeriodCycle("weekly")
	tenDays, _ := payment.ParseCycle("P10D")
	monthAndDay, _ := payment.ParseCycle("P1M1D")
	tests := []struct {
		name     string
		anchor   string
		cycle    payment.Cycle
		preserve bool
		want     []string
	}{
		{"month ends borrowed for one month", "2027-01-31", monthly, true,
			[]string{"2027-01-31", "2027-02-28", "2027-03-31", "2027-04-30", "2027-05-31"}},
		{"month ends in a leap year", "2028-01-31", monthly, true,
			[]string{"2028-01-31", "2028-02-29", "2028-03-31"}},
		{"without preserving, the shortened day stays", "2027-01-31", monthly, false,
			[]string{"2027-01-31", "2027-02-28", "2027-03-28", "2027-04-28"}},
		{"a last day stays a last day", "2027-04-30", monthly, true,
			[]string{"2027-04-30", "2027-05-31", "2027-06-30", "2027-07-31"}},
		{"a 30th that is not a last day stays the 30th", "2027-01-30", monthly, true,
			[]string{"2027-01-30", "2027-02-28", "2027-03-30"}},
		{"without preserving, April 30 + 1 month is May 30", "2027-04-30", monthly, false,
			[]string{"2027-04-30", "2027-05-30"}},
		{"yearly from a leap day, preserved", "2028-02-29", annually, true,
			[]string{"2028-02-29", "2029-02-28", "2030-02-28", "2031-02-28", "2032-02-29"}},
		{"yearly from a leap day, not preserved", "2028-02-29", annually, false,
			[]string{"2028-02-29", "2029-02-28", "2030-02-28", "2031-02-28", "2032-02-28"}},
		{"weekly across a year end", "2027-12-25", weekly, false,
			[]string{"2027-12-25", "2028-01-01", "2028-01-08"}},
		{"every ten days", "2027-02-20", tenDays, true,
			[]string{"2027-02-20", "2027-03-02", "2027-03-12"}},
		{"a month and a day", "2027-01-31", monthAndDay, true,
			[]string{"2027-01-31", "2027-03-01", "2027-04-02"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := payment.Schedule{Anchor: date(t, tt.anchor), Cycle: tt.cycle, PreserveEndOfMonth: tt.preserve}
			prev := s.Anchor
			for n, want := range tt.want {
				if got := s.Due(n).String(); got != want {
					t.Errorf("Due(%d) = %s, want %s", n, got, want)
				}
				if n > 0 {
					if got := s.Next(prev, n).String(); got != want {
						t.Errorf("Next(%s, %d) = %s, want %s", prev, n, got, want)
					}
					prev = s.Next(prev, n)
				}
			}
		})
	}
}

func TestScheduleFirstOnOrAfter(t *testing.T) {
	monthly, _ := payment.PeriodCycle("monthly")
	s := payment.Schedule{Anchor: date(t, "2027-01-31"), Cycle: monthly, PreserveEndOfMonth: true}
	for _, tt := range []struct {
		day  string
		n    int
		want string
	}{
		{"2027-01-01", 0, "2027-01-31"},
		{"2027-01-31", 0, "2027-01-31"},
		{"2027-02-01", 1, "2027-02-28"},
		{"2027-03-01", 2, "2027-03-31"},
		{"2027-03-31", 2, "2027-03-31"},
	} {
		n, got := s.FirstOnOrAfter(date(t, tt.day))
		if n != tt.n || got.String() != tt.want {
			t.Errorf("FirstOnOrAfter(%s) = %d, %s; want %d, %s", tt.day, n, got, tt.n, tt.want)
		}
	}
}

func TestParseCycle(t *testing.T) {
	valid := map[string]payment.Cycle{
		"P1M": {Months: 1}, "P1Y6M": {Months: 18}, "P2W": {Days: 14}, "P10D": {Days: 10},
		"PT48H": {Days: 2}, "P1M15D": {Months: 1, Days: 15}, "P10Y": {Months: 120}, "P3651D": {Days: 3651},
		"P9Y11M28D": {Months: 119, Days: 28},
	}
	for in, want := range valid {
		if got, ok := payment.ParseCycle(in); !ok || got != want {
			t.Errorf("ParseCycle(%q) = %+v, %v; want %+v", in, got, ok, want)
		}
	}
	for _, in := range []string{
		"", "P", "PT", "P0D", "P0M0D", "PT1H", "PT25H", "P1D2M", "P1M1M", "P-1D", "1M", "p1m", "P1.5M",
		"P11Y", "P3661D", "P10Y1D", "P120M1D", "P3652D", "P9Y11M29D", "P99999999999999999999D", "P1DT", "P1S", "PT1M", "P1M ", " P1M", "P1W1W",
		"P" + strings.Repeat("1", 60) + "D",
	} {
		if got, ok := payment.ParseCycle(in); ok {
			t.Errorf("ParseCycle(%q) = %+v, accepted", in, got)
		}
	}
}

func TestParseRetryInterval(t *testing.T) {
	valid := map[string]time.Duration{"P5D": 120 * time.Hour, "PT48H": 48 * time.Hour, "PT1H": time.Hour, "P1W": 168 * time.Hour, "P31D": 744 * time.Hour}
	for in, want := range valid {
		if got, ok := payment.ParseRetryInterval(in); !ok || got != want {
			t.Errorf("ParseRetryInterval(%q) = %v, %v; want %v", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "P1M", "P1Y", "P32D", "PT0H", "P0D", "PT30M", "PT1H30M", "P1D1D", "P30502W", "P100000W100000DT100000H"} {
		if got, ok := payment.ParseRetryInterval(in); ok {
			t.Errorf("ParseRetryInterval(%q) = %v, accepted", in, got)
		}
	}
}

func TestDateStartIsMidnightInTheZone(t *testing.T) {
	tokyo, _ := time.LoadLocation("Asia/Tokyo")
	newYork, _ := time.LoadLocation("America/New_York")
	if got := date(t, "2027-03-01").Start(tokyo).UTC().Format(time.RFC3339); got != "2027-02-28T15:00:00Z" {
		t.Errorf("Tokyo midnight = %s", got)
	}
	// The day summer time starts in New York: midnight is still EST.
	if got := date(t, "2027-03-14").Start(newYork).UTC().Format(time.RFC3339); got != "2027-03-14T05:00:00Z" {
		t.Errorf("New York midnight = %s", got)
	}
	if got := payment.DateOf(time.Date(2027, 2, 28, 15, 0, 0, 0, time.UTC), tokyo).String(); got != "2027-03-01" {
		t.Errorf("DateOf = %s", got)
	}
	for _, bad := range []string{"2027-02-29", "2027-13-01", "27-01-01", "2027-1-1", "0000-01-01", "2027-01-01T00:00:00Z", ""} {
		if d, ok := payment.ParseDate(bad); ok {
			t.Errorf("ParseDate(%q) = %s, accepted", bad, d)
		}
	}
}

func FuzzParseCycle(f *testing.F) {
	for _, s := range []string{"P1M", "P1Y6M", "PT48H", "P10D", "P0D", "P-1D", "P1DT"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if c, ok := payment.ParseCycle(s); ok {
			if c.Months < 0 || c.Days < 0 || c.Months == 0 && c.Days == 0 || c.Months > 120 || c.Days > 3651 || c.Months == 120 && c.Days > 0 {
				t.Fatalf("ParseCycle(%q) = %+v out of bounds", s, c)
			}
			// Two years of due dates of any accepted cycle stay in order.
			sch := payment.Schedule{Anchor: payment.Date{Year: 2027, Month: 1, Day: 31}, Cycle: c, PreserveEndOfMonth: true}
			for n := 1; n < 25; n++ {
				if !sch.Due(n - 1).Before(sch.Due(n)) {
					t.Fatalf("cycle %+v: Due(%d) = %s not after %s", c, n, sch.Due(n), sch.Due(n-1))
				}
			}
		}
		if d, ok := payment.ParseRetryInterval(s); ok && (d < time.Hour || d > 31*24*time.Hour) {
			t.Fatalf("ParseRetryInterval(%q) = %v out of bounds", s, d)
		}
	})
}
