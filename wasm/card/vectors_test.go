package card

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"
)

// The widget runs these rules twice: as Go compiled to WebAssembly, and in
// plain JavaScript (static/cardrules.js) until the WebAssembly is ready or
// when it cannot run. testdata/vectors.json is what the Go rules answer for
// a few thousand inputs, written by this test; the browser suite's
// cardrules.test.mjs holds the JavaScript to every answer. The expected
// values are computed here, never typed, so the file is the Go behaviour;
// the hand-written tests of this package say whether that behaviour is
// right.
//
// After changing a rule or an input list, regenerate it:
//
//	go test ./wasm/card -run TestVectors -update
//
// Without -update the test fails when the file is not what the rules
// answer now, so the JavaScript can never be checked against stale answers.

var update = flag.Bool("update", false, "rewrite testdata/vectors.json from the Go rules")

const vectorsFile = "testdata/vectors.json"

// vectorNows are the dates the expiry vectors are judged at: mid-year, the
// last day of a year and the first day of the next. Only the calendar date
// counts (see ValidExpiry).
var vectorNows = []time.Time{
	time.Date(2025, time.June, 15, 12, 0, 0, 0, time.UTC),
	time.Date(2025, time.December, 31, 12, 0, 0, 0, time.UTC),
	time.Date(2026, time.January, 1, 12, 0, 0, 0, time.UTC),
}

var vectorBrands = []Brand{Visa, Mastercard, JCB, AmericanExpress, DinersClub, Discover, UnionPay, Maestro, Unknown}

// hostile are long inputs of the kind a paste, an autofill gone wrong or a
// script can put in a field: the rules must answer them, and quickly.
var hostile = []string{
	strings.Repeat("4", 1000),
	strings.Repeat("4242 ", 250),
	strings.Repeat("-", 1000),
	strings.Repeat("４", 500),
	strings.Repeat("😀", 300) + "4242",
	strings.Repeat(" ", 1000) + "A",
	strings.Repeat("A", 1000),
	strings.Repeat("1/", 500),
	strings.Repeat("𠀋", 500),
	strings.Repeat("\u0301", 1000),
}

// separators are characters that may or may not sit between digits: the
// white space Go and JavaScript disagree on (U+0085 is space to Go, U+FEFF
// to JavaScript's trim and \s), dashes of several kinds, the Japanese
// keyboard's "-" in full-width mode, and things that are neither.
var separators = []string{
	" ", "\t", "\n", "\r", "\v", "\f", "\u00a0", "\u0085", "\u1680", "\u2007", "\u2028", "\u202f", "\u3000", "\ufeff",
	"\u200b", "\u180e", "-", "\u2010", "\u2013", "\u2014", "\u2212", "\u30fc", "\uff0d", "\ufe63", "\u2e3a",
	".", "/", "／", "+", "_", "x", "ｘ", "\u0301", "😀",
}

func luhnComplete(prefix string, n int) string {
	body := prefix + strings.Repeat("0", n-1-len(prefix))
	for c := byte('0'); c <= '9'; c++ {
		if s := body + string(c); Luhn(s) {
			return s
		}
	}
	panic("no check digit")
}

func numberInputs() []string {
	in := []string{"", " ", "-", " - ", "\u00a0", "0", "00", "000000000000"}
	for _, c := range sandboxCards {
		in = append(in, c.number, Format(c.number))
	}
	in = append(in,
		// DetectBrand's prefixes and edges
		"4", "4 2", "5", "50", "51", "55", "56", "58", "59", "2", "22", "222", "2220", "2221", "223", "23", "26", "27",
		"272", "2720", "2721", "3", "30", "300", "305", "306", "309", "3095", "3096", "34", "35", "352", "3527", "3528",
		"353", "358", "3589", "359", "36", "37", "38", "39", "6", "60", "601", "6011", "6012", "62", "620", "621", "622",
		"6221", "622125", "622126", "6222", "6229", "62291", "62292", "622925", "622926", "623", "63", "6304", "6390",
		"64", "643", "644", "649", "65", "67", "6759", "6761", "6763", "6767", "67677", "676770", "676771", "676774",
		"7", "8", "81", "9", "1", "9999999999999999", "4242-4242",
		// states and lengths named in the Go tests
		"4242 4242 4242", "4242424242424", "4222222222222", "4242424242424241", "42424242424242424",
		"4242424242424242424", "42424242424242424242", "37828224631000", "555555555555444", "123456789012",
		"12345678901", "1234567890123456789012345", "3782822463100055", "5555555555554444000", "42424242424242426",
		"4242.4242.4242.4242", "+4242424242424242", "4242 4242 4242 4242x", "abcd", "abc", "4a2b", "79927398713",
		"79927398710", "37828224631000512", "55555555555544441", "3056930902590412345", "305693090259041",
		"3782822463100051234", "3782 822463 10005", "４２４２－４２４２ー４２４２ ４２４２", "６２２１２６００００００００００",
		"٤٢٤٢٤٢٤٢٤٢٤٢٤٢٤٢", "४२४२४२४२४२४२४२४२", "𝟒𝟐𝟒𝟐𝟒𝟐𝟒𝟐𝟒𝟐𝟒𝟐𝟒𝟐𝟒𝟐", "4242²", "④242424242424242",
		"😀4242", "😀 4242 4242", "4242 4242 4242 4242😀", "é4242424242424242",
	)
	// Every length of a card of each brand, and the same with its last
	// digit wrong: incomplete, valid, invalid and too long, per brand.
	for _, p := range []string{"4", "51", "2221", "3528", "34", "300", "36", "6011", "622126", "62", "81", "50", "6759", "676770", "1", "9"} {
		for n := len(p) + 1; n <= 21; n++ {
			good := luhnComplete(p, n)
			bad := good[:n-1] + string('0'+(good[n-1]-'0'+1)%10)
			in = append(in, good, bad)
		}
	}
	for _, sep := range separators {
		in = append(in,
			strings.Join([]string{"4242", "4242", "4242", "4242"}, sep),
			sep+"4242424242424242", "4242424242424242"+sep, sep,
		)
	}
	in = append(in, "４２４２４２４２４２４２４２４２", "4242 4242 4242 424２", "4242ー4242ー4242ー4242", "３７８２ ８２２４６３ １０００５")
	return append(in, hostile...)
}

func cvvInputs() []string {
	in := []string{
		"", " ", "1", "12", "123", "1234", "12345", " 123 ", "\u3000123\u3000", "\u00a0123", "\ufeff123", "123\ufeff",
		"\u0085123", "\t1234\n", "1 23", "12a", "1-2", "１", "１２", "１２３", "１２３４", "１２３４５", "٤٢٣", "𝟏𝟐𝟑",
		"+123", "-123", "12３", "0000", "000", "😀123", "12\u0301",
	}
	return append(in, strings.Repeat("1", 1000), strings.Repeat(" ", 1000)+"123", strings.Repeat("１", 500))
}

func cardholderInputs() []string {
	in := []string{
		"TARO YAMADA", "Taro Yamada", "  Taro Yamada  ", "J. R. R. Tolkien", "Mary-Jane O'Neil", "Mary-Jane O’Neil",
		"José Müller", "Jose\u0301 Mu\u0308ller", "Jose\u0301 O'Neil", "山田 太郎", "山田\u3000太郎", "ヤマダ・タロウ", "ｙａｍａｄａ",
		"ＴＡＲＯ　ＹＡＭＡＤＡ", "Ольга Иванова", "X", "", " ", " \t\u3000", "...", "- '", "Taro2", "Taro２", "Taro٢",
		"Taro_Yamada", "Taro\tYamada", "Taro\nYamada", "Taro\r\nYamada", "Taro Yamada 🙂", "Taro@example.com",
		"Taro\x00", "<script>alert(1)</script>", "Robert'); DROP TABLE cards;--", "Taro\u00a0Yamada",
		"\u00a0Taro\u00a0", "\u0085Taro\u0085", "\ufeffTaro", "Taro\ufeff", "Taro\u200bYamada", "Taro\u200dYamada",
		"\u202eTaro", "Taro\u2010Yamada", "Taro\u2013Yamada", "Taro・Yamada", "Taro･Yamada", "Taro·Yamada",
		"สมชาย ใจดี", "देवनागरी", "محمد علي", "דוד כהן", "김철수", "Nguyễn Văn An", "Ἀθηνᾶ", "𝐓𝐀𝐑𝐎", "𝟐Taro",
		"𠀋𠀋 𠀋", "\u0301", "\u0301Taro", "ー", "タロー", "'", "’", "・", "\u3000",
		strings.Repeat("A", 64), strings.Repeat("A", 65), strings.Repeat("ア", 64), strings.Repeat("ア", 65),
		strings.Repeat("é", 64), strings.Repeat("é", 65),
		strings.Repeat("e\u0301", 32), strings.Repeat("e\u0301", 33),
		// Outside the BMP a character is two UTF-16 units: 33 of them are 66
		// units but 33 characters, 64 are 128 units and still allowed.
		strings.Repeat("𠀋", 33), strings.Repeat("𠀋", 64), strings.Repeat("𠀋", 65),
		strings.Repeat("𝐀", 64), strings.Repeat("𝐀", 65), "A" + strings.Repeat("😀", 32),
		"A" + strings.Repeat("\u0301", 63), "A" + strings.Repeat("\u0301", 64),
		"  " + strings.Repeat("A", 64) + "  ", "\u3000" + strings.Repeat("A", 64) + "\u3000",
	}
	for _, sep := range separators {
		in = append(in, "Taro"+sep+"Yamada", sep+"Taro"+sep)
	}
	return append(in, hostile...)
}

func expiryInputs() []string {
	in := []string{
		"12/25", "12 / 25", "1225", "12/2025", "122025", "01/30", "1/30", " 07/27 ", "07-27", "07.27", "07 27", "０７／２７",
		"07/00", "", "/", "13/25", "00/25", "0/25", "1325", "12/5", "12/025", "12/20255", "01/0025", "010000", "125",
		"12345", "1234567", "12/25/26", "012/25", "12/25a", "December 2025", "06/25", "0625", "   ", "05/25", "12/24",
		"12/2099", "00", "13", "ab", "12/25/1", "122/", "0", "1", "9", "12", "12/", "12 / ", "1/", "12/2", "12/202", "122",
		"12202", "１２／", "01/26", "1/26", "12/45", "12/46", "01/46", "12/50", "6/25", "6/2025", "11/25", "12/2045",
		"12/2046", "01 / ", "1 / 2", "12 / 2", "12 / 27", "12／27", "12－27", "12ー27", "12\u00a027", "12\u300027",
		"12\u008527", "12\ufeff27", "12//27", "１２２７", "12/２０２７", "12\t27", "12 \u3000 27", "/12/27", "12/27/",
		"-12-27", "1\xff2/25", "1 2 / 2 5", "12/2 5", "0 / 25", "00/00", "99999999", "-1", "12//25", "1.2", "1-",
		"１", "１／", "１２／２", "12 / 2027", "2027/12", "6 / 25", "06 / 2025", "01/2026", "12/2025", "1/2026",
		"\u3000１２／２７\u3000",
	}
	for _, sep := range separators {
		in = append(in, "12"+sep+"30", "1"+sep, sep+"1230", "1230"+sep)
	}
	return append(in, hostile...)
}

// digitIndexInputs are fields as the browser holds them while the caret
// moves through them.
var digitIndexInputs = []string{
	"", "4242 4242", "42-42", "４２４２", "😀4242", "😀 4242 4242", "é42", "4242\u00a04242", "𝟒4", "4😀2😀4",
	"3782 822463 10005", "12 / 27", "a1b2c3",
}

// caretNumbers are numbers the caret is placed in after a reformat.
var caretNumbers = []string{
	"", "4", "42424", "4242", "4242424242424242", "4242424242424242424", "378282246310005", "30569309025904",
	"305693090259041", "3056-9309-0259-04", "3530111333300000", "6200000000000005123", "1234567890123456789012345",
	"４２４２４２",
}

// runeClasses sums up, for every code point, what the rules do with it as
// a single character: as part of a card number, of a name, of an expiry and
// of a security code. Consecutive code points that answer alike form one
// range, so the whole of Unicode fits in a few thousand entries.
type runeClass struct {
	// assigned is whether Go's Unicode tables (unicode.Version) know the
	// code point. A JavaScript engine with newer tables may classify
	// characters Go has never heard of; only those may differ.
	Assigned bool `json:"assigned"`
	// Digit is what Digits makes of the character.
	Digit string `json:"digit"`
	// InNumber is NumberState of a valid Visa number with it at the end.
	InNumber string `json:"inNumber"`
	// Name is CardholderState of the character alone, Inside of
	// "A" + it + "A".
	Name   string `json:"name"`
	Inside string `json:"inside"`
	// InExpiry is ExpiryState of "12" + it + "30" at the first vectorNow.
	InExpiry string `json:"inExpiry"`
	// LeadCVV is CVVState of it + "123" for Visa.
	LeadCVV string `json:"leadCVV"`
}

func classify(r rune) runeClass {
	s := string(r)
	return runeClass{
		Assigned: !unicode.Is(unicode.Cn, r),
		Digit:    Digits(s),
		InNumber: NumberState("4242424242424242" + s),
		Name:     CardholderState(s),
		Inside:   CardholderState("A" + s + "A"),
		InExpiry: ExpiryState("12"+s+"30", vectorNows[0]),
		LeadCVV:  CVVState(s+"123", Visa),
	}
}

type runeRange struct {
	lo, hi rune
	class  int
}

func (r runeRange) MarshalJSON() ([]byte, error) {
	return json.Marshal([]int{int(r.lo), int(r.hi), r.class})
}

// runeRanges covers every code point except the surrogates, which are not
// characters (a lone one in a JavaScript string reaches Go as U+FFFD). The
// code points are classified in parallel: over a million of them, several
// rules each, take seconds under the race detector.
func runeRanges() ([]runeClass, []runeRange) {
	type run struct {
		lo, hi rune
		c      runeClass
	}
	const chunk = 1 << 14
	runs := make([][]run, (unicode.MaxRune+chunk)/chunk)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(runs) {
					return
				}
				var rs []run
				for r := rune(i * chunk); r < rune((i+1)*chunk) && r <= unicode.MaxRune; r++ {
					if 0xD800 <= r && r <= 0xDFFF {
						continue
					}
					c := classify(r)
					if n := len(rs); n > 0 && rs[n-1].c == c && rs[n-1].hi == r-1 {
						rs[n-1].hi = r
						continue
					}
					rs = append(rs, run{r, r, c})
				}
				runs[i] = rs
			}
		}()
	}
	wg.Wait()

	var classes []runeClass
	index := map[runeClass]int{}
	var ranges []runeRange
	for _, rs := range runs {
		for _, x := range rs {
			k, ok := index[x.c]
			if !ok {
				k = len(classes)
				index[x.c] = k
				classes = append(classes, x.c)
			}
			if n := len(ranges); n > 0 && ranges[n-1].class == k && ranges[n-1].hi == x.lo-1 {
				ranges[n-1].hi = x.hi
				continue
			}
			ranges = append(ranges, runeRange{x.lo, x.hi, k})
		}
	}
	return classes, ranges
}

type (
	numberVector struct {
		In     string `json:"in"`
		Digits string `json:"digits"`
		Luhn   bool   `json:"luhn"`
		Brand  Brand  `json:"brand"`
		State  string `json:"state"`
		Clamp  string `json:"clamp"`
		Format string `json:"format"`
	}
	brandVector struct {
		Brand   Brand `json:"brand"`
		Lengths []int `json:"lengths"` // of 0–40
		Min     int   `json:"min"`
		Max     int   `json:"max"`
		CVV     int   `json:"cvv"`
	}
	caretVector struct {
		Number string `json:"number"`
		Index  int    `json:"index"`
		Want   int    `json:"want"`
	}
	digitIndexVector struct {
		In    string `json:"in"`
		Caret int    `json:"caret"`
		Want  int    `json:"want"`
	}
	cvvVector struct {
		In     string           `json:"in"`
		States map[Brand]string `json:"states"`
	}
	cardholderVector struct {
		In    string `json:"in"`
		State string `json:"state"`
	}
	expiryVector struct {
		In string `json:"in"`
		// Month and Year are ParseExpiry's answer, 0 and 0 when it fails.
		Month  int      `json:"month"`
		Year   int      `json:"year"`
		States []string `json:"states"` // ExpiryState at each of nows
	}
	validExpiryVector struct {
		Month int  `json:"month"`
		Year  int  `json:"year"`
		Now   int  `json:"now"` // index into nows
		Want  bool `json:"want"`
	}
	yearVector struct {
		In   int `json:"in"`
		Want int `json:"want"`
	}
)

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r > 0xFFFF {
			n++
		}
	}
	return n
}

// buildVectors computes every answer. It refuses inputs that are not UTF-8:
// JSON cannot carry them, and a browser field cannot hold them.
func buildVectors(t *testing.T) []byte {
	t.Helper()
	check := func(s string) string {
		if !utf8.ValidString(s) {
			t.Fatalf("vector input %q is not UTF-8", s)
		}
		return s
	}
	var w vectorWriter
	w.begin()
	w.field("about", "What the Go card rules (package card) answer; written by `go test ./wasm/card -run TestVectors -update`, read by web/browser/cardrules.test.mjs. Do not edit.")
	w.field("unicode", unicode.Version)
	nows := make([][3]int, len(vectorNows))
	for i, n := range vectorNows {
		nows[i] = [3]int{n.Year(), int(n.Month()), n.Day()}
	}
	w.field("nows", nows)
	w.field("maxCardholderLength", MaxCardholderLength)

	var brands []any
	for _, b := range vectorBrands {
		v := brandVector{Brand: b, Min: b.MinLength(), Max: b.MaxLength(), CVV: b.CVVLength(), Lengths: []int{}}
		for n := 0; n <= 40; n++ {
			if b.ValidLength(n) {
				v.Lengths = append(v.Lengths, n)
			}
		}
		brands = append(brands, v)
	}
	w.list("brands", brands)

	var numbers []any
	seen := map[string]bool{}
	for _, s := range numberInputs() {
		if seen[check(s)] {
			continue
		}
		seen[s] = true
		numbers = append(numbers, numberVector{
			In: s, Digits: Digits(s), Luhn: Luhn(s), Brand: DetectBrand(s), State: NumberState(s), Clamp: Clamp(s), Format: Format(s),
		})
	}
	w.list("numbers", numbers)

	var carets []any
	for _, s := range caretNumbers {
		for i := -1; i <= len(Digits(s))+1; i++ {
			carets = append(carets, caretVector{check(s), i, FormatCaret(s, i)})
		}
	}
	w.list("formatCaret", carets)

	var indexes []any
	for _, s := range digitIndexInputs {
		for c := -1; c <= utf16Len(s)+1; c++ {
			indexes = append(indexes, digitIndexVector{check(s), c, DigitIndex(s, c)})
		}
	}
	w.list("digitIndex", indexes)

	var cvvs []any
	for _, s := range cvvInputs() {
		v := cvvVector{In: check(s), States: map[Brand]string{}}
		for _, b := range vectorBrands {
			v.States[b] = CVVState(s, b)
		}
		cvvs = append(cvvs, v)
	}
	w.list("cvv", cvvs)

	var names []any
	seen = map[string]bool{}
	for _, s := range cardholderInputs() {
		if seen[check(s)] {
			continue
		}
		seen[s] = true
		names = append(names, cardholderVector{s, CardholderState(s)})
	}
	w.list("cardholder", names)

	var expiries []any
	seen = map[string]bool{}
	for _, s := range expiryInputs() {
		if !utf8.ValidString(s) || seen[s] {
			continue // "1\xff2/25" is the fuzz corpus's; a field cannot hold it
		}
		seen[s] = true
		m, y, _ := ParseExpiry(s)
		v := expiryVector{In: s, Month: m, Year: y}
		for _, now := range vectorNows {
			v.States = append(v.States, ExpiryState(s, now))
		}
		expiries = append(expiries, v)
	}
	w.list("expiry", expiries)

	var valid []any
	for i, now := range vectorNows {
		for _, m := range []int{-1, 0, 1, 5, 6, 7, 11, 12, 13} {
			for _, y := range []int{-2026, -1, 0, 24, 25, 26, 45, 46, 99, 100, 125, 2024, 2025, 2026, 2045, 2046, 2099} {
				valid = append(valid, validExpiryVector{m, y, i, ValidExpiry(m, y, now)})
			}
		}
	}
	w.list("validExpiry", valid)

	var years []any
	for _, y := range []int{-1, 0, 1, 25, 99, 100, 999, 2025, 10000} {
		years = append(years, yearVector{y, NormalizeYear(y)})
	}
	w.list("normalizeYear", years)

	classes, ranges := runeRanges()
	cs := make([]any, len(classes))
	for i, c := range classes {
		cs[i] = c
	}
	w.list("runeClasses", cs)
	rs := make([]any, len(ranges))
	for i, r := range ranges {
		rs[i] = r
	}
	w.packed("runeRanges", rs)
	return w.end(t)
}

// vectorWriter writes the file with one vector a line, so that a change of
// rule shows in a diff as the lines it changes.
type vectorWriter struct {
	buf   bytes.Buffer
	first bool
	err   error
}

func (w *vectorWriter) begin() { w.buf.WriteString("{"); w.first = true }

func (w *vectorWriter) key(k string) {
	if !w.first {
		w.buf.WriteString(",")
	}
	w.first = false
	w.buf.WriteString("\n")
	w.buf.Write(w.marshal(k))
	w.buf.WriteString(": ")
}

func (w *vectorWriter) marshal(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil && w.err == nil {
		w.err = err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

func (w *vectorWriter) field(k string, v any) {
	w.key(k)
	w.buf.Write(w.marshal(v))
}

func (w *vectorWriter) list(k string, vs []any) {
	w.key(k)
	w.buf.WriteString("[")
	for i, v := range vs {
		if i > 0 {
			w.buf.WriteString(",")
		}
		w.buf.WriteString("\n  ")
		w.buf.Write(w.marshal(v))
	}
	w.buf.WriteString("\n]")
}

// packed writes short entries several to a line.
func (w *vectorWriter) packed(k string, vs []any) {
	w.key(k)
	w.buf.WriteString("[")
	for i, v := range vs {
		switch {
		case i%10 == 0:
			if i > 0 {
				w.buf.WriteString(",")
			}
			w.buf.WriteString("\n  ")
		default:
			w.buf.WriteString(", ")
		}
		w.buf.Write(w.marshal(v))
	}
	w.buf.WriteString("\n]")
}

func (w *vectorWriter) end(t *testing.T) []byte {
	t.Helper()
	w.buf.WriteString("\n}\n")
	if w.err != nil {
		t.Fatal(w.err)
	}
	return w.buf.Bytes()
}

// TestVectors writes testdata/vectors.json with -update, and otherwise
// fails when the file differs from what the rules answer.
func TestVectors(t *testing.T) {
	want := buildVectors(t)
	if !json.Valid(want) {
		t.Fatal("the vectors are not valid JSON")
	}
	if *update {
		if err := os.WriteFile(vectorsFile, want, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s (%d bytes)", vectorsFile, len(want))
		return
	}
	got, err := os.ReadFile(vectorsFile)
	if err != nil {
		t.Fatalf("%v; run: go test ./wasm/card -run TestVectors -update", err)
	}
	if bytes.Equal(got, want) {
		return
	}
	gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(gl) || i < len(wl); i++ {
		var g, w string
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			t.Fatalf("%s is stale (the JavaScript rules would be checked against old answers); "+
				"run: go test ./wasm/card -run TestVectors -update\nfirst difference, line %d:\n file:  %.300s\n rules: %.300s",
				vectorsFile, i+1, g, w)
		}
	}
}
