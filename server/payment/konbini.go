package payment

import (
	"strconv"
	"strings"
	"time"
)

// PaymentTypeKonbini is the payment type of convenience-store payments:
// the shopper pays at a store's counter or terminal, with the numbers the
// charge gives them, before its deadline.
const PaymentTypeKonbini = "konbini"

// ConvenienceStores are the stores a konbini token may name: every one the
// Node SDK lists. PHP's SDK 6.7.6 knows eight of them; its shops never
// send circle_k or sunkus.
var ConvenienceStores = []string{
	"seven_eleven", "family_mart", "lawson", "mini_stop", "seico_mart", "pay_easy",
	"circle_k", "sunkus", "daily_yamazaki", "yamazaki_daily_store",
}

// Konbini and bank-transfer payment periods: how long a shopper has to pay
// after the charge is made. Konbini's bounds are the PHP SDK's (7 to 30
// days, 30 unless the token says otherwise); a bank transfer's are ours
// (1 to 30 days, 7 unless said), as no reference bounds them.
const (
	MinKonbiniPeriod      = 7 * 24 * time.Hour
	MaxKonbiniPeriod      = 30 * 24 * time.Hour
	DefaultKonbiniPeriod  = 30 * 24 * time.Hour
	MinTransferPeriod     = 24 * time.Hour
	MaxTransferPeriod     = 30 * 24 * time.Hour
	DefaultTransferPeriod = 7 * 24 * time.Hour
)

// ReasonOnlyJapanesePhone refuses a konbini token's phone number outside
// Japan (country code 81): the stores send their payment slips by SMS or
// ask for the number at the counter.
const ReasonOnlyJapanesePhone = "ONLY_JAPANESE_PHONE_NUMBER_ALLOWED"

// ReasonExpirationOutOfBounds refuses a payment period outside its
// method's bounds.
const ReasonExpirationOutOfBounds = "EXPIRATION_DATE_OUT_OF_BOUNDS"

// ParsePaymentPeriod reads a payment period: an ISO 8601 duration of
// weeks, days and hours (P30D, PT720H, P1W). Months and years are refused:
// a deadline is counted in hours, whatever the calendar.
func ParsePaymentPeriod(s string) (time.Duration, bool) {
	d, ok := ParseISODuration(s)
	if !ok || d.years != 0 || d.months != 0 {
		return 0, false
	}
	return d.span(), true
}

// FormatPaymentPeriod writes a payment period as UnivaPay answers it, in
// hours (PT720H), which every SDK reads.
func FormatPaymentPeriod(d time.Duration) string {
	return "PT" + strconv.FormatInt(int64(d/time.Hour), 10) + "H"
}

// TimeShift is the time of day a payment deadline falls at, with its UTC
// offset (UnivaPay's expiration_time_shift, "23:59:59+09:00"): a period of
// 7 days from 10:00 with a shift of 23:59:59+09:00 ends at 23:59:59 in
// Japan on the seventh day.
type TimeShift struct {
	Seconds int // since midnight
	Offset  int // seconds east of UTC
}

// ParseTimeShift reads a time shift: HH:MM, HH:MM:SS or HH:MM:SS.fff
// (fractions are dropped), then Z or ±hh:mm.
func ParseTimeShift(s string) (TimeShift, bool) {
	var ts TimeShift
	if len(s) > 32 {
		return ts, false
	}
	i := strings.IndexAny(s, "Z+-")
	if i < 0 {
		return ts, false
	}
	clock, zone := s[:i], s[i:]
	if f := strings.IndexByte(clock, '.'); f >= 0 {
		if !allDigits(clock[f+1:]) || len(clock[f+1:]) == 0 {
			return ts, false
		}
		clock = clock[:f]
	}
	parts := strings.Split(clock, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return ts, false
	}
	limits := []int{23, 59, 59}
	for n, p := range parts {
		v, ok := twoDigits(p)
		if !ok || v > limits[n] {
			return ts, false
		}
		ts.Seconds = ts.Seconds*60 + v
	}
	if len(parts) == 2 {
		ts.Seconds *= 60
	}
	if zone == "Z" {
		return ts, true
	}
	// An offset is signed: Z followed by more (12:00Z09:00) is not one.
	h, okH := twoDigits(zone[1:min(3, len(zone))])
	if zone[0] == 'Z' || len(zone) != 6 || zone[3] != ':' || !okH || h > 14 {
		return ts, false
	}
	m, okM := twoDigits(zone[4:])
	if !okM || m > 59 {
		return ts, false
	}
	ts.Offset = (h*60 + m) * 60
	if zone[0] == '-' {
		ts.Offset = -ts.Offset
	}
	return ts, true
}

func twoDigits(s string) (int, bool) {
	if len(s) != 2 || !allDigits(s) {
		return 0, false
	}
	return int(s[0]-'0')*10 + int(s[1]-'0'), true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// String writes the shift as the SDKs send it (23:59:59+09:00).
func (ts TimeShift) String() string {
	zone := time.FixedZone("", ts.Offset)
	return time.Date(2000, 1, 1, 0, 0, ts.Seconds, 0, zone).Format("15:04:05-07:00")
}

// Deadline is when a shopper who starts paying at now, with period to
// pay, must have paid: now plus the period, moved to the shift's time of
// day (in the shift's offset) when there is a shift: on the day the period
// ends, or on the next when that time has passed by then, so that a shift
// never takes from the period (a day's payment begun at 23:59:59 with a
// shift of 00:00+09:00 is not a second's).
func Deadline(now time.Time, period time.Duration, shift string) time.Time {
	end := now.Add(period)
	ts, ok := ParseTimeShift(shift)
	if shift == "" || !ok {
		return end
	}
	local := end.In(time.FixedZone("", ts.Offset))
	y, m, d := local.Date()
	at := time.Date(y, m, d, 0, 0, ts.Seconds, 0, local.Location())
	if at.Before(end) {
		at = at.AddDate(0, 0, 1)
	}
	return at.UTC()
}
