package field

import (
	"testing"
	"time"

	"github.com/kessai/kessai/wasm/card"
	"github.com/kessai/kessai/web/message"
)

// TestMessageKeys: every state each field can be in names a text the
// frame gives its scripts, and it is the text the widget has always shown
// for it.
func TestMessageKeys(t *testing.T) {
	now := time.Date(2026, 6, 15, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		field, state, en, ja string
	}{
		{"number", card.NumberState(""), "Enter the card number.", "カード番号を入力してください"},
		{"number", card.NumberState("4242"), "The card number is incomplete.", "カード番号の桁数が足りません"},
		{"number", card.NumberState("4242424242424241"), "The card number is not valid.", "カード番号が正しくありません"},
		{"exp", card.ExpiryState("", now), "Enter the expiration date as MM/YY.", "有効期限を MM/YY の形式で入力してください"},
		{"exp", card.ExpiryState("1", now), "Enter the expiration date as MM/YY.", "有効期限を MM/YY の形式で入力してください"},
		{"exp", card.ExpiryState("13 / 30", now), "The expiration date is not valid.", "有効期限が正しくありません"},
		{"exp", card.ExpiryState("01 / 20", now), "This card has expired.", "このカードは有効期限が切れています"},
		{"cvc", card.CVVState("", card.Visa), "Enter the security code.", "セキュリティコードを入力してください"},
		{"cvc", card.CVVState("1", card.Visa), "The security code is incomplete.", "セキュリティコードの桁数が足りません"},
		{"cvc", card.CVVState("12345", card.Visa), "The security code is not valid.", "セキュリティコードが正しくありません"},
		{"name", card.CardholderState(""), "Enter the cardholder name.", "カード名義人を入力してください"},
		{"name", card.CardholderState("1234"), "Enter the cardholder name as shown on the card, up to 64 characters.",
			"カード名義人はカードに記載のとおり64文字以内で入力してください"},
		{"number", "A_STATE_ADDED_LATER", "Please check this field.", "入力内容をご確認ください"},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		key := MessageKey(tt.field, tt.state)
		if seen[tt.field+" "+tt.state] {
			t.Errorf("%s %s is tested twice: a state function did not give the state meant", tt.field, tt.state)
		}
		seen[tt.field+" "+tt.state] = true
		text, ok := message.FrameScript.Text(key)
		if !ok {
			t.Errorf("%s in state %q: key %q is not in the catalogue", tt.field, tt.state, key)
			continue
		}
		if text.EN != tt.en || text.JA != tt.ja {
			t.Errorf("%s in state %q (%s) says %q / %q, want %q / %q", tt.field, tt.state, key, text.EN, text.JA, tt.en, tt.ja)
		}
	}
	if got := MessageKey("number", ""); got != "" {
		t.Errorf("no problem has a message: %q", got)
	}
	if _, ok := message.FrameScript.Text(GenericMessageKey); !ok {
		t.Errorf("%s is not in the catalogue", GenericMessageKey)
	}
}
