// Package message is the one catalogue of what Kessai's pages and scripts
// say to people, in Japanese and English: the gateway's widget frame and
// the scripts that run in it (including the card fields' messages the Go
// WebAssembly shows), the loader merchants embed, the hosted link form, the
// sandbox's 3-D Secure and wallet pages and its konbini and bank-transfer
// instructions, the merchant console, the demo storefront, and the e-mail
// the gateway sends (server/mail). It also holds the rules every page
// shares for choosing a language (Negotiate) and writing an amount of
// money (Amount).
//
// Each page has a Table of texts by key; every key has both languages.
// Texts with blanks to fill take fmt verbs ("Pay %s"), the same verbs in
// the same order in both languages; this package does not fill them, so
// that it imports nothing heavier than strings and strconv and stays usable
// from the widget's WebAssembly, whose every dependency every shopper
// downloads. Browsers get their texts from here too: the gateway writes
// them into the pages and scripts it serves, and no script keeps a copy.
package message

import (
	"slices"
	"strings"
)

// Locale is a language the pages speak.
type Locale string

const (
	Japanese Locale = "ja"
	English  Locale = "en"
)

// Locales returns the languages every text has.
func Locales() []Locale { return []Locale{Japanese, English} }

// Text is one message in both languages.
type Text struct {
	EN, JA string
}

// In returns the text in the locale's language; English for anything
// that is not Japanese.
func (t Text) In(l Locale) string {
	if l == Japanese {
		return t.JA
	}
	return t.EN
}

// Table is the texts of one page or script, by key. Its texts cannot be
// changed from outside this package.
type Table struct {
	name  string
	texts map[string]Text
}

func newTable(name string, texts map[string]Text) *Table {
	return &Table{name: name, texts: texts}
}

// Name says which page or script the table is for.
func (t *Table) Name() string { return t.name }

// Get returns the text of key in l's language, or "" when the table has
// no such key.
func (t *Table) Get(key string, l Locale) string { return t.texts[key].In(l) }

// Text returns both languages of key.
func (t *Table) Text(key string) (Text, bool) {
	x, ok := t.texts[key]
	return x, ok
}

// Keys returns the table's keys in order.
func (t *Table) Keys() []string {
	keys := make([]string, 0, len(t.texts))
	for k := range t.texts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// In returns every text of the table in l's language, as a new map: what
// a template reads (.T.key) and what a script is given as JSON.
func (t *Table) In(l Locale) map[string]string {
	m := make(map[string]string, len(t.texts))
	for k, x := range t.texts {
		m[k] = x.In(l)
	}
	return m
}

// Tables are every table of the catalogue.
func Tables() []*Table {
	return []*Table{Frame, FrameScript, Loader, LinkForm, CheckoutSlip, Demo, Sandbox, Slip, Periods, Mail, Console}
}

// verbs returns the fmt verbs of a text in order ("%s", "%d", "%q"); "%%"
// is not one. Both languages of a text must have the same.
func verbs(s string) []string {
	var out []string
	for {
		i := strings.IndexByte(s, '%')
		if i < 0 || i == len(s)-1 {
			return out
		}
		s = s[i+1:]
		if s[0] == '%' {
			s = s[1:]
			continue
		}
		j := strings.IndexFunc(s, func(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' })
		if j < 0 {
			return out
		}
		out = append(out, "%"+s[:j+1])
		s = s[j+1:]
	}
}
