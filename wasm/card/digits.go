package card

import (
	"strings"
	"unicode"
)

// Digits returns the decimal digits of s in order and drops everything else:
// the spaces and dashes people type or paste as separators, and any stray
// character. Full-width digits (０–９), which a Japanese input method
// produces unless it is switched off, count as the digits they look like,
// so a customer never has to retype a number for an invisible reason.
func Digits(s string) string {
	if asciiDigits(s) {
		return s // the common case after the first call; no copy
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if d, ok := digitValue(r); ok {
			b.WriteByte('0' + d)
		}
	}
	return b.String()
}

// asciiDigits reports whether s is made of 0–9 only.
func asciiDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// digitValue is the one place that decides what counts as a digit, so that
// Digits, DigitIndex and the validators can never disagree.
func digitValue(r rune) (byte, bool) {
	switch {
	case '0' <= r && r <= '9':
		return byte(r - '0'), true
	case '０' <= r && r <= '９':
		return byte(r - '０'), true
	}
	return 0, false
}

// isNumberSeparator reports whether r may sit between the digits of a card
// number that is submitted for validation. Letters and other symbols are not
// silently dropped there, because a number with a letter in it is more
// likely a paste of the wrong thing than a card. The katakana prolonged
// sound mark (ー) and the minus sign are here because a Japanese keyboard's
// "-" key produces them in full-width mode.
func isNumberSeparator(r rune) bool {
	return unicode.IsSpace(r) || unicode.Is(unicode.Pd, r) || r == '\u2212' || r == '\u30fc'
}

// Luhn reports whether number passes the Luhn (mod 10) check that every
// brand here uses to catch typing mistakes. A number without digits fails.
func Luhn(number string) bool {
	d := Digits(number)
	if d == "" {
		return false
	}
	sum := 0
	double := false
	for i := len(d) - 1; i >= 0; i-- {
		n := int(d[i] - '0')
		if double {
			n *= 2
			if n > 9 {
				n -= 9
			}
		}
		sum += n
		double = !double
	}
	return sum%10 == 0
}

// minMaskable is the shortest number BIN and LastFour answer for. Below it
// the two together could give away most or all of what was typed; no card
// is shorter.
const minMaskable = 12

// BIN returns the first six digits of number, the part that names the issuer
// and that may be stored and shown, or "" if number has fewer than twelve
// digits.
func BIN(number string) string {
	d := Digits(number)
	if len(d) < minMaskable {
		return ""
	}
	return d[:6]
}

// LastFour returns the last four digits of number, the part a customer
// recognises their card by, or "" if number has fewer than twelve digits.
func LastFour(number string) string {
	d := Digits(number)
	if len(d) < minMaskable {
		return ""
	}
	return d[len(d)-4:]
}

// Clamp returns the digits of number cut to the longest length its brand
// allows, so the widget can refuse a keystroke that could only make the
// number invalid.
func Clamp(number string) string {
	d := Digits(number)
	if m := DetectBrand(d).MaxLength(); len(d) > m {
		return d[:m]
	}
	return d
}
