package message

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// FuzzNegotiateLocale checks Negotiate with any explicit value and header
// against a second reading of the rules written with regular expressions
// and strconv. Properties: no panic; the answer is Japanese or English; an
// explicit value Parse accepts decides; otherwise the answer is what the
// second reading makes of the header; and the answer, given back as the
// explicit value, is kept.
func FuzzNegotiateLocale(f *testing.F) {
	for _, s := range [][2]string{
		{"", ""}, {"ja", ""}, {"ja-JP", "en"}, {"japanese", ""}, {"auto", "ja-JP,ja;q=0.9,en;q=0.8"},
		{"", "fr-FR, ja;q=0.7, en;q=0.6"}, {"", "en, ja"}, {"", "ja;q=0, en;q=0.1"}, {"", "*, ja;q=0.5"},
		{"", "ja;q=1.5, en;q=0.1"}, {"", "ja;q=NaN"}, {"", "en;q=0.1, ja;q=0."}, {"", "ja;;;;q=0.9;;"},
		{"", ",,,, ,ja"}, {"jam", "jv, en"}, {"\u00a0ja\u3000", ""}, {"ja_JP", "ja_JP"}, {"ja-\u212a", ""}, {"en-ſ", "ja-ſ"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, explicit, header string) {
		got := Negotiate(explicit, header)
		if got != Japanese && got != English {
			t.Fatalf("Negotiate(%q, %q) = %q", explicit, header, got)
		}
		want, ok := oracleParse(explicit)
		if !ok {
			want = oracleHeader(header)
		}
		if got != want {
			t.Fatalf("Negotiate(%q, %q) = %q, the rules say %q", explicit, header, got, want)
		}
		if l, ok := Parse(explicit); ok != (oracleOK(explicit)) || (ok && l != got) {
			t.Fatalf("Parse(%q) = %q, %v", explicit, l, ok)
		}
		if again := Negotiate(string(got), header); again != got {
			t.Fatalf("Negotiate(%q, %q) = %q, but %q gives %q", explicit, header, got, got, again)
		}
	})
}

var (
	oracleTag    = regexp.MustCompile(`^([jJ][aA]|[eE][nN])([-_][A-Za-z0-9]{1,8})*$`) // (?i) would fold K into the Kelvin sign
	oracleRange  = regexp.MustCompile(`^([A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8})*)$`)
	oracleQValue = regexp.MustCompile(`^(?:0(?:\.[0-9]{0,3})?|1(?:\.0{0,3})?)$`)
)

func oracleOK(explicit string) bool {
	_, ok := oracleParse(explicit)
	return ok
}

func oracleParse(explicit string) (Locale, bool) {
	m := oracleTag.FindStringSubmatch(explicit)
	if m == nil {
		return "", false
	}
	return Locale(strings.ToLower(m[1])), true
}

func oracleHeader(header string) Locale {
	best, bestQ, n := English, -1.0, 0
	for _, element := range strings.Split(header, ",") {
		element = strings.Trim(element, " \t")
		if element == "" {
			continue
		}
		if n++; n > 32 {
			break
		}
		parts := strings.Split(element, ";")
		tag := strings.Trim(parts[0], " \t")
		if !oracleRange.MatchString(tag) {
			continue
		}
		lang := strings.ToLower(strings.SplitN(tag, "-", 2)[0])
		if lang != "ja" && lang != "en" {
			continue
		}
		q, valid := 1.0, true
		for _, p := range parts[1:] {
			p = strings.Trim(p, " \t")
			if len(p) < 2 || !strings.EqualFold(p[:2], "q=") {
				if !strings.EqualFold(p, "q") {
					continue
				}
			}
			v := ""
			if len(p) >= 2 {
				v = p[2:]
			}
			if !oracleQValue.MatchString(v) {
				valid = false
				break
			}
			if strings.HasSuffix(v, ".") {
				v += "0" // "0." is a qvalue but not a float
			}
			q, _ = strconv.ParseFloat(v, 64)
			break
		}
		if !valid || q == 0 {
			continue
		}
		if q > bestQ {
			best, bestQ = Locale(lang), q
		}
	}
	return best
}
