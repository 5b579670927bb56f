package card

import (
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

var (
	wireFields  = map[string]bool{FieldCardNumber: true, FieldExpMonth: true, FieldExpYear: true, FieldCVV: true, FieldCardholder: true}
	wireReasons = map[string]bool{ReasonRequired: true, ReasonInvalidCardNumber: true, ReasonInvalidExpiration: true, ReasonInvalidCVV: true, ReasonInvalidFormat: true}
	allBrands   = map[Brand]bool{Visa: true, Mastercard: true, JCB: true, AmericanExpress: true, DinersClub: true, Discover: true, UnionPay: true, Maestro: true, Unknown: true}
)

// FuzzNumber walks the path a typed number takes (Digits, DetectBrand,
// Format, caret mapping, Validate) and checks that nothing panics, that
// formatting only ever adds single spaces between digits, and that the caret
// survives a reformat.
func FuzzNumber(f *testing.F) {
	for _, c := range sandboxCards {
		f.Add(c.number, 5)
		f.Add(Format(c.number), 7)
	}
	for _, s := range []string{"", " ", "-", "4", "35", "3528", "622126", "４２４２ー", "😀4242", "\xff\xfe", "0000000000000000000000000000", "4242 4242 4242 4242 4242 4242"} {
		f.Add(s, -1)
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, s string, caret int) {
		d := Digits(s)
		if !asciiDigits(d) || Digits(d) != d {
			t.Fatalf("Digits(%q) = %q", s, d)
		}
		b := DetectBrand(s)
		if !allBrands[b] {
			t.Fatalf("DetectBrand = %q", b)
		}
		if b != Unknown && DetectBrand(d+"0") != b {
			t.Fatalf("brand %q changed when a digit was added", b)
		}

		formatted := Format(s)
		checkFormatted(t, formatted)
		if Digits(formatted) != d {
			t.Fatalf("Format(%q) = %q loses or adds digits", s, formatted)
		}
		if Format(formatted) != formatted {
			t.Fatalf("Format is not stable on %q", formatted)
		}

		idx := DigitIndex(s, caret)
		if idx < 0 || idx > len(d) {
			t.Fatalf("DigitIndex(%q, %d) = %d out of 0..%d", s, caret, idx, len(d))
		}
		checkCaret(t, d, formatted, idx)
		if len(d) <= 40 {
			for i := 0; i <= len(d); i++ {
				checkCaret(t, d, formatted, i)
			}
		}

		if c := Clamp(s); !strings.HasPrefix(d, c) || len(c) > b.MaxLength() {
			t.Fatalf("Clamp(%q) = %q", s, c)
		}
		if bin := BIN(s); bin != "" && (len(bin) != 6 || !strings.HasPrefix(d, bin)) {
			t.Fatalf("BIN = %q", bin)
		}
		if l4 := LastFour(s); l4 != "" && (len(l4) != 4 || !strings.HasSuffix(d, l4)) {
			t.Fatalf("LastFour = %q", l4)
		}

		switch st := NumberState(s); st {
		case "":
			if !Luhn(d) || !b.ValidLength(len(d)) {
				t.Fatalf("NumberState(%q) valid but Luhn or length fail", s)
			}
		case ReasonRequired, StateIncompleteNumber, ReasonInvalidCardNumber:
		default:
			t.Fatalf("NumberState = %q", st)
		}

		now := time.Date(2025, time.June, 15, 0, 0, 0, 0, time.UTC)
		in := Input{Number: s, ExpMonth: caret, ExpYear: caret, CVV: s, Cardholder: s}
		for _, p := range Validate(in, now) {
			if !wireFields[p.Field] || !wireReasons[p.Reason] {
				t.Fatalf("Validate returned %+v", p)
			}
		}
	})
}

func checkFormatted(t *testing.T, formatted string) {
	t.Helper()
	for i := 0; i < len(formatted); i++ {
		c := formatted[i]
		switch {
		case '0' <= c && c <= '9':
		case c == ' ':
			if i == 0 || i == len(formatted)-1 || formatted[i-1] == ' ' {
				t.Fatalf("stray space at %d in %q", i, formatted)
			}
		default:
			t.Fatalf("byte %q at %d in %q", c, i, formatted)
		}
	}
}

// checkCaret: the caret placed for idx digits must sit after exactly idx
// digits of the formatted field, right after a digit (or at the start).
func checkCaret(t *testing.T, d, formatted string, idx int) {
	t.Helper()
	pos := FormatCaret(d, idx)
	if pos < 0 || pos > len(formatted) {
		t.Fatalf("FormatCaret(%d) = %d outside %q", idx, pos, formatted)
	}
	if got := DigitIndex(formatted, pos); got != idx {
		t.Fatalf("caret for %d digits at %d in %q, which is after %d digits", idx, pos, formatted, got)
	}
	if pos > 0 && formatted[pos-1] == ' ' {
		t.Fatalf("caret for %d digits after a space in %q", idx, formatted)
	}
}

// FuzzExpiry checks that reading an expiry never panics, that whatever
// parses is a real month and year, and that the widget's state agrees with
// the parser and with ValidExpiry.
func FuzzExpiry(f *testing.F) {
	for _, s := range []string{"12/25", "12 / 25", "1225", "12/2025", "122025", "1/30", "０７／２７", "13/25", "00/00", "12/", "1", "", "/", "12//25", "99999999", "-1", "12/25/26", "\xff"} {
		f.Add(s)
	}
	now := time.Date(2025, time.June, 15, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		m, y, err := ParseExpiry(s)
		if err != nil && (m != 0 || y != 0) {
			t.Fatalf("ParseExpiry(%q) = %d, %d with error", s, m, y)
		}
		if err == nil {
			if m < 1 || m > 12 || y < 1000 || y > 9999 {
				t.Fatalf("ParseExpiry(%q) = %d, %d", s, m, y)
			}
			again, ayear, aerr := ParseExpiry(strconv.Itoa(m) + "/" + strconv.Itoa(y))
			if aerr != nil || again != m || ayear != y {
				t.Fatalf("ParseExpiry(%q) = %d/%d does not read back", s, m, y)
			}
		}
		st := ExpiryState(s, now)
		switch st {
		case "":
			if err != nil || !ValidExpiry(m, y, now) {
				t.Fatalf("ExpiryState(%q) valid but ParseExpiry %v, ValidExpiry false", s, err)
			}
		case ReasonRequired, StateIncompleteExpiry:
			if err == nil {
				t.Fatalf("ExpiryState(%q) = %q but it parses", s, st)
			}
		case StateExpired:
			if err != nil || ValidExpiry(m, y, now) {
				t.Fatalf("ExpiryState(%q) expired but valid", s)
			}
		case ReasonInvalidExpiration:
			if err == nil && ValidExpiry(m, y, now) {
				t.Fatalf("ExpiryState(%q) invalid but valid", s)
			}
		default:
			t.Fatalf("ExpiryState(%q) = %q", s, st)
		}
		if mm, err := ParseMonth(s); err == nil && (mm < 1 || mm > 12) {
			t.Fatalf("ParseMonth(%q) = %d", s, mm)
		}
		if yy, err := ParseYear(s); err == nil && (yy < 1000 || yy > 9999) {
			t.Fatalf("ParseYear(%q) = %d", s, yy)
		}
	})
}

// FuzzCardholder checks that an accepted name is within the limits
// whatever bytes arrive.
func FuzzCardholder(f *testing.F) {
	for _, s := range []string{"TARO YAMADA", "山田\u3000太郎", "ヤマダ・タロウ", "O’Neil", "", " ", "R2D2", "\xff", strings.Repeat("A", 65)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		switch st := CardholderState(s); st {
		case "":
			n := utf8.RuneCountInString(strings.TrimSpace(s))
			if n < 1 || n > MaxCardholderLength || !utf8.ValidString(s) {
				t.Fatalf("CardholderState(%q) accepted", s)
			}
		case ReasonRequired, ReasonInvalidFormat:
		default:
			t.Fatalf("CardholderState(%q) = %q", s, st)
		}
	})
}
