package message

import "strings"

// maxRanges is how many language ranges of an Accept-Language header count.
// Browsers send a handful; a header with more is read no further, so that
// no header costs more than a glance.
const maxRanges = 32

// Parse reads a locale named explicitly: a page's locale parameter, the
// language a shopper picked. It accepts a language tag whose primary
// subtag is "ja" or "en", in any case, with any further subtags of 1 to 8
// letters or digits joined by "-" or "_": "ja", "JA", "ja-JP", "ja_JP",
// "en-GB", "en-Latn-US". Anything else names no locale ("auto", "",
// "japanese", " ja", "jv" or "jam", "ja-", "ja-JP!"): ok is false, and
// Negotiate goes on to the browser's languages. The loader (checkout.js)
// applies the same rule in the browser.
func Parse(value string) (l Locale, ok bool) {
	if !wellFormedTag(value, true) {
		return "", false
	}
	return primaryLocale(value)
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
		if tag == "*" || !wellFormedTag(tag, false) {
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

// wellFormedTag reports whether s is a language tag: a primary subtag of
// 1 to 8 ASCII letters, then any number of subtags of 1 to 8 ASCII letters
// or digits, each after a "-" (or a "_" too, when underscore is set). It
// reads s once and allocates nothing, however long and odd s is.
func wellFormedTag(s string, underscore bool) bool {
	n, primary := 0, true
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch lower := c | 0x20; {
		case c == '-' || (underscore && c == '_'):
			if n == 0 {
				return false
			}
			n, primary = 0, false
			continue
		case 'a' <= lower && lower <= 'z':
		case !primary && '0' <= c && c <= '9':
		default:
			return false
		}
		if n++; n > 8 {
			return false
		}
	}
	return n > 0
}

// primaryLocale is the locale of a well-formed tag's primary subtag.
func primaryLocale(tag string) (Locale, bool) {
	primary := tag
	if i := strings.IndexAny(tag, "-_"); i >= 0 {
		primary = tag[:i]
	}
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
