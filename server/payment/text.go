package payment

import (
	"net/mail"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Bounds of the free-text fields. Every string Kessai stores has one, so
// that no request can make a row (or a list of rows) arbitrarily large.
const (
	maxAddressLineLen = 255
	maxCityLen        = 100
	maxZipLen         = 16
	maxPhoneLen       = 20
	maxURLLen         = 2048
	MaxRedirectIDLen  = 255
	maxIPLen          = 45 // the longest textual IPv6 address
	MaxMessageLen     = 1024
	maxDescriptorLen  = 64
	maxMerchantTxnLen = 32
)

// ReasonCardNumber names a free-text field that holds what looks like a
// card number: card numbers belong in a token's card data, where they are
// sealed, never in fields stored and shown in the clear.
const ReasonCardNumber = "CARD_NUMBER_NOT_ALLOWED"

// ReasonAddressNotAllowed names a webhook URL whose host is, or resolves
// to, an address its deliveries may never reach: link-local and cloud
// metadata, multicast, unspecified and reserved addresses in any mode,
// loopback and private networks in live mode (and in test mode unless the
// gateway lets them, KESSAI_WEBHOOK_TEST_PRIVATE).
const ReasonAddressNotAllowed = "ADDRESS_NOT_ALLOWED"

// Reasons of the reference for malformed URLs, countries and phones.
const (
	ReasonInvalidURL     = "INVALID_FORMAT_URL"
	ReasonInvalidCountry = "INVALID_FORMAT_COUNTRY"
	ReasonInvalidPhone   = "INVALID_PHONE_NUMBER"
)

// CheckText records what is wrong with a one-line free-text field, if
// anything: more than max characters, control characters, or a card number.
func CheckText(v *Validation, field, s string, max int) {
	checkString(v, field, s, max, unicode.IsControl)
}

// CheckNote is checkText for text that may run over several lines (a
// refund's message, a metadata note): tabs and line breaks are allowed.
func CheckNote(v *Validation, field, s string, max int) {
	checkString(v, field, s, max, func(r rune) bool {
		return unicode.IsControl(r) && r != '\n' && r != '\r' && r != '\t'
	})
}

func checkString(v *Validation, field, s string, max int, forbidden func(rune) bool) {
	switch {
	case len(s) > 4*max || utf8.RuneCountInString(s) > max:
		v.Add(field, ReasonInvalidLength)
	case strings.IndexFunc(s, forbidden) >= 0:
		v.Add(field, ReasonInvalidFormat)
	case ContainsCardNumber(s):
		v.Add(field, ReasonCardNumber)
	}
}

// CheckIP records a problem with an optional IP address field (the
// shopper's address, which acquirers use for risk checks).
func CheckIP(v *Validation, field, s string) {
	if s == "" {
		return
	}
	if len(s) > maxIPLen {
		v.Add(field, ReasonInvalidLength)
		return
	}
	if a, err := netip.ParseAddr(s); err != nil || a.Zone() != "" {
		v.Add(field, ReasonInvalidFormat)
	}
}

// ValidWebURL reports whether s is an absolute http(s) URL of at most 2048
// bytes that ParseWebURL accepts. Anything else (a javascript: URL, a
// relative path) must never reach a redirect or a page.
func ValidWebURL(s string) bool {
	_, ok := ParseWebURL(s, maxURLLen)
	return ok
}

// ParseWebURL parses a URL a browser can be sent to and whose origin can be
// written into a Content-Security-Policy (form-action) as it is:
// http or https; a host that is a DNS name in ASCII (letters, digits,
// hyphens; labels of 1 to 63), an IPv4 address or a bracketed IPv6 address
// without a zone; a port, when there is one, from 1 to 65535 in plain
// decimal; no userinfo; no control characters, spaces or backslashes
// anywhere; at most maxLen bytes, as given and as normalised. A host such as "a;b" or "a,b"
// would otherwise end a CSP directive or policy early.
func ParseWebURL(raw string, maxLen int) (*url.URL, bool) {
	if len(raw) > maxLen || !utf8.ValidString(raw) {
		return nil, false
	}
	for _, r := range raw {
		if r == '\\' || unicode.IsControl(r) || unicode.IsSpace(r) || unicode.In(r, unicode.Zl, unicode.Zp, unicode.Cf) {
			return nil, false
		}
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil || u.Opaque != "" || !validHost(u.Host) {
		return nil, false
	}
	if len(u.String()) > maxLen {
		return nil, false
	}
	return u, true
}

// validHost reports whether host (host[:port] as in a URL) is a DNS name,
// an IPv4 address or a bracketed IPv6 address, with an optional port from
// 1 to 65535.
func validHost(host string) bool {
	name, port := host, ""
	if i := strings.LastIndexByte(host, ':'); i >= 0 && !strings.HasSuffix(host, "]") {
		name, port = host[:i], host[i+1:]
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 || strconv.Itoa(n) != port {
			return false
		}
	}
	if strings.HasPrefix(name, "[") {
		a, err := netip.ParseAddr(strings.TrimSuffix(name[1:], "]"))
		return strings.HasSuffix(name, "]") && err == nil && a.Is6() && a.Zone() == ""
	}
	if a, err := netip.ParseAddr(name); err == nil {
		return a.Is4()
	}
	if name == "" || len(name) > 253 {
		return false
	}
	for _, label := range strings.Split(name, ".") {
		if len(label) == 0 || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// CheckURL records a problem with an optional URL field.
func CheckURL(v *Validation, field, s string) {
	if s == "" {
		return
	}
	switch {
	case !ValidWebURL(s):
		v.Add(field, ReasonInvalidURL)
	case ContainsCardNumber(s):
		v.Add(field, ReasonCardNumber)
	}
}

// CheckRedirect records a problem with an optional URL field the gateway
// sends the caller's shopper to: its form (CheckURL), then where it leads
// (Caller.redirectAllowed; gateway is the gateway's public origin).
func CheckRedirect(v *Validation, c *Caller, gateway, field, s string) {
	CheckURL(v, field, s)
	if s != "" && ValidWebURL(s) && !c.redirectAllowed(s, gateway) {
		v.Add(field, ReasonInvalidDomain)
	}
}

// Check records what is wrong with a billing address. Country is an ISO
// 3166-1 alpha-2 code (the reference's plugins send "JP"); it is upper-cased.
func (b *Billing) Check(v *Validation, prefix string) {
	CheckText(v, prefix+"line1", b.Line1, maxAddressLineLen)
	CheckText(v, prefix+"line2", b.Line2, maxAddressLineLen)
	CheckText(v, prefix+"state", b.State, maxCityLen)
	CheckText(v, prefix+"city", b.City, maxCityLen)
	CheckText(v, prefix+"zip", b.Zip, maxZipLen)
	if b.Country != "" {
		c := strings.ToUpper(strings.TrimSpace(b.Country))
		if len(c) != 2 || c[0] < 'A' || c[0] > 'Z' || c[1] < 'A' || c[1] > 'Z' {
			v.Add(prefix+"country", ReasonInvalidCountry)
		} else {
			b.Country = c
		}
	}
	if p := b.PhoneNumber; p != nil && !p.valid() {
		v.Add(prefix+"phone_number", ReasonInvalidPhone)
	}
}

// valid reports whether a phone number is one Kessai stores: a country
// calling code of one to three digits, and a local number of digits with
// the usual separators, no longer than maxPhoneLen.
func (p *Phone) valid() bool {
	local := strings.TrimSpace(p.LocalNumber)
	return p.CountryCode >= 1 && p.CountryCode <= 999 && local != "" && len(local) <= maxPhoneLen &&
		strings.Trim(local, "0123456789 -()+") == "" && !ContainsCardNumber(local)
}

// defaultCallingCode is the country a phone number written without one is
// taken to be in: Japan, UnivaPay's country, where the shop plugins pass a
// shopper's number as typed (090-1234-5678).
const defaultCallingCode = 81

// ParsePhone reads a phone number written as one string (the widget's
// phoneNumber option, the HTML mode's data-phone-number) into the wire's
// {country_code, local_number}: "+81 90-1234-5678" and "+819012345678"
// have country code 81, read by E.164's rule (callingCodeLength); a number
// without "+" is Japanese. ok is false for what a token's billing phone
// number would refuse.
func ParsePhone(s string) (p Phone, ok bool) {
	s = strings.TrimSpace(s)
	rest, international := strings.CutPrefix(s, "+")
	if !international {
		p = Phone{CountryCode: defaultCallingCode, LocalNumber: s}
		return p, p.valid()
	}
	n := callingCodeLength(rest)
	if n == 0 || len(rest) < n || strings.Trim(rest[:n], "0123456789") != "" {
		return Phone{}, false
	}
	code, _ := strconv.Atoi(rest[:n])
	p = Phone{CountryCode: code, LocalNumber: strings.TrimLeft(rest[n:], " -")}
	return p, !strings.Contains(p.LocalNumber, "+") && p.valid()
}

// callingCodeLength is how many digits of an international number (after
// its "+") are the country calling code. E.164's codes are a prefix code:
// 1 and 7 stand alone, the two-digit codes are those listed, and every
// other code has three digits. 0 when digits does not start with a digit.
func callingCodeLength(digits string) int {
	if digits == "" || digits[0] < '0' || digits[0] > '9' {
		return 0
	}
	switch digits[0] {
	case '1', '7':
		return 1
	case '0':
		return 0
	}
	if len(digits) < 2 {
		return 0
	}
	if strings.Contains(twoDigitCallingCodes, " "+digits[:2]+" ") {
		return 2
	}
	return 3
}

// twoDigitCallingCodes are E.164's two-digit country calling codes.
const twoDigitCallingCodes = " 20 27 30 31 32 33 34 36 39 40 41 43 44 45 46 47 48 49 51 52 53 54 55 56 57 58" +
	" 60 61 62 63 64 65 66 81 82 84 86 90 91 92 93 94 95 98 "

// CheckEmail records what is wrong with an e-mail address that is to be
// stored: not an address, or an address made of a card number, which
// would then be stored and shown in the clear.
func CheckEmail(v *Validation, field, s string) {
	switch {
	case s == "":
	case !validEmail(s):
		v.Add(field, "INVALID_FORMAT_EMAIL")
	case ContainsCardNumber(s):
		v.Add(field, ReasonCardNumber)
	}
}

func validEmail(s string) bool {
	if len(s) > 254 {
		return false
	}
	a, err := mail.ParseAddress(s)
	return err == nil && a.Address == s && a.Name == ""
}
