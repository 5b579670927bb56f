package message

import "strings"

// maxExplicit bounds an explicit locale: no tag anyone writes is longer,
// and a longer value is not worth reading.
const maxExplicit = 64

// maxRanges is how many language ranges of an Accept-Language header count.
// Browsers send a handful; a header with more is read no further, so that
// no header costs more than a glance.
const maxRanges = 32

// Parse reads a locale named explicitly: a page's locale parameter, the
// language a shopper picked. It accepts, in any case and with spaces around
// it:
//
//   - a language tag whose primary subtag is "ja" or "en", with any further
//     subtags (1 to 8 letters or digits each) joined by "-" or "_": "ja",
//     "ja-JP", "ja_JP", "en-GB", "en-Latn-US";
//   - the language's English name: "japanese", "english".
//
// Anything else names no locale, "auto" and "" included: ok is false.
// "jv" (Javanese) or "jam" is not Japanese, nor is "ja-" or "ja-JP!".
func Parse(value string) (l Locale, ok bool) {
	v := strings.TrimSpace(value)
	if v == "" || len(v) > maxExplicit {
		return "", false
	}
	switch {
	case strings.EqualFold(v, "japanese"):
		return Japanese, true
	case strings.EqualFold(v, "english"):
		return English, true
	}
	v = strings.ReplaceAll(v, "_", "-")
	if !wellFormedTag(v) {
		return "", false
	}
	return primaryLocale(v)
}

// Negotiate chooses the language of a page. The explicit value decides
// when Parse accepts it. Otherwise the browser's Accept-Language header
// does (RFC 9110): among its language ranges whose primary subtag is "ja"
// or "en" ("ja", "ja-JP", "en-US"), the one with the highest weight, and on
// a tie the one listed first. A range of weight 0 is one the browser
// refuses. A range whose tag is malformed (the header's tags join subtags
// with "-" only) or whose weight is not a qvalue (0 to 1 with at most three
// decimals: "q=0.8", "q=1.000") is ignored, as is the wildcard "*"; so is
// every range after the first 32. When nothing decides, English.
func Negotiate(explicit, acceptLanguage string) Locale {
	if l, ok := Parse(explicit); ok {
		return l
	}
	best, bestWeight := English, -1
	rest := acceptLanguage
	for n := 0; n < maxRanges && rest != ""; {
		var element string
		element, rest, _ = strings.Cut(rest, ",")
		element = strings.Trim(element, " \t")
		if element == "" {
			continue // empty list elements are allowed and mean nothing
		}
		n++
		tag, params, _ := strings.Cut(element, ";")
		tag = strings.Trim(tag, " \t")
		if tag == "*" || !wellFormedTag(tag) {
			continue
		}
		l, ok := primaryLocale(tag)
		if !ok {
			continue
		}
		weight, ok := weightOf(params)
		if !ok || weight == 0 {
			continue
		}
		if weight > bestWeight {
			best, bestWeight = l, weight
		}
	}
	return best
}

// wellFormedTag reports whether s is a language tag as a language range
// writes it: a primary subtag of 1 to 8 ASCII letters, then any number of
// subtags of 1 to 8 ASCII letters or digits, each after a "-".
func wellFormedTag(s string) bool {
	for i, sub := range strings.Split(s, "-") {
		if len(sub) < 1 || len(sub) > 8 {
			return false
		}
		for j := 0; j < len(sub); j++ {
			c := sub[j] | 0x20 // ASCII lower case; digits are unchanged
			letter := c >= 'a' && c <= 'z'
			digit := sub[j] >= '0' && sub[j] <= '9'
			if !letter && (i == 0 || !digit) {
				return false
			}
		}
	}
	return true
}

// primaryLocale is the locale of a well-formed tag's primary subtag.
func primaryLocale(tag string) (Locale, bool) {
	primary, _, _ := strings.Cut(tag, "-")
	switch {
	case strings.EqualFold(primary, "ja"):
		return Japanese, true
	case strings.EqualFold(primary, "en"):
		return English, true
	}
	return "", false
}

// weightOf reads the weight among a range's parameters, in thousandths
// (1000 when there is none). ok is false when a q parameter is there but
// is not a qvalue: ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] ).
// Parameters other than q mean nothing to Accept-Language and are skipped.
func weightOf(params string) (weight int, ok bool) {
	for params != "" {
		var p string
		p, params, _ = strings.Cut(params, ";")
		name, value, _ := strings.Cut(strings.Trim(p, " \t"), "=")
		if !strings.EqualFold(name, "q") {
			continue
		}
		whole, frac, _ := strings.Cut(value, ".")
		if len(frac) > 3 {
			return 0, false
		}
		thousandths := 0
		for i := 0; i < 3; i++ {
			thousandths *= 10
			if i < len(frac) {
				d := frac[i]
				if d < '0' || d > '9' {
					return 0, false
				}
				thousandths += int(d - '0')
			}
		}
		switch whole {
		case "0":
			return thousandths, true
		case "1":
			return 1000, thousandths == 0
		}
		return 0, false
	}
	return 1000, true
}
