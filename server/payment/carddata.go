package payment

import (
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

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
// address, descriptor, e-mail, Idempotency-Key …) refuse such values, so
// that a number pasted into the wrong field is never stored outside the
// vault. Requiring a brand keeps most long numeric order ids acceptable:
// only one in ten Luhn-passes at random, and only those with a brand's
// prefix and length are refused.
//
// The number is looked for in s as normaliseNumbers reads it, so that
// writing it with dots, slashes, several spaces, a no-break or zero-width
// space, or in full-width or other digits hides nothing: a card-shaped
// run is any sequence of whole digit groups of one run (runHoldsCardNumber),
// 12 to 19 digits in all.
//
// A UUID (8-4-4-4-12 hexadecimal digits) is an id, never a card number:
// its digits are not read, and it ends a run. Customer ids and Kessai's
// own ids are stored in metadata, and the dashes of a UUID whose groups
// happen to be all decimal would otherwise join them into one.
func ContainsCardNumber(s string) bool {
	if len(s) < minCardDigits || !hasDigits(s, minCardDigits) {
		return false
	}
	for s != "" {
		before, after := s, ""
		if span := nextUUID(s); span != nil {
			before, after = s[:span[0]], s[span[1]:]
		}
		n := normaliseNumbers(before)
		for n != "" {
			var run string
			run, n, _ = strings.Cut(n, "\n")
			if runHoldsCardNumber(run) {
				return true
			}
		}
		s = after
	}
	return false
}

// uuidLen is the length of a UUID's text (8-4-4-4-12).
const uuidLen = 36

// nextUUID finds the first UUID in s that stands apart (no letter, digit
// or dash right before or after it) and returns its start and end, or nil.
func nextUUID(s string) []int {
	for i := 0; i+uuidLen <= len(s); i++ {
		if (i == 0 || !idByte(s[i-1])) && (i+uuidLen == len(s) || !idByte(s[i+uuidLen])) && uuidText(s[i:i+uuidLen]) {
			return []int{i, i + uuidLen}
		}
	}
	return nil
}

func idByte(c byte) bool {
	return c == '-' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// uuidText reports whether s is a UUID written 8-4-4-4-12, in either case.
func uuidText(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return len(s) == uuidLen
}

// The lengths of card numbers (ISO/IEC 7812 allows 12 to 19 digits; each
// brand fewer).
const (
	minCardDigits = 12
	maxCardDigits = 19
)

// runHoldsCardNumber looks at every sequence of whole groups of a run
// ("4000 0200 0000 0000 12 30" holds "4000 0200 0000 0000"), but never
// inside a group: a card number glued to more digits cannot be told from
// a longer number, which is what it then is.
func runHoldsCardNumber(run string) bool {
	var buf [maxCardDigits]byte
	for start := 0; start < len(run); {
		d := buf[:0]
		for i := start; i <= len(run); i++ {
			if i == len(run) || run[i] == ' ' {
				if len(d) >= minCardDigits && luhn(d) && cardNumber(string(d)) {
					return true
				}
				if i == len(run) {
					break
				}
				continue
			}
			if len(d) == maxCardDigits {
				break
			}
			d = append(d, run[i])
		}
		next := strings.IndexByte(run[start:], ' ')
		if next < 0 {
			break
		}
		start += next + 1
	}
	return false
}

// luhn is card.Luhn for ASCII digits in a buffer: it spares the nine in
// ten candidates that fail it a string and a brand lookup.
func luhn(d []byte) bool {
	sum, double := 0, false
	for i := len(d) - 1; i >= 0; i-- {
		n := int(d[i] - '0')
		if double {
			if n *= 2; n > 9 {
				n -= 9
			}
		}
		sum += n
		double = !double
	}
	return sum%10 == 0
}

// cardNumber reports whether the ASCII digits d are a number some brand
// issues: its prefix, one of its lengths, and the Luhn check.
func cardNumber(d string) bool {
	b := card.DetectBrand(d)
	return b != card.Unknown && b.ValidLength(len(d)) && card.Luhn(d)
}

// hasDigits reports whether s holds at least n decimal digits (of any
// script): fewer cannot make a card number, which spares the others (ids,
// names, most addresses) the work of normaliseNumbers.
func hasDigits(s string, n int) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if '0' <= c && c <= '9' {
				if n--; n == 0 {
					return true
				}
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if _, ok := decimalDigit(r); ok {
			if n--; n == 0 {
				return true
			}
		}
		i += size
	}
	return false
}

// normaliseNumbers rewrites s as the card-number filter reads it: every
// decimal digit, of any script (０–９, ٠–٩, ०–९ …), as its ASCII digit; a
// stretch of separators between two digits (numberSeparator: spaces of
// every width, dashes, dots, slashes, invisible characters) as one space;
// a stretch between two digits holding anything else as one line break.
// So "4000.0200\u00a0０００００//0000" reads "4000 0200 00000 0000", and
// "tel 03-1234-5678, order 42" reads "03 1234 5678\n42". The result holds
// the digits of s, in order, and nothing else but those spaces and line
// breaks, never two in a row, never at its ends.
func normaliseNumbers(s string) string {
	var b strings.Builder
	const (
		none = iota
		space
		lineBreak
	)
	gap := none
	for _, r := range s {
		if v, ok := decimalDigit(r); ok {
			switch {
			case b.Len() == 0:
			case gap == space:
				b.WriteByte(' ')
			case gap == lineBreak:
				b.WriteByte('\n')
			}
			b.WriteByte('0' + v)
			gap = none
			continue
		}
		switch {
		case !numberSeparator(r):
			gap = lineBreak
		case gap == none:
			gap = space
		}
	}
	return b.String()
}

// numberSeparator reports whether r may stand between the digits of a
// number someone writes out: white space of any width (the no-break and
// ideographic spaces included), dashes and minus signs (ー, which a
// Japanese keyboard's "-" key gives in full-width mode, too), dots, slashes
// and connector punctuation in their ASCII and full-width forms, middle
// dots, and what does not show: format characters (zero-width space and
// joiners, soft hyphen, direction marks) and combining marks. Commas,
// colons, letters and the rest end a number: lists, times and words keep
// their numbers apart.
func numberSeparator(r rune) bool {
	switch r {
	case '.', '/', '\u2212', '\u30fc', '\uff70', '\uff0e', '\uff0f', '\u3002', '\uff61',
		'\u00b7', '\u30fb', '\uff65', '\u2024', '\u2027', '\u2044', '\u2215':
		return true
	}
	return unicode.IsSpace(r) || unicode.In(r, unicode.Zs, unicode.Pd, unicode.Pc, unicode.Cf, unicode.Mn, unicode.Me)
}

// decimalDigit returns the value of a decimal digit of any script
// (Unicode's Nd). Each script's digits are ten code points in a row from
// zero (a test checks Go's table for it), so the value is the distance
// from the start of the block.
func decimalDigit(r rune) (byte, bool) {
	switch {
	case '0' <= r && r <= '9':
		return byte(r - '0'), true
	case r < utf8.RuneSelf || !unicode.Is(unicode.Nd, r):
		return 0, false
	}
	if r <= 0xffff {
		g := unicode.Nd.R16
		i := sort.Search(len(g), func(i int) bool { return rune(g[i].Hi) >= r })
		return byte((r - rune(g[i].Lo)) % 10), true
	}
	g := unicode.Nd.R32
	i := sort.Search(len(g), func(i int) bool { return rune(g[i].Hi) >= r })
	return byte((r - rune(g[i].Lo)) % 10), true
}
