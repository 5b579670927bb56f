package field

import (
	"testing"

	"github.com/kessai/kessai/wasm/card"
)

func TestFormatExpiry(t *testing.T) {
	tests := []struct {
		in       string
		deleting bool
		want     string
	}{
		{"", false, ""},
		{"0", false, "0"},
		{"1", false, "1"},
		{"4", false, "04 / "},
		{"1/", false, "01 / "},
		{"1 ", false, "01 / "},
		{"0/", false, "0"},
		{"12", false, "12 / "},
		{"12", true, "12"},
		{"12 /", true, "12"},
		{"13", false, "01 / 3"},
		{"19", false, "01 / 9"},
		{"10", false, "10 / "},
		{"12 / 2", false, "12 / 2"},
		{"12 / 27", false, "12 / 27"},
		{"1227", false, "12 / 27"},
		{"12 / 273", false, "12 / 27"},
		{"12/2027", false, "12 / 27"},
		{"122027", false, "12 / 27"},
		{"12 / 2", true, "12 / 2"},
		{"１２／２７", false, "12 / 27"},
		{"4 / ", true, "4"},
	}
	for _, tt := range tests {
		if got := FormatExpiry(tt.in, tt.deleting); got != tt.want {
			t.Errorf("FormatExpiry(%q, %v) = %q, want %q", tt.in, tt.deleting, got, tt.want)
		}
	}
}

func TestCaretAfterDigits(t *testing.T) {
	tests := []struct {
		s    string
		k    int
		want int
	}{
		{"12 / 27", 0, 0},
		{"12 / 27", 1, 1},
		{"12 / 27", 2, 2},
		{"12 / 27", 3, 6},
		{"12 / 27", 4, 7},
		{"12 / 27", 9, 7},
		{"", 2, 0},
	}
	for _, tt := range tests {
		if got := CaretAfterDigits(tt.s, tt.k); got != tt.want {
			t.Errorf("CaretAfterDigits(%q, %d) = %d, want %d", tt.s, tt.k, got, tt.want)
		}
	}
}

func TestCVVMax(t *testing.T) {
	if CVVMax(card.AmericanExpress) != 4 || CVVMax(card.Visa) != 3 || CVVMax(card.Unknown) != 4 {
		t.Fatal("CVVMax")
	}
}

func TestAutoAdvance(t *testing.T) {
	tests := []struct {
		b    card.Brand
		n    int
		want bool
	}{
		{card.Visa, 13, false},
		{card.Visa, 16, true},
		{card.Visa, 19, true},
		{card.AmericanExpress, 15, true},
		{card.Mastercard, 16, true},
		{card.DinersClub, 14, false},
	}
	for _, tt := range tests {
		if got := AutoAdvance(tt.b, tt.n); got != tt.want {
			t.Errorf("AutoAdvance(%s, %d) = %v", tt.b, tt.n, got)
		}
	}
}
