package card

import "testing"

func TestDigits(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"4242424242424242", "4242424242424242"},
		{"4242 4242 4242 4242", "4242424242424242"},
		{"4242-4242-4242-4242", "4242424242424242"},
		{" 4242\t4242\n4242 4242 ", "4242424242424242"},
		{"４２４２ ４２４２", "42424242"},
		{"4242ー4242－4242", "424242424242"},
		{"abc", ""},
		{"4a2b", "42"},
		{"\xff4\xfe2", "42"},
		{"٤٢", ""}, // Arabic-Indic digits are not card digits
	}
	for _, tt := range tests {
		if got := Digits(tt.in); got != tt.want {
			t.Errorf("Digits(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestLuhn(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"4242424242424242", true},
		{"4242 4242 4242 4242", true},
		{"4242424242424241", false},
		{"4242424242424243", false},
		{"4111111111111112", false},
		{"378282246310006", false},
		{"30569309025905", false},
		{"6011111111111118", false},
		{"79927398713", true},
		{"79927398710", false},
		{"0", true},
		{"", false},
		{"abc", false},
	}
	for _, tt := range tests {
		if got := Luhn(tt.in); got != tt.want {
			t.Errorf("Luhn(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestMasking(t *testing.T) {
	tests := []struct{ in, bin, last4 string }{
		{"4242424242424242", "424242", "4242"},
		{"3782 822463 10005", "378282", "0005"},
		{"5555-5555-5555-4444", "555555", "4444"},
		{"123456789012", "123456", "9012"},
		{"12345678901", "", ""}, // too short to be a card: revealing 10 of 11 digits is no masking
		{"4242", "", ""},
		{"", "", ""},
	}
	for _, tt := range tests {
		if got := BIN(tt.in); got != tt.bin {
			t.Errorf("BIN(%q) = %q, want %q", tt.in, got, tt.bin)
		}
		if got := LastFour(tt.in); got != tt.last4 {
			t.Errorf("LastFour(%q) = %q, want %q", tt.in, got, tt.last4)
		}
	}
}

func TestClamp(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"4242 4242 4242 4242 4242", "4242424242424242424"},
		{"37828224631000512", "378282246310005"},
		{"55555555555544441", "5555555555554444"},
		{"3056930902590412345", "3056930902590412345"},
		{"35", "35"},
		{"12345678901234567890123", "1234567890123456789"},
	}
	for _, tt := range tests {
		if got := Clamp(tt.in); got != tt.want {
			t.Errorf("Clamp(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
