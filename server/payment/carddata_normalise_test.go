package payment

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/kessai/kessai/wasm/card"
)

func TestNormaliseNumbers(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"no digits at all", ""},
		{"4000.0200\u00a0００００//0000", "4000 0200 0000 0000"},
		{"tel 03-1234-5678, order 42", "03 1234 5678\n42"},
		{"  4 - - 2  ", "4 2"},
		{"4,2", "4\n2"},
		{"4 ,2", "4\n2"},
		{"4x 2", "4\n2"},
		{"4\u200b\u200d2", "4 2"},
		{"4\u03012", "4 2"},            // a combining accent
		{"٤٢ ४२ 𝟒𝟐 ４２", "42 42 42 42"}, // Arabic-Indic, Devanagari, mathematical bold, full-width
		{"12:30", "12\n30"},
		{"4\xff2", "4\n2"},
	} {
		if got := normaliseNumbers(c.in); got != c.want {
			t.Errorf("normaliseNumbers(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestDecimalDigitTable: decimalDigit counts on every script's digits
// being ten code points in a row from zero, as Go's table of Nd lists
// them: blocks of ten, one code point apart.
func TestDecimalDigitTable(t *testing.T) {
	check := func(lo, hi, stride uint32) {
		if stride != 1 || (hi-lo+1)%10 != 0 {
			t.Errorf("Nd range %#x–%#x stride %d is not whole blocks of ten", lo, hi, stride)
		}
		for r := lo; r <= hi; r++ {
			if v, ok := decimalDigit(rune(r)); !ok || v != byte((r-lo)%10) {
				t.Errorf("decimalDigit(%#x) = %d, %v", r, v, ok)
			}
		}
	}
	for _, g := range unicode.Nd.R16 {
		check(uint32(g.Lo), uint32(g.Hi), uint32(g.Stride))
	}
	for _, g := range unicode.Nd.R32 {
		check(g.Lo, g.Hi, g.Stride)
	}
	for _, r := range []rune{'a', '/', '\u00b2', '\u2460', '\u216b', '\u3007', '\uff21', utf8.RuneError, unicode.MaxRune} {
		if v, ok := decimalDigit(r); ok {
			t.Errorf("decimalDigit(%q) = %d, a digit", r, v)
		}
	}
}

func TestWholeNumberDigits(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"4.00002e15", "4000020000000000"},
		{"4.00002E+15", "4000020000000000"},
		{"-4.00002e15", "4000020000000000"},
		{"400002e10", "4000020000000000"},
		{"40000200000000000000e-4", "4000020000000000"},
		{"4.000020000000000e15", "4000020000000000"},
		{"4.0000200000000001e15", ""}, // not whole
		{"1.5e3", "1500"},
		{"1e19", ""}, // 20 digits
		{"1e18", "1000000000000000000"},
		{"1e-3", ""},
		{"4000020000000000", ""}, // no exponent: read as written
		{"1e999999999999", ""},
		{"0.0e0", ""},
	} {
		if got := wholeNumberDigits(c.in); got != c.want {
			t.Errorf("wholeNumberDigits(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// panBrands are prefixes and lengths of the brands the filter knows,
// from which FuzzCardNumberFilter makes card numbers of 13 to 19 digits.
var panBrands = []struct {
	prefix  string
	lengths []int
}{
	{"4", []int{13, 16, 19}}, {"51", []int{16}}, {"2720", []int{16}}, {"34", []int{15}}, {"37", []int{15}},
	{"3528", []int{16, 17, 18, 19}}, {"36", []int{14, 15, 16, 17, 18, 19}}, {"6011", []int{16, 19}},
	{"62", []int{16, 19}}, {"81", []int{17}}, {"50", []int{13, 18, 19}},
}

// panSeparators are what may stand between the digits of a card number
// written out, one of each kind numberSeparator allows.
var panSeparators = []string{
	" ", "\u00a0", "\u202f", "\u3000", "\u2009", "\t", "\n", "-", "\u2010", "\u2013", "\u2014", "\uff0d", "\u2212",
	"\u30fc", ".", "/", "\uff0e", "\uff0f", "\u3002", "\u30fb", "\u00b7", "_", "\uff3f", "\u200b", "\u200c",
	"\u200d", "\u2060", "\ufeff", "\u00ad", "\u200e", "\u0301", "\ufe0f", "\u20e3",
}

// panZeros are the zeros of some scripts' digits.
var panZeros = []rune{'0', '０', '٠', '۰', '०', '০', '๐', '𝟎', '𝟘'}

// FuzzCardNumberFilter: for any text, normaliseNumbers never panics,
// keeps exactly the text's digits in order (as ASCII) and nothing but
// single spaces and line breaks between them; and a card number of a
// known brand (13 to 19 digits, Luhn-valid), written in any digits with
// any separators between them, put anywhere in any text with a
// separator or a non-digit on each side, is always found, unless the
// text makes its digits part of a UUID.
func FuzzCardNumberFilter(f *testing.F) {
	for _, s := range []struct {
		prefix, suffix string
		pan, seps      []byte
	}{
		{"", "", []byte{0, 1}, nil},
		{"order ", "@example.com", []byte{0, 1, 9, 9, 9}, []byte{1, 1, 1, 1}},
		{"12/30 ", " 123", []byte{3, 0, 2, 8}, []byte{7, 2, 0, 14, 3}},
		{"tel 03-1234-", "-5678", []byte{5, 5, 1, 2, 3, 4, 5, 6}, []byte{200, 13, 9, 250}},
		{"\xe0\xa5", "\x80\x80", []byte{9, 0}, []byte{255, 255, 255}},
		{"٤", "٤", []byte{10, 2, 7}, []byte{40, 41, 42}},
		{"0196c5a0-", "-7c1e-9d3b-5f6a7b8c9d0e", []byte{0, 1}, []byte{1, 13, 0, 0, 0, 0, 1, 6}},
		{"0196c5a0-2a4f-7c1e-9d3b-5f6a7b8c9d0e ", " 0196c5a0-2a4f-7c1e-9d3b-5f6a7b8c9d0e", []byte{4, 4}, nil},
	} {
		f.Add(s.prefix, s.suffix, s.pan, s.seps)
	}
	f.Fuzz(func(t *testing.T, prefix, suffix string, panSeed, sepSeed []byte) {
		for _, s := range []string{prefix, suffix, prefix + suffix} {
			checkNormalised(t, s)
			ContainsCardNumber(s)
		}

		pan := fuzzedPAN(panSeed)
		if !cardNumber(pan) {
			t.Fatalf("the fuzz target made %q, which is not a card number", pan)
		}
		next := func() byte {
			if len(sepSeed) == 0 {
				return 0
			}
			b := sepSeed[0]
			sepSeed = sepSeed[1:]
			return b
		}
		zero := panZeros[int(next())%len(panZeros)]
		var b strings.Builder
		gap := func() {
			for range int(next()) % 4 {
				b.WriteString(panSeparators[int(next())%len(panSeparators)])
			}
		}
		b.WriteString(prefix)
		if last, _ := utf8.DecodeLastRuneInString(prefix); unicode.IsDigit(last) {
			b.WriteString(panSeparators[int(next())%len(panSeparators)])
		}
		start := b.Len()
		for i, d := range pan {
			if i > 0 {
				gap()
			}
			if next()%4 == 0 {
				zero = panZeros[int(next())%len(panZeros)]
			}
			b.WriteRune(zero + d - '0')
		}
		end := b.Len()
		if first, _ := utf8.DecodeRuneInString(suffix); unicode.IsDigit(first) {
			b.WriteString(panSeparators[int(next())%len(panSeparators)])
		}
		b.WriteString(suffix)
		s := b.String()
		for rest, at := s, 0; ; {
			span := nextUUID(rest)
			if span == nil {
				break
			}
			if at+span[0] < end && start < at+span[1] {
				return // the digits are part of a UUID, which is an id
			}
			rest, at = rest[span[1]:], at+span[1]
		}
		if !ContainsCardNumber(s) {
			t.Fatalf("ContainsCardNumber(%q) = false; it holds %s (normalised %q)", s, pan, normaliseNumbers(s))
		}
	})
}

// fuzzedPAN makes a Luhn-valid number of one of panBrands from seed.
func fuzzedPAN(seed []byte) string {
	at := func(i int) int {
		if i < len(seed) {
			return int(seed[i])
		}
		return 0
	}
	br := panBrands[at(0)%len(panBrands)]
	n := br.lengths[at(1)%len(br.lengths)]
	d := []byte(br.prefix)
	for i := 2; len(d) < n-1; i++ {
		d = append(d, byte('0'+at(i)%10))
	}
	for c := byte('0'); c <= '9'; c++ {
		if card.Luhn(string(append(d, c))) {
			return string(append(d, c))
		}
	}
	return string(d)
}

// checkNormalised checks normaliseNumbers(s) against s: the digits of s,
// found here without normaliseNumbers' own loop, in order, separated by
// single spaces or line breaks, nothing at the ends.
func checkNormalised(t *testing.T, s string) {
	t.Helper()
	got := normaliseNumbers(s)
	var want []byte
	for _, r := range s {
		if unicode.IsDigit(r) {
			v, _ := decimalDigit(r)
			want = append(want, '0'+v)
		}
	}
	digits := strings.Map(func(r rune) rune {
		if r == ' ' || r == '\n' {
			return -1
		}
		return r
	}, got)
	if digits != string(want) {
		t.Fatalf("normaliseNumbers(%q) = %q: digits %q, want %q", s, got, digits, want)
	}
	if strings.Trim(got, "0123456789 \n") != "" || strings.HasPrefix(got, " ") || strings.HasPrefix(got, "\n") ||
		strings.HasSuffix(got, " ") || strings.HasSuffix(got, "\n") ||
		strings.Contains(got, "  ") || strings.Contains(got, "\n\n") || strings.Contains(got, " \n") || strings.Contains(got, "\n ") {
		t.Fatalf("normaliseNumbers(%q) = %q", s, got)
	}
	if again := normaliseNumbers(strings.ReplaceAll(got, "\n", ",")); again != got {
		t.Fatalf("normaliseNumbers(%q) = %q, but that normalised again is %q", s, got, again)
	}
}
