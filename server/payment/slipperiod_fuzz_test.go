package payment

import (
	"math"
	"math/big"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// paymentPeriodGrammar is what ParsePaymentPeriod reads, written apart
// from it: ISO 8601's designators in order, years and months only as
// zeros (a deadline is counted in hours), at least one number.
var paymentPeriodGrammar = regexp.MustCompile(`^P(?:([0-9]+)Y)?(?:([0-9]+)M)?(?:([0-9]+)W)?(?:([0-9]+)D)?(?:T([0-9]+)H)?$`)

// referenceHours is s's length in hours by paymentPeriodGrammar, in
// integers that cannot overflow, and whether s is a payment period at
// all: every number at most maxDurationPart, no months or years, the
// whole at most 40 bytes (ParseISODuration's bounds).
func referenceHours(s string) (*big.Int, bool) {
	m := paymentPeriodGrammar.FindStringSubmatch(s)
	if m == nil || s == "P" || len(s) > 40 {
		return nil, false
	}
	total := new(big.Int)
	for i, perHour := range []int64{0, 0, 7 * 24, 24, 1} {
		part := m[i+1]
		if part == "" {
			continue
		}
		n, ok := new(big.Int).SetString(part, 10)
		if !ok || n.Cmp(big.NewInt(maxDurationPart)) > 0 || perHour == 0 && n.Sign() != 0 {
			return nil, false
		}
		total.Add(total, n.Mul(n, big.NewInt(perHour)))
	}
	return total, true
}

// FuzzParsePaymentPeriod fuzzes a konbini or bank-transfer token's
// expiration_period and an expiry extension's. Properties: no panic; it
// accepts exactly the periods of the grammar, as that many whole hours
// when a time.Duration holds them, and as the longest Duration when it
// does not (never wrapped round to a value in bounds, so the bounds
// refuse it); what FormatPaymentPeriod writes of a period reads back as
// it.
func FuzzParsePaymentPeriod(f *testing.F) {
	for _, s := range []string{
		"P7D", "P30D", "PT720H", "PT168H", "P1W", "P2W3DT4H", "P0D", "PT0H", "P0Y0M7D", "P1M", "P1Y", "P1D1D", "PT",
		"P", "", "P7", "7D", "P-1D", "P+1D", "P1.5D", "PT30M", "PT1H30M", "P007D", "p7d", "P7DT", "PT1H2H",
		"P100000W", "P100001D", "P100000WT100000H", "P30500WT264H", "P15250W", "PT2562047H", "PT2562048H",
		"P99999999999999999999D", "P7D ", " P7D", "P٣D", "P7Ｄ",
	} {
		f.Add(s)
	}
	maxHours := big.NewInt(int64(math.MaxInt64 / time.Hour))
	f.Fuzz(func(t *testing.T, s string) {
		d, ok := ParsePaymentPeriod(s)
		want, isPeriod := referenceHours(s)
		if ok != isPeriod {
			t.Fatalf("ParsePaymentPeriod(%q) = %v, %v; the grammar says period %v of %v hours", s, d, ok, isPeriod, want)
		}
		if !ok {
			if d != 0 {
				t.Fatalf("ParsePaymentPeriod(%q) refused with %v", s, d)
			}
			return
		}
		if want.Cmp(maxHours) > 0 {
			if d != math.MaxInt64 {
				t.Fatalf("ParsePaymentPeriod(%q) = %v, want the longest Duration for %v hours", s, d, want)
			}
			return
		}
		if d < 0 || d%time.Hour != 0 || int64(d/time.Hour) != want.Int64() {
			t.Fatalf("ParsePaymentPeriod(%q) = %v, want %v hours", s, d, want)
		}
		out := FormatPaymentPeriod(d)
		if out != "PT"+strconv.FormatInt(want.Int64(), 10)+"H" {
			t.Fatalf("FormatPaymentPeriod(%v) = %q", d, out)
		}
		if want.Int64() <= maxDurationPart {
			if again, ok := ParsePaymentPeriod(out); !ok || again != d {
				t.Fatalf("%q is %v, written %q, read back as %v, %v", s, d, out, again, ok)
			}
		}
	})
}

// timeShiftGrammar is what ParseTimeShift reads, written apart from it:
// hours and minutes, optional seconds, an optional fraction (of the
// seconds, or of the minutes when they are last), then Z or an offset.
var timeShiftGrammar = regexp.MustCompile(`^([0-9]{2}):([0-9]{2})(?::([0-9]{2}))?(?:\.[0-9]+)?(?:(Z)|([+-])([0-9]{2}):([0-9]{2}))$`)

// FuzzParseTimeShift fuzzes a token's expiration_time_shift. Properties:
// no panic; it accepts exactly the grammar's times within a day and
// offsets within ±14:59, at most 32 bytes long, and reads them as the
// grammar does; what String writes reads back the same; and a deadline
// moved to the shift falls at its time of day, on the day the period
// ends (in the shift's offset).
func FuzzParseTimeShift(f *testing.F) {
	for _, s := range []string{
		"23:59:59+09:00", "09:00:00.000+09:00", "00:00Z", "12:30Z", "12:30.5Z", "23:59:59.999999-14:59", "24:00:00Z",
		"12:60Z", "12:00:60Z", "12:00+15:00", "12:00+14:60", "12:00+0900", "12:00+9:00", "12:00", "12:00:00", "Z", "+09:00",
		"", "1:00Z", "12:00:00.Z", "12:00:00.1.2Z", "12:00:00+09:00:00", "１２:００Z", "12:00z", "12:00 +09:00",
		"12:00:00.000000000000000000000000+09:00", "12-00Z", "-12:00Z", "12:00Z+09:00", "12:00-", "12:00+", "12:00+0", "12:00Z09:00",
	} {
		f.Add(s)
	}
	now := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		ts, ok := ParseTimeShift(s)
		var want TimeShift
		m := timeShiftGrammar.FindStringSubmatch(s)
		valid := m != nil && len(s) <= 32
		if valid {
			n := func(i int) int { v, _ := strconv.Atoi(m[i]); return v }
			want.Seconds = n(1)*3600 + n(2)*60 + n(3)
			if m[4] != "Z" {
				want.Offset = (n(6)*60 + n(7)) * 60
				if m[5] == "-" {
					want.Offset = -want.Offset
				}
			}
			valid = n(1) <= 23 && n(2) <= 59 && n(3) <= 59 && (m[4] == "Z" || n(6) <= 14 && n(7) <= 59)
		}
		if ok != valid || ok && ts != want {
			t.Fatalf("ParseTimeShift(%q) = %+v, %v; the grammar says %+v, %v", s, ts, ok, want, valid)
		}
		if !ok {
			return
		}
		out := ts.String()
		if !regexp.MustCompile(`^[0-9]{2}:[0-9]{2}:[0-9]{2}[+-][0-9]{2}:[0-9]{2}$`).MatchString(out) {
			t.Fatalf("%q is written %q", s, out)
		}
		if again, ok := ParseTimeShift(out); !ok || again != ts {
			t.Fatalf("%q is %+v, written %q, read back as %+v, %v", s, ts, out, again, ok)
		}
		for _, period := range []time.Duration{24 * time.Hour, 7 * 24 * time.Hour, 30 * 24 * time.Hour} {
			end := now.Add(period)
			got := Deadline(now, period, s)
			zone := time.FixedZone("", ts.Offset)
			local := got.In(zone)
			endDay := end.In(zone)
			nextDay := endDay.AddDate(0, 0, 1)
			onEndDay := local.YearDay() == endDay.YearDay() && local.Year() == endDay.Year()
			onNextDay := local.YearDay() == nextDay.YearDay() && local.Year() == nextDay.Year()
			if h, m, sec := local.Clock(); h*3600+m*60+sec != ts.Seconds || local.Nanosecond() != 0 ||
				!onEndDay && !onNextDay || got.Before(end) || onNextDay && !got.Add(-24*time.Hour).Before(end) {
				t.Fatalf("Deadline(%s, %v, %q) = %s, want the shift on %s's day, or the next day's when that is before it", now, period, s, got, end)
			}
		}
	})
}
