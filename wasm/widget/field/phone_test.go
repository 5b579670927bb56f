package field

import (
	"testing"

	"github.com/kessai/kessai/wasm/card"
)

func TestJapanesePhone(t *testing.T) {
	for _, tt := range []struct {
		in, local, state string
	}{
		{"", "", card.ReasonRequired},
		{"   ", "", card.ReasonRequired},
		{"\u3000", "", card.ReasonRequired},
		// Mobile (11 digits) and fixed (10 digits) numbers as people write
		// them.
		{"090-1234-5678", "09012345678", ""},
		{"09012345678", "09012345678", ""},
		{"03-1234-5678", "0312345678", ""},
		{"03 1234 5678", "0312345678", ""},
		{"03(1234)5678", "0312345678", ""},
		{"（０３）１２３４－５６７８", "0312345678", ""},
		{"０９０ー１２３４ー５６７８", "09012345678", ""},
		{"090\u22121234\u22125678", "09012345678", ""},
		{"090–1234—5678", "09012345678", ""},
		{" 090-1234-5678 ", "09012345678", ""},
		// With the country code: the leading 0 comes back.
		{"+81 90-1234-5678", "09012345678", ""},
		{"+819012345678", "09012345678", ""},
		{"+81 (0)90 1234 5678", "09012345678", ""},
		{"＋８１ ３ １２３４ ５６７８", "0312345678", ""},
		{"+1 415 555 0100", "", ReasonOnlyJapanesePhone},
		{"+44 20 7946 0958", "", ReasonOnlyJapanesePhone},
		{"+8", "", ReasonOnlyJapanesePhone},
		{"+", "", ReasonInvalidPhone},
		{"+81", "", ReasonInvalidPhone},
		{"++81 90 1234 5678", "", ReasonInvalidPhone},
		{"090+1234", "", ReasonInvalidPhone},
		// The API's lengths: 10–11 digits with the leading 0, 9–10 without.
		{"090123456", "", ReasonInvalidPhone},
		{"0901234567", "0901234567", ""},
		{"090123456789", "", ReasonInvalidPhone},
		{"90123456", "", ReasonInvalidPhone},
		{"901234567", "901234567", ""},
		{"9012345678", "9012345678", ""},
		{"90123456789", "", ReasonInvalidPhone},
		// Anything else is not a phone number.
		{"---", "", ReasonInvalidPhone},
		{"090-1234-567a", "", ReasonInvalidPhone},
		{"090.1234.5678", "", ReasonInvalidPhone},
		{"090/1234/5678", "", ReasonInvalidPhone},
		{"tel:09012345678", "", ReasonInvalidPhone},
		{"٠٩٠١٢٣٤٥٦٧٨", "", ReasonInvalidPhone},
	} {
		local, state := JapanesePhone(tt.in)
		if local != tt.local || state != tt.state {
			t.Errorf("JapanesePhone(%q) = %q, %q; want %q, %q", tt.in, local, state, tt.local, tt.state)
		}
	}
}

func TestPhoneMessageKeys(t *testing.T) {
	for state, want := range map[string]string{
		"": "", card.ReasonRequired: "phone.required", ReasonInvalidPhone: "phone.invalid",
		ReasonOnlyJapanesePhone: "phone.foreign",
	} {
		if got := MessageKey("phone", state); got != want {
			t.Errorf("MessageKey(phone, %q) = %q, want %q", state, got, want)
		}
	}
}
