package field

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kessai/kessai/wasm/card"
)

// testdata/vectors.json is what this package answers, for the widget's
// plain-JavaScript fallback (static/cardrules.js) to be held to by the
// browser suite's cardrules.test.mjs, as wasm/card's vectors are for the
// card rules. Regenerate after a change:
//
//	go test ./wasm/widget/field -run TestVectors -update

var update = flag.Bool("update", false, "rewrite testdata/vectors.json from the Go rules")

const vectorsFile = "testdata/vectors.json"

var vectorBrands = []card.Brand{card.Visa, card.Mastercard, card.JCB, card.AmericanExpress, card.DinersClub,
	card.Discover, card.UnionPay, card.Maestro, card.Unknown}

// expiryFieldInputs are what the expiry field can hold after a keystroke,
// a deletion, a paste or an autofill.
func expiryFieldInputs() []string {
	in := []string{
		"", "0", "1", "2", "4", "9", "00", "01", "09", "10", "11", "12", "13", "19", "20", "99", "1/", "1 ", "0/", "1-",
		"1.", "1／", "1　", "1\u00a0", "1\u0085", "1\ufeff", "1ー", "1x", "12 /", "12 / ", "12 / 2", "12 / 27", "1227",
		"12 / 273", "12/2027", "122027", "１２／２７", "4 / ", "04 / ", "04 / 2", "1 / 2", "01 / 2", "13 / ", "12 27",
		"12/27/", "12/2", "123", "1234", "12345", "123456", "1234567", "01/0025", "12/20255", "/", "//", "/1", " 1",
		"a", "1a", "a1", "１", "１/", "４", "１３", "12 / 2027", "6/2025", "06 / 2025", "1/2030", "1 / 2030", "12/25/26",
		"😀1", "1😀", "1 😀", "12\u0301", "0 / ", "00 / ", "０", "0１", "12ー27", "12－27",
		strings.Repeat("1", 1000), strings.Repeat("1/", 500), strings.Repeat(" ", 1000) + "1",
	}
	return in
}

// phoneFieldInputs are what a konbini shopper may type as their phone
// number: the ways Japanese numbers are written, with full-width
// characters and every kind of dash, other countries' numbers, and
// every length around the API's bounds; then each separator the rule
// knows, and some it does not, between digits.
func phoneFieldInputs() []string {
	in := []string{
		"", " ", "\u3000", "\t", "0", "090", "090-", "090-1234", "090-1234-5678", "09012345678", "03-1234-5678",
		"0312345678", "03 1234 5678", "03(1234)5678", "(03) 1234-5678", "（０３）１２３４－５６７８", "０９０ー１２３４ー５６７８",
		"０９０１２３４５６７８", "090ｰ1234ｰ5678", "090\u22121234\u22125678", "090–1234—5678", "090‐1234‑5678",
		" 090-1234-5678 ", "\u00a0090 1234 5678", "+81 90-1234-5678", "+819012345678", "+81 (0)90 1234 5678",
		"+81-3-1234-5678", "＋８１ ３ １２３４ ５６７８", "+1 415 555 0100", "+44 20 7946 0958", "+8", "+", "+81", "+810",
		"++81 90 1234 5678", "090+1234", " +81 90 1234 5678", "(+81) 90 1234 5678", "---", "090-1234-567a",
		"090.1234.5678", "090/1234/5678", "090_1234_5678", "tel:09012345678", "٠٩٠١٢٣٤٥٦٧٨", "090 1234 5678 内線12",
		"😀09012345678", "0\u03011234567890", "0120-123-456", "0570-000-000", "050-1234-5678", "8190123456789",
		strings.Repeat("0", 1000), strings.Repeat("-", 1000), strings.Repeat(" ", 1000) + "09012345678",
	}
	for n := 0; n <= 13; n++ {
		in = append(in, "0"+strings.Repeat("9", n), "9"+strings.Repeat("0", n), "+81"+strings.Repeat("9", n))
	}
	for _, sep := range []string{" ", "-", "\u3000", "\u00a0", "\u2010", "\u2011", "\u2012", "\u2013", "\u2014",
		"\u2015", "\u2212", "\u30fc", "\uff0d", "\uff70", "\u301c", "\uff5e", "~", "(", ")", "（", "）", "[", ".", "・",
		"/", "_", "\u0085", "\ufeff", "\u200b", "\u2e3a", "\ufe63", "\u058a"} {
		in = append(in, "090"+sep+"1234"+sep+"5678")
	}
	return in
}

type (
	expiryVector struct {
		In string `json:"in"`
		// Typing and Deleting are FormatExpiry(in, false) and (in, true).
		Typing   string `json:"typing"`
		Deleting string `json:"deleting"`
	}
	caretVector struct {
		In   string `json:"in"`
		K    int    `json:"k"`
		Want int    `json:"want"`
	}
	messageKeyVector struct {
		Field string `json:"field"`
		State string `json:"state"`
		Want  string `json:"want"`
	}
	phoneVector struct {
		In    string `json:"in"`
		Local string `json:"local"`
		State string `json:"state"`
	}
	brandVector struct {
		Brand   card.Brand `json:"brand"`
		CVVMax  int        `json:"cvvMax"`
		Known   bool       `json:"known"`
		Advance []int      `json:"advance"` // the lengths 0–40 AutoAdvance is true for
	}
)

func buildVectors(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	marshal := func(v any) []byte {
		var e bytes.Buffer
		enc := json.NewEncoder(&e)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		return bytes.TrimSuffix(e.Bytes(), []byte("\n"))
	}
	list := func(k string, vs []any, last bool) {
		b.WriteString("\n")
		b.Write(marshal(k))
		b.WriteString(": [")
		for i, v := range vs {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString("\n  ")
			b.Write(marshal(v))
		}
		b.WriteString("\n]")
		if !last {
			b.WriteString(",")
		}
	}
	b.WriteString("{\n")
	b.Write(marshal("about"))
	b.WriteString(": ")
	b.Write(marshal("What the Go widget field rules (package field) answer; written by `go test ./wasm/widget/field -run TestVectors -update`, read by web/browser/cardrules.test.mjs. Do not edit."))
	b.WriteString(",")

	var exps []any
	seen := map[string]bool{}
	for _, s := range expiryFieldInputs() {
		if !utf8.ValidString(s) {
			t.Fatalf("vector input %q is not UTF-8", s)
		}
		if seen[s] {
			continue
		}
		seen[s] = true
		exps = append(exps, expiryVector{s, FormatExpiry(s, false), FormatExpiry(s, true)})
	}
	list("formatExpiry", exps, false)

	var carets []any
	for _, s := range []string{"", "12 / 27", "01 / ", "1", "12", "12 / 2", "4242 4242"} {
		for k := -1; k <= len(s)+1; k++ {
			carets = append(carets, caretVector{s, k, CaretAfterDigits(s, k)})
		}
	}
	list("caretAfterDigits", carets, false)

	// Every state the card package's judges give (and one they never do)
	// for every field.
	var keys []any
	for _, f := range []string{"number", "exp", "cvc", "name", "phone"} {
		for _, st := range []string{"", card.ReasonRequired, card.ReasonInvalidCardNumber, card.ReasonInvalidExpiration,
			card.ReasonInvalidCVV, card.ReasonInvalidFormat, card.StateIncompleteNumber, card.StateIncompleteExpiry,
			card.StateIncompleteCVV, card.StateExpired, ReasonInvalidPhone, ReasonOnlyJapanesePhone, "SOMETHING_NEW"} {
			keys = append(keys, messageKeyVector{f, st, MessageKey(f, st)})
		}
	}
	list("messageKey", keys, false)

	var phones []any
	seen = map[string]bool{}
	for _, s := range phoneFieldInputs() {
		if !utf8.ValidString(s) {
			t.Fatalf("vector input %q is not UTF-8", s)
		}
		if seen[s] {
			continue
		}
		seen[s] = true
		local, state := JapanesePhone(s)
		phones = append(phones, phoneVector{s, local, state})
	}
	list("phone", phones, false)

	var brands []any
	for _, br := range vectorBrands {
		v := brandVector{Brand: br, CVVMax: CVVMax(br), Known: Known(br), Advance: []int{}}
		for n := 0; n <= 40; n++ {
			if AutoAdvance(br, n) {
				v.Advance = append(v.Advance, n)
			}
		}
		brands = append(brands, v)
	}
	list("brands", brands, true)
	b.WriteString("\n}\n")
	if !json.Valid(b.Bytes()) {
		t.Fatal("the vectors are not valid JSON")
	}
	return b.Bytes()
}

// TestVectors writes testdata/vectors.json with -update, and otherwise
// fails when the file differs from what the rules answer.
func TestVectors(t *testing.T) {
	want := buildVectors(t)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(vectorsFile, want, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s (%d bytes)", vectorsFile, len(want))
		return
	}
	got, err := os.ReadFile(vectorsFile)
	if err != nil {
		t.Fatalf("%v; run: go test ./wasm/widget/field -run TestVectors -update", err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := range max(len(gl), len(wl)) {
			var g, w string
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Fatalf("%s is stale; run: go test ./wasm/widget/field -run TestVectors -update\n"+
					"first difference, line %d:\n file:  %.300s\n rules: %.300s", vectorsFile, i+1, g, w)
			}
		}
	}
}
