package card

import (
	"strings"
	"testing"
	"unicode"
)

var allReasons = []string{
	ReasonRequired, ReasonInvalidCardNumber, ReasonInvalidExpiration, ReasonInvalidCVV, ReasonInvalidFormat,
	StateIncompleteNumber, StateIncompleteExpiry, StateIncompleteCVV, StateExpired,
}

var allFields = []string{FieldCardNumber, FieldExpMonth, FieldExpYear, FieldCVV, FieldCardholder}

func isJapaneseText(s string) bool {
	for _, r := range s {
		if unicode.In(r, unicode.Hiragana, unicode.Katakana, unicode.Han) {
			return true
		}
	}
	return false
}

func assertMessage(t *testing.T, what, en, ja string) {
	t.Helper()
	if en == "" || ja == "" {
		t.Fatalf("%s: empty message (en %q, ja %q)", what, en, ja)
	}
	if isJapaneseText(en) {
		t.Errorf("%s: English message %q is Japanese", what, en)
	}
	if !isJapaneseText(ja) {
		t.Errorf("%s: Japanese message %q is not Japanese", what, ja)
	}
	if strings.HasSuffix(ja, "。") {
		t.Errorf("%s: Japanese message %q ends with 。 unlike the others", what, ja)
	}
}

func TestMessagesExist(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range allReasons {
		en, ja := Message(r, "en"), Message(r, "ja")
		assertMessage(t, r, en, ja)
		if seen[en] || seen[ja] {
			t.Errorf("%s: message shared with another reason", r)
		}
		seen[en], seen[ja] = true, true
	}
	if len(reasonMessages) != len(allReasons) {
		t.Errorf("reasonMessages has %d entries, tests know %d", len(reasonMessages), len(allReasons))
	}
	for _, f := range allFields {
		for _, r := range allReasons {
			p := Problem{Field: f, Reason: r}
			assertMessage(t, f+" "+r, p.Message("en"), p.Message("ja-JP"))
		}
	}
}

func TestMessageLocale(t *testing.T) {
	ja := "カード番号が正しくありません"
	en := "The card number is not valid."
	tests := []struct{ locale, want string }{
		{"ja", ja},
		{"JA", ja},
		{"ja-JP", ja},
		{"ja_JP", ja},
		{" ja-jp ", ja},
		{"ja-JP,en;q=0.8", ja},
		{"ja;q=0.9", ja},
		{"en", en},
		{"en-US,ja;q=0.9", en},
		{"", en},
		{"jv", en},
		{"jam", en},
		{"fr", en},
	}
	for _, tt := range tests {
		if got := Message(ReasonInvalidCardNumber, tt.locale); got != tt.want {
			t.Errorf("Message(INVALID_CARD_NUMBER, %q) = %q, want %q", tt.locale, got, tt.want)
		}
	}
}

func TestMessageSpecifics(t *testing.T) {
	tests := []struct {
		got, want string
	}{
		{Message("SOMETHING_NEW", "en"), "Please check this field."},
		{Message("SOMETHING_NEW", "ja"), "入力内容をご確認ください"},
		{Problem{FieldCardNumber, ReasonRequired}.Message("ja"), "カード番号を入力してください"},
		{Problem{FieldCVV, ReasonRequired}.Message("ja"), "セキュリティコードを入力してください"},
		{Problem{FieldExpYear, ReasonInvalidExpiration}.Message("ja"), "有効期限が正しくありません"},
		{Problem{FieldCardholder, ReasonInvalidFormat}.Message("en"), "Enter the cardholder name as shown on the card, up to 64 characters."},
		{Problem{"other", ReasonRequired}.Message("en"), "This field is required."},
		{Message(StateExpired, "ja"), "このカードは有効期限が切れています"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}
