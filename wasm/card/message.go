package card

import "strings"

// message is one text in the two languages the checkout speaks.
type message struct{ en, ja string }

// reasonMessages are the generic texts, one per wire reason and widget state.
// The Japanese is what a Japanese checkout page says: polite, short, no
// trailing full stop.
var reasonMessages = map[string]message{
	ReasonRequired:          {"This field is required.", "入力してください"},
	ReasonInvalidCardNumber: {"The card number is not valid.", "カード番号が正しくありません"},
	ReasonInvalidExpiration: {"The expiration date is not valid.", "有効期限が正しくありません"},
	ReasonInvalidCVV:        {"The security code is not valid.", "セキュリティコードが正しくありません"},
	ReasonInvalidFormat:     {"The format is not valid.", "入力形式が正しくありません"},

	StateIncompleteNumber: {"The card number is incomplete.", "カード番号の桁数が足りません"},
	StateIncompleteExpiry: {"Enter the expiration date as MM/YY.", "有効期限を MM/YY の形式で入力してください"},
	StateIncompleteCVV:    {"The security code is incomplete.", "セキュリティコードの桁数が足りません"},
	StateExpired:          {"This card has expired.", "このカードは有効期限が切れています"},
}

// fallbackMessage is shown for a reason this table does not know (one the
// server added later), because an empty error line is worse than a vague one.
var fallbackMessage = message{"Please check this field.", "入力内容をご確認ください"}

// requiredMessages name the field, which "this field is required" cannot do
// once the message is read out of context (a screen reader, a summary at
// the top of the form).
var requiredMessages = map[string]message{
	FieldCardNumber: {"Enter the card number.", "カード番号を入力してください"},
	FieldExpMonth:   {"Enter the expiration month.", "有効期限（月）を入力してください"},
	FieldExpYear:    {"Enter the expiration year.", "有効期限（年）を入力してください"},
	FieldCVV:        {"Enter the security code.", "セキュリティコードを入力してください"},
	FieldCardholder: {"Enter the cardholder name.", "カード名義人を入力してください"},
}

// cardholderFormat is the one INVALID_FORMAT this package reports; it says
// what to do, which "the format is not valid" does not.
var cardholderFormat = message{
	"Enter the cardholder name as shown on the card, up to 64 characters.",
	"カード名義人はカードに記載のとおり64文字以内で入力してください",
}

// Message returns the text for a reason (a wire reason or a widget state) in
// the language of locale: Japanese for "ja" and its variants ("ja-JP",
// "ja_JP", or an Accept-Language value whose first choice is Japanese),
// English for anything else. An unknown reason gets a generic text rather
// than none.
func Message(reason, locale string) string {
	m, ok := reasonMessages[reason]
	if !ok {
		m = fallbackMessage
	}
	return m.in(locale)
}

// Message returns the text for p in the language of locale (see the
// function Message), naming the field where the reason alone would not say
// which one is meant.
func (p Problem) Message(locale string) string {
	switch {
	case p.Reason == ReasonRequired:
		if m, ok := requiredMessages[p.Field]; ok {
			return m.in(locale)
		}
	case p.Reason == ReasonInvalidFormat && p.Field == FieldCardholder:
		return cardholderFormat.in(locale)
	}
	return Message(p.Reason, locale)
}

func (m message) in(locale string) string {
	if japanese(locale) {
		return m.ja
	}
	return m.en
}

// japanese reports whether locale's language is Japanese. Only the primary
// language subtag counts, so "jv" (Javanese) and "jam" are not mistaken
// for it.
func japanese(locale string) bool {
	l := strings.TrimSpace(locale)
	if i := strings.IndexAny(l, "-_,;"); i >= 0 {
		l = l[:i]
	}
	return strings.EqualFold(l, "ja")
}
