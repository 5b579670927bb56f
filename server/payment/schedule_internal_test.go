package payment

import (
	"testing"
	"time"
)

// TestTenYearsLeft checks tenYearsLeft against every day of a 400-year
// Gregorian cycle, not only the days it tries, for cycles of some months:
// no start day gives fewer days, and one gives exactly as many.
func TestTenYearsLeft(t *testing.T) {
	want := map[int]int{0: 3651, 12: 3286, 108: 365, 119: 28, 120: 0}
	for _, months := range []int{0, 1, 12, 59, 108, 119, 120} {
		fewest := -1
		for d := (Date{2000, time.January, 1}); d.Year < 2400; d = d.AddDays(1) {
			gap := int(d.addMonths(maxCycleMonths).utc().Sub(d.addMonths(months).utc()) / (24 * time.Hour))
			if fewest < 0 || gap < fewest {
				fewest = gap
			}
		}
		if got := tenYearsLeft(months); got != fewest {
			t.Errorf("tenYearsLeft(%d) = %d, but from some day only %d days are left", months, got, fewest)
		}
		if w, ok := want[months]; ok && fewest != w {
			t.Errorf("%d months leave %d days of ten years at fewest, want %d", months, fewest, w)
		}
	}
}

// TestStoredCyclesStillRead: a subscription made when cycles of more
// than ten years were accepted keeps its schedule: its period is read,
// not refused into a cycle of nothing.
func TestStoredCyclesStillRead(t *testing.T) {
	for period, want := range map[string]Cycle{"P10Y1D": {Months: 120, Days: 1}, "P3660D": {Days: 3660}, "P1M": {Months: 1}} {
		sub := &Subscription{CyclicalPeriod: period}
		if got := sub.Cycle(); got != want {
			t.Errorf("the cycle of a stored %s = %+v, want %+v", period, got, want)
		}
	}
}
