package payment

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	// Zone names (schedule_settings.zone_id) must mean the same on every
	// machine, whatever its system's time-zone database has.
	_ "time/tzdata"
)

// Date is a calendar day without a time or a zone: a due date, which a
// subscription's zone turns into an instant (the wire's YYYY-MM-DD).
type Date struct {
	Year  int
	Month time.Month
	Day   int
}

// ParseDate reads a YYYY-MM-DD date.
func ParseDate(s string) (Date, bool) {
	if len(s) != len("2006-01-02") {
		return Date{}, false
	}
	t, err := time.Parse(time.DateOnly, s)
	if err != nil || t.Year() < 1 {
		return Date{}, false
	}
	return DateOf(t, time.UTC), true
}

// DateOf is the day an instant falls on in loc.
func DateOf(t time.Time, loc *time.Location) Date {
	y, m, d := t.In(loc).Date()
	return Date{y, m, d}
}

func (d Date) String() string { return fmt.Sprintf("%04d-%02d-%02d", d.Year, d.Month, d.Day) }

// IsZero reports whether d is no date at all.
func (d Date) IsZero() bool { return d == Date{} }

// Start is the first instant of the day in loc: when a payment due that
// day is charged.
func (d Date) Start(loc *time.Location) time.Time {
	return time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, loc)
}

// Before reports whether d is an earlier day than o.
func (d Date) Before(o Date) bool { return d.utc().Before(o.utc()) }

func (d Date) utc() time.Time { return time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, time.UTC) }

// AddDays moves d by n days.
func (d Date) AddDays(n int) Date { return DateOf(d.utc().AddDate(0, 0, n), time.UTC) }

// addMonths moves d by n months, keeping its day where the target month
// has it and taking the month's last day where it does not (Jan 31 + 1
// month = Feb 28 or 29).
func (d Date) addMonths(n int) Date {
	first := time.Date(d.Year, d.Month+time.Month(n), 1, 0, 0, 0, 0, time.UTC)
	return Date{first.Year(), first.Month(), min(d.Day, daysIn(first.Year(), first.Month()))}
}

func (d Date) lastOfMonth() bool { return d.Day == daysIn(d.Year, d.Month) }

func daysIn(year int, month time.Month) int {
	return time.Date(year, month+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// Cycle is the length of a subscription's period in calendar terms:
// months (a year is twelve) and days (a week is seven), so that a monthly
// subscription is due on the same day of every month, not every 30 days.
type Cycle struct {
	Months int
	Days   int
}

// The named periods of UnivaPay's API.
var periods = map[string]Cycle{
	"daily":        {Days: 1},
	"weekly":       {Days: 7},
	"biweekly":     {Days: 14},
	"monthly":      {Months: 1},
	"bimonthly":    {Months: 2},
	"quarterly":    {Months: 3},
	"semiannually": {Months: 6},
	"annually":     {Months: 12},
}

// A cycle is at least a day (due dates are days) and at most ten years,
// so that schedules stay within a sensible calendar and arithmetic on
// them far from any limit. Ten years are what the parser makes of P10Y:
// 120 months. A cycle of months and days is at most that when, from
// every day it could start on, its months and then its days end no later
// than 120 months on (tenYearsLeft): P10Y and P120M are the longest
// cycles in months, P3651D the longest in days (ten years from 1 March
// 2097 are 3651 days, 2100 being no leap year), and P10Y1D is too long.
const maxCycleMonths = 120

// maxStoredCycleDays bounded a cycle's days before the ten-year bound was
// exact; subscriptions made then are read with it (readCycle).
const maxStoredCycleDays = 3660

// PeriodCycle returns the cycle of a named period ("monthly").
func PeriodCycle(period string) (Cycle, bool) {
	c, ok := periods[period]
	return c, ok
}

// ParseCycle reads an ISO 8601 duration of whole days or more (P1M, P10D,
// P2W, P1Y6M, PT744H) as a cycle of at most ten years. Hours must make
// whole days.
func ParseCycle(s string) (Cycle, bool) {
	c, ok := readCycle(s)
	if !ok || c.Days > tenYearsLeft(c.Months) {
		return Cycle{}, false
	}
	return c, true
}

// readCycle reads a cycle as ParseCycle does, with the looser bound on
// days that held when stored subscriptions were made: their schedules
// must go on as they were agreed.
func readCycle(s string) (Cycle, bool) {
	d, ok := ParseISODuration(s)
	if !ok || d.hours%24 != 0 {
		return Cycle{}, false
	}
	c := Cycle{Months: d.years*12 + d.months, Days: d.weeks*7 + d.Days + d.hours/24}
	if c.Months == 0 && c.Days == 0 || c.Months > maxCycleMonths || c.Days > maxStoredCycleDays {
		return Cycle{}, false
	}
	return c, true
}

// tenYears[m] caches tenYearsLeft(m).
var tenYears [maxCycleMonths + 1]struct {
	once sync.Once
	days int
}

// tenYearsLeft is how many days a cycle of months months may add and
// still end, from every start day, no later than ten years (120 months)
// on: the fewest days from start+months to start+120 months, over every
// start in a 400-year Gregorian cycle (after which the calendar repeats).
// Only the 1st, and the 29th to the 31st, of each month need trying:
// from any other day both ends move by the same days as from the 1st.
func tenYearsLeft(months int) int {
	e := &tenYears[months]
	e.once.Do(func() {
		e.days = math.MaxInt
		for y := 2000; y < 2400; y++ {
			for m := time.January; m <= time.December; m++ {
				for _, day := range [...]int{1, 29, 30, 31} {
					if day > daysIn(y, m) {
						break
					}
					start := Date{y, m, day}
					gap := int(start.addMonths(maxCycleMonths).utc().Sub(start.addMonths(months).utc()) / (24 * time.Hour))
					e.days = min(e.days, gap)
				}
			}
		}
	})
	return e.days
}

// IsoDuration is an ISO 8601 duration's parts; seconds and minutes are not
// used by anything Kessai schedules.
type IsoDuration struct{ years, months, weeks, Days, hours int }

// maxDurationPart bounds each number of a duration, so that no sum of
// them can overflow an int.
const maxDurationPart = 100_000

// span is d's weeks, days and hours as a time.Duration. One longer than a
// Duration holds (some 290 years: P100000W is more) is the longest there
// is, never multiplied out to wrap round to a short one (P30502W was about
// ten days, within every bound).
func (d IsoDuration) span() time.Duration {
	hours := int64(d.weeks)*7*24 + int64(d.Days)*24 + int64(d.hours)
	if hours > int64(math.MaxInt64/time.Hour) {
		return math.MaxInt64
	}
	return time.Duration(hours) * time.Hour
}

func ParseISODuration(s string) (IsoDuration, bool) {
	var d IsoDuration
	rest, ok := strings.CutPrefix(s, "P")
	if !ok || rest == "" || len(s) > 40 {
		return d, false
	}
	datePart, timePart, hasTime := strings.Cut(rest, "T")
	if hasTime && timePart == "" {
		return d, false
	}
	read := func(part string, units string, fields []*int) bool {
		last := -1
		for part != "" {
			i := strings.IndexFunc(part, func(r rune) bool { return r < '0' || r > '9' })
			if i <= 0 {
				return false
			}
			n, err := strconv.Atoi(part[:i])
			if err != nil || n > maxDurationPart {
				return false
			}
			u := strings.IndexByte(units, part[i])
			if u <= last { // unknown, repeated or out of order
				return false
			}
			*fields[u], last, part = n, u, part[i+1:]
		}
		return true
	}
	if !read(datePart, "YMWD", []*int{&d.years, &d.months, &d.weeks, &d.Days}) ||
		hasTime && !read(timePart, "H", []*int{&d.hours}) {
		return d, false
	}
	return d, true
}

// Retry intervals: at least an hour, at most 31 days (a failed payment
// is retried before the next one is normally due).
const (
	minRetryInterval = time.Hour
	maxRetryInterval = 31 * 24 * time.Hour
)

// ParseRetryInterval reads a retry interval: an ISO 8601 duration of
// weeks, days and hours (P5D, PT48H).
func ParseRetryInterval(s string) (time.Duration, bool) {
	d, ok := ParseISODuration(s)
	if !ok || d.years != 0 || d.months != 0 {
		return 0, false
	}
	total := d.span()
	return total, total >= minRetryInterval && total <= maxRetryInterval
}

// Schedule is when a subscription's recurring payments fall due: from the
// anchor (the first recurring payment's day), one cycle after another.
//
// With PreserveEndOfMonth every due date is reckoned from the anchor, so a
// day the month lacks is only borrowed for that month (Jan 31 → Feb 28 →
// Mar 31), and an anchor on a month's last day stays on last days (Apr 30 →
// May 31). Without it each due date is the previous one plus a cycle, as a
// calendar would add a month (Jan 31 → Feb 28 → Mar 28).
type Schedule struct {
	Anchor             Date
	Cycle              Cycle
	PreserveEndOfMonth bool
}

// Due is the day of the n-th recurring payment (0: the anchor).
func (s Schedule) Due(n int) Date {
	if s.PreserveEndOfMonth {
		d := s.Anchor.addMonths(n * s.Cycle.Months)
		if s.Anchor.lastOfMonth() && s.Cycle.Months > 0 {
			d.Day = daysIn(d.Year, d.Month)
		}
		return d.AddDays(n * s.Cycle.Days)
	}
	d := s.Anchor
	for range n {
		d = d.addMonths(s.Cycle.Months).AddDays(s.Cycle.Days)
	}
	return d
}

// Next is the day of the n-th recurring payment, given prev, the day of
// the one before it: no walk from the anchor.
func (s Schedule) Next(prev Date, n int) Date {
	if s.PreserveEndOfMonth {
		return s.Due(n)
	}
	return prev.addMonths(s.Cycle.Months).AddDays(s.Cycle.Days)
}

// FirstOnOrAfter returns the first recurring payment due on or after day,
// and its number.
func (s Schedule) FirstOnOrAfter(day Date) (int, Date) {
	n, d := 0, s.Anchor
	for d.Before(day) {
		n++
		d = s.Next(d, n)
	}
	return n, d
}
