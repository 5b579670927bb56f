package card

import (
	"errors"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Now is what the expiry rules read of the present: its calendar date (year,
// month 1–12, day) in the time zone whose calendar decides. time.Time has it,
// so the server passes time.Now(); the widget's WebAssembly passes the
// browser's clock instead and so does without the time package, whose zone
// and GODEBUG code would be about 45 KiB of every shopper's download after
// brotli (wasm/widget's TestWASMImports keeps it out).
type Now[M ~int] interface {
	Date() (year int, month M, day int)
}

// ErrInvalidExpiry is returned for an expiry, month or year that cannot be
// read. It never quotes the input.
var ErrInvalidExpiry = errors.New("card: invalid expiry")

// MaxYearsAhead is how far in the future an expiry year may be. Cards are
// issued for a few years at most; anything further is a typo (2052 for
// 2025), and saying so now is kinder than a decline later.
const MaxYearsAhead = 20

// isExpirySeparator reports whether r may stand between month and year.
// The full-width slash and hyphen come from Japanese input methods.
func isExpirySeparator(r rune) bool {
	switch r {
	case '/', '／', '-', '－', '.':
		return true
	}
	return unicode.IsSpace(r)
}

// expiryFields splits s into its runs of digits (as ASCII). ok is false if
// s holds anything that is neither a digit nor a separator; trailing reports
// whether s ends in a separator, which tells "1/" (month done) from "1".
func expiryFields(s string) (fields []string, trailing, ok bool) {
	var b strings.Builder
	for _, r := range s {
		if d, isDigit := digitValue(r); isDigit {
			b.WriteByte('0' + d)
			continue
		}
		if !isExpirySeparator(r) {
			return nil, false, false
		}
		b.WriteByte(' ')
	}
	if r, _ := utf8.DecodeLastRuneInString(s); r != utf8.RuneError {
		_, isDigit := digitValue(r)
		trailing = !isDigit
	}
	return strings.Fields(b.String()), trailing, true
}

// atoi reads a short run of ASCII digits; callers bound the length.
func atoi(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n
}

func parseMonth(s string) (int, bool) {
	if len(s) < 1 || len(s) > 2 {
		return 0, false
	}
	m := atoi(s)
	return m, 1 <= m && m <= 12
}

func parseYear(s string) (int, bool) {
	switch len(s) {
	case 2:
		return 2000 + atoi(s), true
	case 4:
		// "0025" is not 2025 with padding; NormalizeYear must never see a
		// four-digit year below 100.
		return atoi(s), s[0] != '0'
	}
	return 0, false
}

// ParseExpiry reads an expiry as customers write it: "MM/YY", "MM / YY",
// "MMYY", "MM/YYYY" or "MMYYYY", with "-", "." or spaces instead of the
// slash, a one-digit month when a separator follows it ("1/27"), and
// full-width digits. A two-digit year means 20YY; a four-digit one may not
// start with 0. The month must be 1–12; whether the date is acceptable is
// ValidExpiry's question.
func ParseExpiry(s string) (month, year int, err error) {
	f, _, ok := expiryFields(s)
	if !ok {
		return 0, 0, ErrInvalidExpiry
	}
	var ms, ys string
	switch {
	case len(f) == 1 && (len(f[0]) == 4 || len(f[0]) == 6):
		ms, ys = f[0][:2], f[0][2:]
	case len(f) == 2:
		ms, ys = f[0], f[1]
	default:
		return 0, 0, ErrInvalidExpiry
	}
	month, okm := parseMonth(ms)
	year, oky := parseYear(ys)
	if !okm || !oky {
		return 0, 0, ErrInvalidExpiry
	}
	return month, year, nil
}

// singleField returns the one run of digits in s, for month and year fields
// that arrive separately (as form values or JSON strings).
func singleField(s string) (string, bool) {
	f, _, ok := expiryFields(s)
	if !ok || len(f) != 1 {
		return "", false
	}
	return f[0], true
}

// ParseMonth reads an expiry month given on its own: "7", "07" or " 07 ".
func ParseMonth(s string) (int, error) {
	f, ok := singleField(s)
	if !ok {
		return 0, ErrInvalidExpiry
	}
	m, ok := parseMonth(f)
	if !ok {
		return 0, ErrInvalidExpiry
	}
	return m, nil
}

// ParseYear reads an expiry year given on its own: "27" or "2027", both
// meaning 2027.
func ParseYear(s string) (int, error) {
	f, ok := singleField(s)
	if !ok {
		return 0, ErrInvalidExpiry
	}
	y, ok := parseYear(f)
	if !ok {
		return 0, ErrInvalidExpiry
	}
	return y, nil
}

// NormalizeYear turns a two-digit year (0–99), as printed on cards and sent
// as a number by some clients, into 20YY, and returns other years as they
// are.
func NormalizeYear(year int) int {
	if 0 <= year && year <= 99 {
		return 2000 + year
	}
	return year
}

// ValidExpiry reports whether a card expiring in month/year may be used at
// now. A card is good through the last day of its expiry month, so the
// comparison is by calendar month in now's location; pass now in the time
// zone whose calendar should decide (the server's clock reads UTC). year may
// have two digits. A month outside 1–12 or a year more than MaxYearsAhead
// ahead is never valid.
func ValidExpiry[M ~int, T Now[M]](month, year int, now T) bool {
	if month < 1 || month > 12 || !yearInWindow(year, now) {
		return false
	}
	return !expired(month, NormalizeYear(year), now)
}

// yearInWindow reports whether year, taken alone, can be a card's: not past,
// not too far ahead.
func yearInWindow[M ~int, T Now[M]](year int, now T) bool {
	y, ny := NormalizeYear(year), nowYear(now)
	return ny <= y && y <= ny+MaxYearsAhead
}

func expired[M ~int, T Now[M]](month, year int, now T) bool {
	ny, nm, _ := now.Date()
	return year < ny || year == ny && month < int(nm)
}

func nowYear[M ~int, T Now[M]](now T) int {
	y, _, _ := now.Date()
	return y
}

// ExpiryState judges an expiry field as the widget holds it while the
// customer types: "" when it is acceptable, ReasonRequired when empty,
// StateIncompleteExpiry when more typing can still make it valid ("1",
// "12/", "12/2"), StateExpired for a past month and ReasonInvalidExpiration
// for anything else.
func ExpiryState[M ~int, T Now[M]](expiry string, now T) string {
	if strings.TrimSpace(expiry) == "" {
		return ReasonRequired
	}
	m, y, err := ParseExpiry(expiry)
	switch {
	case err != nil && expiryIncomplete(expiry):
		return StateIncompleteExpiry
	case err != nil:
		return ReasonInvalidExpiration
	case expired(m, y, now):
		return StateExpired
	case !ValidExpiry(m, y, now):
		return ReasonInvalidExpiration
	}
	return ""
}

// expiryIncomplete reports whether s, which does not parse, is the start of
// something that would.
func expiryIncomplete(s string) bool {
	f, trailing, ok := expiryFields(s)
	if !ok {
		return false
	}
	switch len(f) {
	case 1:
		d := f[0]
		if trailing { // the month is finished; the year is to come
			_, ok := parseMonth(d)
			return ok
		}
		if len(d) == 1 {
			return true // "0" and "1" start MM, any digit can start M/YY
		}
		if len(d) > 5 {
			return false
		}
		_, ok := parseMonth(d[:2])
		return ok
	case 2:
		_, ok := parseMonth(f[0])
		return ok && (len(f[1]) == 1 || len(f[1]) == 3)
	}
	return false
}
