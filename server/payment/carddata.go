package payment

import (
	"regexp"

	"github.com/kessai/kessai/wasm/card"
)

// cardShaped finds digit runs shaped like card numbers: 12–19 digits in a
// row, or grouped 4-4-4-… or 4-6-5 with spaces or dashes.
var cardShaped = regexp.MustCompile(`\d{4}[ -]\d{4}[ -]\d{4}[ -]\d{1,7}|\d{4}[ -]\d{6}[ -]\d{4,5}|\d{12,19}`)

// MaskCardNumbers hides every card-shaped run that passes the Luhn check,
// so that a card number typed into a URL or a header never reaches a log.
// It is deliberately broad: a log loses nothing by masking an order number
// that happens to pass the check.
func MaskCardNumbers(s string) string {
	if !mayBeCardShaped(s) || !cardShaped.MatchString(s) {
		return s
	}
	return cardShaped.ReplaceAllStringFunc(s, func(run string) string {
		if card.Luhn(card.Digits(run)) {
			return "[redacted]"
		}
		return run
	})
}

// mayBeCardShaped is false when s cannot hold a card-shaped run: each of
// cardShaped's forms has at least 12 digits among digits, spaces and dashes
// only. It spares the regular expression the paths and ids of every
// request, which have no such run.
func mayBeCardShaped(s string) bool {
	digits := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case '0' <= c && c <= '9':
			if digits++; digits >= 12 {
				return true
			}
		case c == ' ' || c == '-':
		default:
			digits = 0
		}
	}
	return false
}

// ContainsCardNumber reports whether s holds what is plausibly a card
// number: a card-shaped run of a known brand, at a length that brand
// issues, passing the Luhn check. Free-text fields (metadata, billing
// address, descriptor, Idempotency-Key …) refuse such values, so that a
// number pasted into the wrong field is never stored outside the vault.
// Requiring a brand keeps most long numeric order ids acceptable: only one
// in ten Luhn-passes at random, and only those with a brand's prefix and
// length are refused.
func ContainsCardNumber(s string) bool {
	if len(s) < 12 {
		return false
	}
	for _, run := range cardShaped.FindAllString(s, -1) {
		d := card.Digits(run)
		if b := card.DetectBrand(d); b != card.Unknown && b.ValidLength(len(d)) && card.Luhn(d) {
			return true
		}
	}
	return false
}
