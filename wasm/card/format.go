package card

import "strings"

// Digit groupings as printed on the cards, so that the customer can compare
// the field with the card at a glance.
var (
	groupsDefault  = []int{4, 4, 4, 4, 3}
	groupsAmex     = []int{4, 6, 5}
	groupsDiners14 = []int{4, 6, 4}
)

// groups returns the grouping for n digits of brand b. A Diners Club number
// is grouped 4-6-4 up to fourteen digits and like the others beyond, since
// the longer Diners numbers are printed 4-4-4-4; the field reflows once when
// the fifteenth digit arrives.
func groups(b Brand, n int) []int {
	switch {
	case b == AmericanExpress:
		return groupsAmex
	case b == DinersClub && n <= 14:
		return groupsDiners14
	}
	return groupsDefault
}

// spaceBefore reports whether the i-th digit (from 0) starts a new group.
// Digits past the last group go on in groups of four, so that Format never
// drops or merges anything, whatever it is given.
func spaceBefore(gs []int, i int) bool {
	if i <= 0 {
		return false
	}
	end := 0
	for _, g := range gs {
		end += g
		if i == end {
			return true
		}
		if i < end {
			return false
		}
	}
	return (i-end)%4 == 0
}

// Format returns the digits of number grouped with single spaces the way the
// brand prints them, for showing in the card number field as the customer
// types: "4242424242" becomes "4242 4242 42". It never adds a trailing
// space, so deleting never stalls on one, and it keeps every digit, so
// Digits(Format(s)) == Digits(s). Use Clamp first to cap the length.
func Format(number string) string {
	d := Digits(number)
	gs := groups(DetectBrand(d), len(d))
	var b strings.Builder
	b.Grow(len(d) + len(d)/3)
	for i := 0; i < len(d); i++ {
		if spaceBefore(gs, i) {
			b.WriteByte(' ')
		}
		b.WriteByte(d[i])
	}
	return b.String()
}

// FormatCaret returns where the caret goes in Format(number) when it sits
// after the first digitIndex digits (see DigitIndex), so that reformatting
// the field does not throw the caret to the end. At a group boundary the
// caret stays right after the digit, before the space: that is where it was
// when the customer typed that digit. digitIndex is clamped to the number.
func FormatCaret(number string, digitIndex int) int {
	d := Digits(number)
	if digitIndex <= 0 {
		return 0
	}
	if digitIndex > len(d) {
		digitIndex = len(d)
	}
	gs := groups(DetectBrand(d), len(d))
	pos := digitIndex
	for i := 1; i < digitIndex; i++ {
		if spaceBefore(gs, i) {
			pos++
		}
	}
	return pos
}

// DigitIndex returns how many digits of input come before caret, the
// position the browser reports in the field (selectionStart). That number
// survives reformatting, unlike the position itself. caret counts UTF-16
// code units, as the DOM does, so a full-width digit or an emoji pasted
// into the field does not shift it.
func DigitIndex(input string, caret int) int {
	units, n := 0, 0
	for _, r := range input {
		w := 1
		if r > 0xFFFF {
			w = 2 // a surrogate pair in JavaScript
		}
		if units+w > caret {
			break
		}
		units += w
		if _, ok := digitValue(r); ok {
			n++
		}
	}
	return n
}
