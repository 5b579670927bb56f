package message

import (
	"slices"
	"strings"
	"testing"
	"unicode"
)

// japaneseScript reports whether s has kana or kanji.
func japaneseScript(s string) bool {
	for _, r := range s {
		if unicode.In(r, unicode.Hiragana, unicode.Katakana, unicode.Han) {
			return true
		}
	}
	return false
}

// TestEveryTextHasBothLanguages: every key of every table has an English
// and a Japanese text, neither empty, with the same blanks in the same
// order. The English has no Japanese in it, and the Japanese is Japanese
// unless it is the English on purpose ("you@example.com", "MM / YY").
func TestEveryTextHasBothLanguages(t *testing.T) {
	names := map[string]bool{}
	total := 0
	for _, table := range Tables() {
		if names[table.Name()] {
			t.Errorf("two tables are called %q", table.Name())
		}
		names[table.Name()] = true
		keys := table.Keys()
		if len(keys) == 0 {
			t.Errorf("%s: no texts", table.Name())
		}
		for _, k := range keys {
			total++
			x, ok := table.Text(k)
			what := table.Name() + " " + k
			switch {
			case !ok:
				t.Errorf("%s: listed but missing", what)
			case strings.TrimSpace(x.EN) == "":
				t.Errorf("%s: no English", what)
			case strings.TrimSpace(x.JA) == "":
				t.Errorf("%s: no Japanese", what)
			}
			if japaneseScript(x.EN) {
				t.Errorf("%s: the English %q has Japanese in it", what, x.EN)
			}
			if !japaneseScript(x.JA) && x.JA != x.EN {
				t.Errorf("%s: the Japanese %q is neither Japanese nor the English %q", what, x.JA, x.EN)
			}
			if en, ja := verbs(x.EN), verbs(x.JA); !slices.Equal(en, ja) {
				t.Errorf("%s: blanks %v in English, %v in Japanese", what, en, ja)
			}
			if x.In(English) != x.EN || x.In(Japanese) != x.JA || table.Get(k, Japanese) != x.JA {
				t.Errorf("%s: the languages are mixed up", what)
			}
		}
	}
	if total < 200 {
		t.Errorf("only %d texts: a table is missing from Tables", total)
	}
}

// TestCardFieldMessages: the card fields' messages the scripts look up by
// "<field>.<state>" are all there, and each field's required message names
// the field.
func TestCardFieldMessages(t *testing.T) {
	states := map[string][]string{
		"number": {"required", "incomplete", "invalid"},
		"exp":    {"required", "incomplete", "invalid", "expired"},
		"cvc":    {"required", "incomplete", "invalid"},
		"name":   {"required", "invalid"},
		"email":  {"required", "invalid"},
		"field":  {"generic"},
	}
	for field, list := range states {
		for _, st := range list {
			if _, ok := FrameScript.Text(field + "." + st); !ok {
				t.Errorf("FrameScript lacks %s.%s", field, st)
			}
		}
	}
	for field, name := range map[string]string{"number": "カード番号", "cvc": "セキュリティコード", "name": "カード名義人", "exp": "有効期限"} {
		if ja := FrameScript.Get(field+".required", Japanese); !strings.Contains(ja, name) {
			t.Errorf("%s.required %q does not name the field (%s)", field, ja, name)
		}
		if ja := FrameScript.Get(field+".required", Japanese); strings.HasSuffix(ja, "。") {
			t.Errorf("%s.required %q ends with 。 unlike a field message", field, ja)
		}
	}
}

func TestTableAccess(t *testing.T) {
	if got := Frame.Get("no such key", Japanese); got != "" {
		t.Errorf("a missing key gives %q", got)
	}
	if _, ok := Frame.Text("no such key"); ok {
		t.Error("Text found a missing key")
	}
	m := Frame.In(Japanese)
	if m["title"] != "カード決済" || Frame.In(English)["title"] != "Card payment" {
		t.Errorf("In: %q", m["title"])
	}
	m["title"] = "changed"
	if Frame.Get("title", Japanese) != "カード決済" {
		t.Error("changing what In returned changed the table")
	}
	if len(m) != len(Frame.Keys()) {
		t.Errorf("In has %d texts, the table %d", len(m), len(Frame.Keys()))
	}
	if (Text{EN: "a", JA: "あ"}).In("fr") != "a" || (Text{EN: "a", JA: "あ"}).In("") != "a" {
		t.Error("a locale other than Japanese is not English")
	}
}

func TestVerbs(t *testing.T) {
	for _, tt := range []struct {
		s    string
		want []string
	}{
		{"Pay %s", []string{"%s"}},
		{"%s を支払う", []string{"%s"}},
		{"amount must be between %s and %s.", []string{"%s", "%s"}},
		{"currency %q is not supported.", []string{"%q"}},
		{"%d items", []string{"%d"}},
		{"100%% sure, %-5d", []string{"%-5d"}},
		{"no blanks", nil},
		{"trailing %", nil},
	} {
		if got := verbs(tt.s); !slices.Equal(got, tt.want) {
			t.Errorf("verbs(%q) = %v, want %v", tt.s, got, tt.want)
		}
	}
}
