package card

import "testing"

func TestFormat(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"4", "4"},
		{"4242", "4242"},
		{"42424", "4242 4"},
		{"42424242", "4242 4242"},
		{"4242424242424242", "4242 4242 4242 4242"},
		{"4242424242424242424", "4242 4242 4242 4242 424"},
		{"4242-4242 4242x4242", "4242 4242 4242 4242"},
		{"37", "37"},
		{"37828", "3782 8"},
		{"3782822463", "3782 822463"},
		{"37828224631", "3782 822463 1"},
		{"378282246310005", "3782 822463 10005"},
		{"3782822463100051234", "3782 822463 10005 1234"}, // beyond the pattern: fours, nothing lost
		{"30569309025904", "3056 930902 5904"},
		{"305693090", "3056 93090"},
		{"305693090259041", "3056 9309 0259 041"}, // 15+ digit Diners: like the others
		{"3530111333300000", "3530 1113 3330 0000"},
		{"6200000000000005", "6200 0000 0000 0005"},
		{"123456789012345678901234", "1234 5678 9012 3456 789 0123 4"},
		{"４２４２４２", "4242 42"},
	}
	for _, tt := range tests {
		if got := Format(tt.in); got != tt.want {
			t.Errorf("Format(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestFormatCaret(t *testing.T) {
	tests := []struct {
		number string
		index  int
		want   int
	}{
		{"", 0, 0},
		{"", 3, 0},
		{"4242424242424242", -1, 0},
		{"4242424242424242", 0, 0},
		{"4242424242424242", 3, 3},
		{"4242424242424242", 4, 4}, // at the boundary: before the space
		{"4242424242424242", 5, 6},
		{"4242424242424242", 8, 9},
		{"4242424242424242", 9, 11},
		{"4242424242424242", 16, 19},
		{"4242424242424242", 99, 19},
		{"42424", 5, 6},
		{"4242", 4, 4},
		{"378282246310005", 4, 4},
		{"378282246310005", 5, 6},
		{"378282246310005", 10, 11},
		{"378282246310005", 11, 13},
		{"378282246310005", 15, 17},
		{"30569309025904", 11, 13},
		{"3056-9309-0259-04", 5, 6},
	}
	for _, tt := range tests {
		got := FormatCaret(tt.number, tt.index)
		if got != tt.want {
			t.Errorf("FormatCaret(%q, %d) = %d, want %d", tt.number, tt.index, got, tt.want)
		}
	}
}

func TestDigitIndex(t *testing.T) {
	tests := []struct {
		input string
		caret int
		want  int
	}{
		{"", 0, 0},
		{"", 5, 0},
		{"4242 4242", -1, 0},
		{"4242 4242", 0, 0},
		{"4242 4242", 4, 4},
		{"4242 4242", 5, 4},
		{"4242 4242", 6, 5},
		{"4242 4242", 99, 8},
		{"42-42", 3, 2},
		{"４２４２", 2, 2},  // one UTF-16 unit each
		{"😀4242", 1, 0}, // the caret cannot sit inside a surrogate pair
		{"😀4242", 2, 0},
		{"😀4242", 3, 1},
		{"é42", 2, 1},
	}
	for _, tt := range tests {
		if got := DigitIndex(tt.input, tt.caret); got != tt.want {
			t.Errorf("DigitIndex(%q, %d) = %d, want %d", tt.input, tt.caret, got, tt.want)
		}
	}
}

// TestEditCycle plays what the widget does on every input event: read the
// field and caret, count digits before the caret, reformat, put the caret
// back. The caret must land right after the digit just typed.
func TestEditCycle(t *testing.T) {
	tests := []struct {
		name      string
		field     string // after the browser applied the keystroke
		caret     int
		wantField string
		wantCaret int
	}{
		{"type fifth digit", "42424", 5, "4242 4", 6},
		{"type in the middle", "4242 14242", 6, "4242 1424 2", 6},
		{"type at a group boundary", "42429 4242", 5, "4242 9424 2", 6},
		{"delete a digit", "4242 424", 8, "4242 424", 8},
		{"delete from the middle", "424 4242", 3, "4244 242", 3},
		{"paste with dashes", "4242-4242-4242-4242", 19, "4242 4242 4242 4242", 19},
		{"amex reflow", "3782822", 7, "3782 822", 8},
		{"full-width", "４２４２４", 5, "4242 4", 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			idx := DigitIndex(tt.field, tt.caret)
			field := Format(Clamp(tt.field))
			caret := FormatCaret(field, idx)
			if field != tt.wantField || caret != tt.wantCaret {
				t.Errorf("got %q caret %d, want %q caret %d", field, caret, tt.wantField, tt.wantCaret)
			}
		})
	}
}
