package card

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Field names as the UnivaPay wire format spells them in validation errors.
const (
	FieldCardNumber = "card_number"
	FieldExpMonth   = "exp_month"
	FieldExpYear    = "exp_year"
	FieldCVV        = "cvv"
	FieldCardholder = "cardholder"
)

// Reasons as the UnivaPay wire format spells them. These, and only these,
// are what Validate reports and what the server may send.
const (
	ReasonRequired          = "REQUIRED_VALUE"
	ReasonInvalidCardNumber = "INVALID_CARD_NUMBER"
	ReasonInvalidExpiration = "INVALID_CARD_EXPIRATION"
	ReasonInvalidCVV        = "INVALID_CVV"
	ReasonInvalidFormat     = "INVALID_FORMAT"
)

// States the widget shows while the customer is still typing. They are not
// wire reasons and never leave the browser: on the wire an incomplete field
// is simply invalid.
const (
	StateIncompleteNumber = "INCOMPLETE_CARD_NUMBER"
	StateIncompleteExpiry = "INCOMPLETE_CARD_EXPIRATION"
	StateIncompleteCVV    = "INCOMPLETE_CVV"
	StateExpired          = "CARD_EXPIRED"
)

// MaxCardholderLength is the most characters (not bytes) a cardholder name
// may have.
const MaxCardholderLength = 64

// Input is a card as submitted to POST /tokens. ExpMonth and ExpYear of 0
// mean absent; ExpYear may have two digits. Validate reads the fields as
// typed (separators in the number, spaces around the name, full-width
// digits); whoever stores or forwards the card should keep Digits(Number),
// Digits(CVV) and strings.TrimSpace(Cardholder).
type Input struct {
	Number     string
	ExpMonth   int
	ExpYear    int
	CVV        string
	Cardholder string
}

// Problem is one field that is wrong and why, in wire spelling. It has the
// same shape as the server's field errors, so converting is a field copy.
type Problem struct {
	Field  string
	Reason string
}

// Validate checks a whole card at now and returns every problem at once, in
// field order, or nil. The reasons are wire reasons only.
//
// A past expiry is reported on exp_year, never exp_month: exp_month is only
// blamed for being absent or outside 1–12, which the month alone decides,
// while anything about the date as a whole (expired, too far ahead) goes on
// the year. That way a client can tell "fix the month" from "this card has
// expired".
func Validate[M ~int, T Now[M]](in Input, now T) []Problem {
	var ps []Problem
	add := func(field, reason string) {
		ps = append(ps, Problem{Field: field, Reason: reason})
	}

	switch NumberState(in.Number) {
	case "":
	case ReasonRequired:
		add(FieldCardNumber, ReasonRequired)
	default:
		add(FieldCardNumber, ReasonInvalidCardNumber)
	}

	monthOK := false
	switch {
	case in.ExpMonth == 0:
		add(FieldExpMonth, ReasonRequired)
	case in.ExpMonth < 1 || in.ExpMonth > 12:
		add(FieldExpMonth, ReasonInvalidExpiration)
	default:
		monthOK = true
	}
	switch {
	case in.ExpYear == 0:
		add(FieldExpYear, ReasonRequired)
	case monthOK && !ValidExpiry(in.ExpMonth, in.ExpYear, now),
		!monthOK && !yearInWindow(in.ExpYear, now):
		add(FieldExpYear, ReasonInvalidExpiration)
	}

	switch CVVState(in.CVV, DetectBrand(in.Number)) {
	case "":
	case ReasonRequired:
		add(FieldCVV, ReasonRequired)
	default:
		add(FieldCVV, ReasonInvalidCVV)
	}

	if r := CardholderState(in.Cardholder); r != "" {
		add(FieldCardholder, r)
	}
	return ps
}

// NumberState judges a card number: "" when it is a valid card number,
// ReasonRequired when there are no digits, StateIncompleteNumber when more
// digits can still make it valid, and ReasonInvalidCardNumber when the
// length is wrong for the brand, the Luhn check fails at a valid length, or
// it holds something other than digits and separators.
//
// A number that has reached a length its brand allows but fails the Luhn
// check is invalid, not incomplete, even if the brand allows longer numbers
// (Visa's 19): a 16-digit Visa with a typo is far more common than a
// 19-digit one being typed. The same rule makes a 16-digit Visa look
// invalid when its first 13 digits are in, so the widget should show this
// state when the field loses focus or reaches MaxLength, not on every
// keystroke.
func NumberState(number string) string {
	stray := false
	for _, r := range number {
		if _, ok := digitValue(r); !ok && !isNumberSeparator(r) {
			stray = true
			break
		}
	}
	d := Digits(number)
	switch {
	case stray:
		return ReasonInvalidCardNumber
	case d == "":
		return ReasonRequired
	}
	b := DetectBrand(d)
	n := len(d)
	switch {
	case n < b.MinLength():
		return StateIncompleteNumber
	case b.ValidLength(n) && Luhn(d):
		return ""
	case b.ValidLength(n):
		return ReasonInvalidCardNumber
	case n < b.MaxLength():
		return StateIncompleteNumber
	}
	return ReasonInvalidCardNumber
}

// CVVState judges a security code for a card of brand b: "" when it is
// right, ReasonRequired when empty, StateIncompleteCVV when too short so
// far, and ReasonInvalidCVV when too long or not all digits. Surrounding
// spaces are ignored; separators inside are not. For Unknown both three and
// four digits are accepted, since the number that would decide is missing
// or wrong and is reported on its own.
func CVVState(cvv string, b Brand) string {
	cvv = strings.TrimSpace(cvv)
	if cvv == "" {
		return ReasonRequired
	}
	n := 0
	for _, r := range cvv {
		if _, ok := digitValue(r); !ok {
			return ReasonInvalidCVV
		}
		n++
	}
	lo, hi := b.CVVLength(), b.CVVLength()
	if !b.known() {
		lo, hi = 3, 4
	}
	switch {
	case n < lo:
		return StateIncompleteCVV
	case n > hi:
		return ReasonInvalidCVV
	}
	return ""
}

// known reports whether b is one of the named brands, not Unknown or a
// value from elsewhere.
func (b Brand) known() bool {
	switch b {
	case Visa, Mastercard, JCB, AmericanExpress, DinersClub, Discover, UnionPay, Maestro:
		return true
	}
	return false
}

// CardholderState judges a cardholder name: "" when acceptable,
// ReasonRequired when blank, ReasonInvalidFormat otherwise. A name is 1–64
// characters of letters in any script (with their combining marks), spaces,
// dots, hyphens and apostrophes, with at least one letter. The ideographic
// space and the katakana middle dot (・) are allowed because a Japanese
// customer typing a name in katakana produces them; digits and other
// symbols are refused because they are not in anyone's name on a card.
// Surrounding white space is ignored.
func CardholderState(name string) string {
	name = strings.TrimSpace(name)
	if name == "" {
		return ReasonRequired
	}
	if utf8.RuneCountInString(name) > MaxCardholderLength {
		return ReasonInvalidFormat
	}
	letter := false
	for _, r := range name {
		switch {
		case unicode.IsLetter(r):
			letter = true
		case unicode.IsMark(r):
		case r == ' ', r == '\u3000', r == '.', r == '-', r == '\'', r == '\u2019', r == '\u30fb':
		default:
			return ReasonInvalidFormat
		}
	}
	if !letter {
		return ReasonInvalidFormat
	}
	return ""
}
