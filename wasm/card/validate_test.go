package card

import (
	"strings"
	"testing"
)

func goodInput() Input {
	return Input{
		Number:     "4242 4242 4242 4242",
		ExpMonth:   12,
		ExpYear:    2027,
		CVV:        "123",
		Cardholder: "TARO YAMADA",
	}
}

// assertProblems compares in order, because Validate promises field order.
func assertProblems(t *testing.T, got []Problem, want ...Problem) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("problems = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("problems = %v, want %v", got, want)
		}
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Input)
		want   []Problem
	}{
		{"valid", func(*Input) {}, nil},
		{"two-digit year", func(in *Input) { in.ExpYear = 27 }, nil},
		{"expires this month", func(in *Input) { in.ExpMonth, in.ExpYear = 6, 2025 }, nil},
		{"full-width digits and dashes", func(in *Input) {
			in.Number, in.CVV = "４２４２-４２４２-４２４２-４２４２", "１２３"
		}, nil},
		{"everything missing", func(in *Input) { *in = Input{} }, []Problem{
			{FieldCardNumber, ReasonRequired},
			{FieldExpMonth, ReasonRequired},
			{FieldExpYear, ReasonRequired},
			{FieldCVV, ReasonRequired},
			{FieldCardholder, ReasonRequired},
		}},
		{"blank number", func(in *Input) { in.Number = " - " }, []Problem{{FieldCardNumber, ReasonRequired}}},
		{"Luhn failure", func(in *Input) { in.Number = "4242424242424241" }, []Problem{{FieldCardNumber, ReasonInvalidCardNumber}}},
		{"too short", func(in *Input) { in.Number = "424242424242424" }, []Problem{{FieldCardNumber, ReasonInvalidCardNumber}}},
		{"too long", func(in *Input) { in.Number = "42424242424242424242" }, []Problem{{FieldCardNumber, ReasonInvalidCardNumber}}},
		{"visa 17 digits", func(in *Input) { in.Number = "42424242424242426" }, []Problem{{FieldCardNumber, ReasonInvalidCardNumber}}},
		{"mastercard 19 digits", func(in *Input) { in.Number = "5555555555554444000" }, []Problem{{FieldCardNumber, ReasonInvalidCardNumber}}},
		{"amex 16 digits", func(in *Input) { in.Number, in.CVV = "3782822463100055", "1234" }, []Problem{{FieldCardNumber, ReasonInvalidCardNumber}}},
		{"letters in number", func(in *Input) { in.Number = "4242 4242 4242 4242x" }, []Problem{{FieldCardNumber, ReasonInvalidCardNumber}}},
		{"letters only", func(in *Input) { in.Number = "abcd" }, []Problem{{FieldCardNumber, ReasonInvalidCardNumber}}},
		{"expired last month", func(in *Input) { in.ExpMonth, in.ExpYear = 5, 2025 }, []Problem{{FieldExpYear, ReasonInvalidExpiration}}},
		{"expired last year", func(in *Input) { in.ExpMonth, in.ExpYear = 12, 24 }, []Problem{{FieldExpYear, ReasonInvalidExpiration}}},
		{"month 13", func(in *Input) { in.ExpMonth = 13 }, []Problem{{FieldExpMonth, ReasonInvalidExpiration}}},
		{"negative month", func(in *Input) { in.ExpMonth = -1 }, []Problem{{FieldExpMonth, ReasonInvalidExpiration}}},
		{"month 13, past year", func(in *Input) { in.ExpMonth, in.ExpYear = 13, 2020 }, []Problem{
			{FieldExpMonth, ReasonInvalidExpiration},
			{FieldExpYear, ReasonInvalidExpiration},
		}},
		{"month missing, year fine", func(in *Input) { in.ExpMonth = 0 }, []Problem{{FieldExpMonth, ReasonRequired}}},
		{"year too far", func(in *Input) { in.ExpYear = 2046 }, []Problem{{FieldExpYear, ReasonInvalidExpiration}}},
		{"year 20 ahead", func(in *Input) { in.ExpYear = 2045 }, nil},
		{"cvv too short", func(in *Input) { in.CVV = "12" }, []Problem{{FieldCVV, ReasonInvalidCVV}}},
		{"cvv too long", func(in *Input) { in.CVV = "1234" }, []Problem{{FieldCVV, ReasonInvalidCVV}}},
		{"cvv letters", func(in *Input) { in.CVV = "12a" }, []Problem{{FieldCVV, ReasonInvalidCVV}}},
		{"cvv inner space", func(in *Input) { in.CVV = "1 23" }, []Problem{{FieldCVV, ReasonInvalidCVV}}},
		{"cvv surrounding space", func(in *Input) { in.CVV = " 123 " }, nil},
		{"amex with 4-digit cvv", func(in *Input) { in.Number, in.CVV = "378282246310005", "1234" }, nil},
		{"amex with 3-digit cvv", func(in *Input) { in.Number, in.CVV = "378282246310005", "123" }, []Problem{{FieldCVV, ReasonInvalidCVV}}},
		{"unknown brand takes 4", func(in *Input) { in.Number, in.CVV = "", "1234" }, []Problem{{FieldCardNumber, ReasonRequired}}},
		{"unknown brand takes 3", func(in *Input) { in.Number = "" }, []Problem{{FieldCardNumber, ReasonRequired}}},
		{"unknown brand 5 digits", func(in *Input) { in.Number, in.CVV = "", "12345" }, []Problem{
			{FieldCardNumber, ReasonRequired},
			{FieldCVV, ReasonInvalidCVV},
		}},
		{"cardholder blank", func(in *Input) { in.Cardholder = "  " }, []Problem{{FieldCardholder, ReasonRequired}}},
		{"cardholder digits", func(in *Input) { in.Cardholder = "R2D2" }, []Problem{{FieldCardholder, ReasonInvalidFormat}}},
		{"cardholder 65 chars", func(in *Input) { in.Cardholder = strings.Repeat("A", 65) }, []Problem{{FieldCardholder, ReasonInvalidFormat}}},
		{"cardholder 64 chars", func(in *Input) { in.Cardholder = strings.Repeat("A", 64) }, nil},
		{"cardholder 64 kana", func(in *Input) { in.Cardholder = strings.Repeat("ア", 64) }, nil},
		{"several problems", func(in *Input) {
			in.Number, in.ExpMonth, in.CVV, in.Cardholder = "4242424242424241", 0, "", "<script>"
		}, []Problem{
			{FieldCardNumber, ReasonInvalidCardNumber},
			{FieldExpMonth, ReasonRequired},
			{FieldCVV, ReasonRequired},
			{FieldCardholder, ReasonInvalidFormat},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := goodInput()
			tt.change(&in)
			assertProblems(t, Validate(in, testNow), tt.want...)
		})
	}
}

func TestNumberState(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ReasonRequired},
		{"  ", ReasonRequired},
		{"4", StateIncompleteNumber},
		{"4242 4242 4242", StateIncompleteNumber},
		{"4242424242424", ReasonInvalidCardNumber},        // 13 digits: a Visa length, so Luhn decides
		{"4222222222222", ""},                             // a real 13-digit Visa test number
		{"4242424242424242", ""},                          // 16
		{"4242424242424241", ReasonInvalidCardNumber},     // 16, valid length, Luhn fails
		{"42424242424242424", StateIncompleteNumber},      // 17: Visa may have 19
		{"4242424242424242424", ReasonInvalidCardNumber},  // 19, Luhn fails
		{"42424242424242424242", ReasonInvalidCardNumber}, // 20
		{"378282246310005", ""},
		{"37828224631000", StateIncompleteNumber},        // 14 of 15
		{"555555555555444", StateIncompleteNumber},       // 15 of 16
		{"35", StateIncompleteNumber},                    // brand not yet known
		{"4242 4242 4242 4242\u00a0", ""},                // a no-break space pasted from a web page
		{"4242.4242.4242.4242", ReasonInvalidCardNumber}, // a dot is not a card separator
		{"4242 4242 4242 424２", ""},                      // one full-width digit
		{"4242ー4242ー4242ー4242", ""},                      // the Japanese keyboard's "-"
		{"+4242424242424242", ReasonInvalidCardNumber},
		{"000000000000", ""},                      // 12 digits, unknown brand, passes Luhn: allowed by the rules
		{"123456789012", ReasonInvalidCardNumber}, // 12, unknown, Luhn fails
		{"12345678901", StateIncompleteNumber},
		{"1234567890123456789012345", ReasonInvalidCardNumber},
	}
	for _, tt := range tests {
		if got := NumberState(tt.in); got != tt.want {
			t.Errorf("NumberState(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCVVState(t *testing.T) {
	tests := []struct {
		cvv   string
		brand Brand
		want  string
	}{
		{"123", Visa, ""},
		{"1234", AmericanExpress, ""},
		{"", Visa, ReasonRequired},
		{"1", Visa, StateIncompleteCVV},
		{"12", Visa, StateIncompleteCVV},
		{"123", AmericanExpress, StateIncompleteCVV},
		{"1234", Visa, ReasonInvalidCVV},
		{"12345", AmericanExpress, ReasonInvalidCVV},
		{"12a", Visa, ReasonInvalidCVV},
		{"1-2", Visa, ReasonInvalidCVV},
		{"123", Unknown, ""},
		{"1234", Unknown, ""},
		{"12", Unknown, StateIncompleteCVV},
		{"12345", Unknown, ReasonInvalidCVV},
		{"123", Brand("bogus"), ""},
		{"１２３", JCB, ""},
	}
	for _, tt := range tests {
		if got := CVVState(tt.cvv, tt.brand); got != tt.want {
			t.Errorf("CVVState(%q, %s) = %q, want %q", tt.cvv, tt.brand, got, tt.want)
		}
	}
}

func TestCardholderState(t *testing.T) {
	tests := []struct{ in, want string }{
		{"TARO YAMADA", ""},
		{"Taro Yamada", ""},
		{"  Taro Yamada  ", ""},
		{"J. R. R. Tolkien", ""},
		{"Mary-Jane O'Neil", ""},
		{"Mary-Jane O’Neil", ""},
		{"José Müller", ""},
		{"Jose\u0301 Mu\u0308ller", ""}, // decomposed accents
		{"山田 太郎", ""},
		{"山田\u3000太郎", ""},
		{"ヤマダ・タロウ", ""},
		{"ｙａｍａｄａ", ""},
		{"Ольга Иванова", ""},
		{"X", ""},
		{"", ReasonRequired},
		{" \t\u3000", ReasonRequired},
		{"...", ReasonInvalidFormat},
		{"- '", ReasonInvalidFormat},
		{"Taro2", ReasonInvalidFormat},
		{"Taro_Yamada", ReasonInvalidFormat},
		{"Taro\tYamada", ReasonInvalidFormat},
		{"Taro\nYamada", ReasonInvalidFormat},
		{"Taro Yamada 🙂", ReasonInvalidFormat},
		{"Taro@example.com", ReasonInvalidFormat},
		{"Taro\x00", ReasonInvalidFormat},
		{"Taro\xff", ReasonInvalidFormat},
		{strings.Repeat("é", 64), ""},
		{strings.Repeat("é", 65), ReasonInvalidFormat},
	}
	for _, tt := range tests {
		if got := CardholderState(tt.in); got != tt.want {
			t.Errorf("CardholderState(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
