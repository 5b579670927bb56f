package field

import (
	"strings"
	"unicode"

	"github.com/kessai/kessai/wasm/card"
)

// The reasons the API gives a konbini token's phone number it refuses
// (server/payment/charging, checkJapanesePhone), which JapanesePhone
// answers with too, so that a problem the widget finds and one the API
// answers with show the same text.
const (
	ReasonInvalidPhone      = "INVALID_PHONE_NUMBER"
	ReasonOnlyJapanesePhone = "ONLY_JAPANESE_PHONE_NUMBER_ALLOWED"
)

// JapanCallingCode is the country code a konbini token's phone number
// must have: the stores ask for the number at the counter or send the
// slip to it, in Japan.
const JapanCallingCode = 81

// JapanesePhone reads what a konbini shopper typed as their phone number,
// and says whether the API takes it as phone_number {country_code: 81,
// local_number: local}: a Japanese number of 10 or 11 digits with its
// leading 0, or 9 or 10 without it, which is the API's rule. state is ""
// when it does, card.ReasonRequired when nothing was typed,
// ReasonOnlyJapanesePhone for a number written with another country's
// code (+1 …), and ReasonInvalidPhone otherwise.
//
// What people write around the digits is dropped, as the API drops
// hyphens and spaces: any white space or dash, the minus sign and the
// katakana prolonged sound mark that a Japanese keyboard's "-" key gives
// in full-width mode, and parentheses (03(1234)5678); full-width digits
// count as the digits they look like. A leading + starts a country code:
// +81 90-1234-5678 and +81 (0)90 1234 5678 are 090-1234-5678. local is
// the digits alone, "" unless state is "".
func JapanesePhone(v string) (local, state string) {
	var b strings.Builder
	plus, blank := false, true
	for _, r := range v {
		if d, ok := phoneDigit(r); ok {
			b.WriteByte(d)
			blank = false
			continue
		}
		switch {
		case unicode.IsSpace(r):
		case (r == '+' || r == '＋') && !plus && b.Len() == 0:
			plus, blank = true, false
		case phoneSeparator(r):
			blank = false
		default:
			return "", ReasonInvalidPhone
		}
	}
	d := b.String()
	switch {
	case blank:
		return "", card.ReasonRequired
	case plus && d == "":
		return "", ReasonInvalidPhone
	case plus && !strings.HasPrefix(d, "81"):
		return "", ReasonOnlyJapanesePhone
	case plus:
		d = d[2:]
		if !strings.HasPrefix(d, "0") {
			d = "0" + d
		}
	}
	lo, hi := 9, 10
	if strings.HasPrefix(d, "0") {
		lo, hi = 10, 11
	}
	if len(d) < lo || len(d) > hi {
		return "", ReasonInvalidPhone
	}
	return d, ""
}

// phoneDigit is r as an ASCII digit, for 0–9 and the full-width ０–９.
func phoneDigit(r rune) (byte, bool) {
	switch {
	case '0' <= r && r <= '9':
		return byte(r), true
	case '０' <= r && r <= '９':
		return byte('0' + r - '０'), true
	}
	return 0, false
}

// phoneSeparator reports whether r may sit between a phone number's
// digits, besides white space.
func phoneSeparator(r rune) bool {
	switch r {
	case '\u2212', '\u30fc', '\uff70', '(', ')', '（', '）':
		return true
	}
	return unicode.Is(unicode.Pd, r)
}
