// Package field holds the pure parts of the widget's field behaviour that
// the card package does not: how the expiry field is rewritten as the
// customer types and where the caret goes afterwards, and which phone
// numbers a konbini payment takes. It is host-tested and imports only the
// card package, strings and unicode, like everything the widget's
// WebAssembly pulls in.
package field

import (
	"strings"

	"github.com/kessai/kessai/wasm/card"
)

// ExpirySeparator is what the expiry field shows between month and year.
const ExpirySeparator = " / "

// FormatExpiry rewrites what is in the expiry field as "MM / YY" while the
// customer types. deleting tells that the last edit removed text, in which
// case no separator is added, so that backspace is never undone.
//
//	"4"        → "04 / "   (no month starts with 4)
//	"1"        → "1"
//	"1/"       → "01 / "
//	"12"       → "12 / "
//	"13"       → "01 / 3"  (no month 13: the 3 starts the year)
//	"1227"     → "12 / 27"
//	"12/2027"  → "12 / 27" (autofill with a four-digit year)
func FormatExpiry(v string, deleting bool) string {
	d := card.Digits(v)
	if len(d) > 4 {
		if m, y, err := card.ParseExpiry(v); err == nil {
			return two(m) + ExpirySeparator + two(y%100)
		}
		d = d[:4]
	}
	switch len(d) {
	case 0:
		return ""
	case 1:
		switch {
		case deleting:
		case d[0] > '1':
			return "0" + d + ExpirySeparator
		case !deleting && d != "0" && separatorAfterDigits(v):
			return "0" + d + ExpirySeparator
		}
		return d
	}
	if d[0] == '1' && d[1] > '2' { // "13": the month was 1
		d = "0" + d
		if len(d) > 4 {
			d = d[:4]
		}
	}
	if len(d) == 2 {
		if deleting {
			return d
		}
		return d + ExpirySeparator
	}
	return d[:2] + ExpirySeparator + d[2:]
}

// separatorAfterDigits reports whether something other than a digit follows
// the first digit, as in "1/" or "1 ".
func separatorAfterDigits(v string) bool {
	seen := false
	for _, r := range v {
		if card.Digits(string(r)) != "" {
			seen = true
			continue
		}
		if seen && strings.ContainsRune("/-. 　／", r) {
			return true
		}
	}
	return false
}

func two(n int) string {
	return string([]byte{byte('0' + n/10%10), byte('0' + n%10)})
}

// CaretAfterDigits returns the position (in UTF-16 units, which for the
// ASCII this package produces are bytes) just after the k-th digit of s, or
// len(s) when s has fewer digits; k ≤ 0 gives 0.
func CaretAfterDigits(s string, k int) int {
	if k <= 0 {
		return 0
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			n++
			if n == k {
				return i + 1
			}
		}
	}
	return len(s)
}

// CVVMax is how many digits the security-code field takes for brand b:
// the brand's length, or four while the brand is not known.
func CVVMax(b card.Brand) int {
	switch b {
	case card.Unknown, "":
		return 4
	}
	return b.CVVLength()
}

// Known reports whether b is a named brand, not Unknown.
func Known(b card.Brand) bool {
	switch b {
	case card.Visa, card.Mastercard, card.JCB, card.AmericanExpress, card.DinersClub,
		card.Discover, card.UnionPay, card.Maestro:
		return true
	}
	return false
}

// AutoAdvance reports whether a number of n digits that card.NumberState
// accepts is finished, so that focus may move on to the expiry: at the
// brand's longest length, or at sixteen for brands that allow more (a
// nineteen-digit Visa is rare; its owner can click back).
func AutoAdvance(b card.Brand, n int) bool {
	return n == b.MaxLength() || n == 16
}

// MessageKey is the key, among the texts the frame gives its scripts
// (message.FrameScript, embedded in the page in its language), of what a
// field's state means: "<field>.<kind>", where field is number, exp, cvc,
// name or phone and state is what card.NumberState, ExpiryState, CVVState,
// CardholderState or JapanesePhone said of it, or the reason the API gave
// for it. "" means no problem; "field.generic" is for a state that has no
// text of its own. widget.js's plain-JavaScript fallback names the same
// keys.
func MessageKey(field, state string) string {
	switch state {
	case "":
		return ""
	case card.ReasonRequired:
		return field + ".required"
	case card.StateIncompleteNumber, card.StateIncompleteExpiry, card.StateIncompleteCVV:
		return field + ".incomplete"
	case card.StateExpired:
		return field + ".expired"
	case card.ReasonInvalidCardNumber, card.ReasonInvalidExpiration, card.ReasonInvalidCVV, card.ReasonInvalidFormat,
		ReasonInvalidPhone:
		return field + ".invalid"
	case ReasonOnlyJapanesePhone:
		return field + ".foreign"
	}
	return GenericMessageKey
}

// GenericMessageKey is the text for a field's problem that has none of its
// own: better a vague line than an empty one.
const GenericMessageKey = "field.generic"
