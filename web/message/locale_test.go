package message

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Locale // "" for none
	}{
		{"ja", Japanese}, {"JA", Japanese}, {"ja-JP", Japanese}, {"ja_JP", Japanese}, {"ja-jp", Japanese},
		{"ja-Jpan-JP", Japanese}, {"ja-JP_u", Japanese}, {"Ja-jP", Japanese},
		{"en", English}, {"en-US", English}, {"en_GB", English}, {"en-Latn-US", English}, {"en-001", English},
		{"", ""}, {"auto", ""}, {"AUTO", ""}, {"fr", ""}, {"de-DE", ""}, {"jv", ""}, {"jam", ""}, {"jpn", ""},
		{"japanese", ""}, {"english", ""}, {" ja", ""}, {"ja ", ""}, {"\u00a0ja", ""},
		{"ja-", ""}, {"ja--JP", ""}, {"ja-JP!", ""}, {"ja JP", ""}, {"ja;q=1", ""}, {"ja,en", ""}, {"-ja", ""},
		{"ja-toolongsubtag", ""}, {"ja-12345678", Japanese}, {"ja-123456789", ""}, {"日本語", ""}, {"ja\x00", ""},
		{"ja-" + strings.Repeat("x", 70), ""}, {"ja" + strings.Repeat("-x", 1<<16), Japanese}, {strings.Repeat("-", 1<<16), ""},
	} {
		got, ok := Parse(tt.in)
		if got != tt.want || ok != (tt.want != "") {
			in := tt.in
			if len(in) > 40 {
				in = in[:40] + "…"
			}
			t.Errorf("Parse(%q) = %q, %v; want %q", in, got, ok, tt.want)
		}
	}
}

func TestNegotiate(t *testing.T) {
	long := strings.Repeat("fr;q=0.9, ", 40) + "ja"
	for _, tt := range []struct {
		explicit, header string
		want             Locale
	}{
		// The explicit value wins when it names a language.
		{"ja", "en", Japanese},
		{"en-US", "ja", English},
		{"japanese", "", English},
		{"japanese", "ja", Japanese},
		{"JA_jp", "", Japanese},
		// Otherwise the header decides.
		{"", "", English},
		{"auto", "ja", Japanese},
		{"fr", "ja", Japanese},
		{"jam", "ja", Japanese},
		{"", "ja-JP,ja;q=0.9,en;q=0.8", Japanese},
		{"", "en-US,en;q=0.9,ja;q=0.5", English},
		{"", "fr-FR, ja;q=0.7, en;q=0.6", Japanese},
		{"", "fr, en;q=0.8, ja;q=0.9", Japanese},
		{"", "en;q=0.4,ja;q=0.8", Japanese},
		{"", "jv, en", English},
		{"", "fr,de", English},
		{"de", "de", English},
		// Ties go to the first listed; no weight is weight 1.
		{"", "en, ja", English},
		{"", "ja, en", Japanese},
		{"", "en;q=0.5, ja;q=0.500", English},
		{"", "ja;q=1.000, en", Japanese},
		// Weight 0 refuses a language; the wildcard names none.
		{"", "ja;q=0, en;q=0.1", English},
		{"", "ja;q=0.000", English},
		{"", "en;q=0, ja;q=0.001", Japanese},
		{"", "*, ja;q=0.5", Japanese},
		{"", "*;q=1", English},
		// Weights that are not qvalues are ignored with their range.
		{"", "ja;q=1.5, en;q=0.1", English},
		{"", "ja;q=2", English},
		{"", "ja;q=-1", English},
		{"", "ja;q=0.0001, en;q=0.1", English},
		{"", "ja;q=NaN", English},
		{"", "ja;q=Inf", English},
		{"", "ja;q=1e0", English},
		{"", "ja;q=0x1", English},
		{"", "ja;q=", English},
		{"", "ja;q=.5", English},
		{"", "ja;q=01", English},
		{"", "en;q=0.1, ja;q=0.", English},
		{"", "en;q=0.1, ja;q=1.", Japanese},
		{"", "en;q=1.0, ja;q=1", English},
		{"", "en;q=0.1, ja;Q=0.9", Japanese},
		{"", "en;q=0.1, ja;level=1;q=0.9", Japanese},
		// Malformed tags are ignored.
		{"", "ja_JP", English},
		{"", "ja-, en;q=0.1", English},
		{"", "j@, ja-JP", Japanese},
		{"", "ja-JP-toolongsubtag", English},
		{"", "日本語, ja;q=0.1", Japanese},
		// Hostile headers: whitespace, empty elements, junk, and length.
		{"", " \t ja \t ; \t q=0.9 , en;q=0.8", Japanese},
		{"", ",,,, ,ja", Japanese},
		{"", ";;;;", English},
		{"", "ja;;;;q=0.9;;", Japanese},
		{"", "\x00ja, en", English},
		{"", "ja\r\n", English},
		{"", strings.Repeat(",", 1<<20) + "ja", Japanese},
		{"", long, English},
		{"", strings.Repeat("x", 1<<20), English},
		{"", "ja;q=" + strings.Repeat("0", 1<<16), English},
	} {
		h := tt.header
		if len(h) > 60 {
			h = h[:60] + "…"
		}
		if got := Negotiate(tt.explicit, tt.header); got != tt.want {
			t.Errorf("Negotiate(%q, %q) = %q, want %q", tt.explicit, h, got, tt.want)
		}
	}
}
