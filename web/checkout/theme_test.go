package checkout

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kessai/kessai/server/payment"
)

// TestCSSColour is the one colour rule: "#" and 3, 4, 6 or 8 hex digits.
func TestCSSColour(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"#abc", "#abc"}, {"#ABC", "#abc"}, {"#abcd", "#abcd"}, {"#1f5eff", "#1f5eff"}, {"#1F5EFF", "#1f5eff"},
		{"#1f5eff80", "#1f5eff80"}, {" #fff ", "#fff"}, {"\t#000000\n", "#000000"},
		{"", ""}, {"#", ""}, {"#ab", ""}, {"#abcde", ""}, {"#abcdefa", ""}, {"#abcdef012", ""}, {"abc", ""},
		{"1f5eff", ""}, {"##abc", ""}, {"#ggg", ""}, {"red", ""}, {"rgb(1,2,3)", ""}, {"#abc;}body{x:1", ""},
		{"#abc def", ""}, {"#ａｂｃ", ""}, {"# abc", ""}, {"#abc\x00", ""},
	} {
		if got := cssColour(tt.in); got != tt.want {
			t.Errorf("cssColour(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestThemeColoursOneRule: the widget frame's theme and the link form's
// accent take the same colours, by cssColour.
func TestThemeColoursOneRule(t *testing.T) {
	f := newFormsFixture(t, testGateway)
	h := f.gateway(t, testGateway)
	ctx := context.Background()
	for _, colour := range []string{"#ABCD", "#1f5eff80", "1f5eff", "red", "#fff;}body{display:none"} {
		want := cssColour(colour)
		if got := themeURL(payment.Theme{MainColor: colour}); got != "/widget/theme.css?c=--"+strings.TrimPrefix(want, "#")+"-----" {
			t.Errorf("theme for %q: %s", colour, got)
		}
		// A store of that colour, and its link form.
		settings := payment.DefaultStoreSettings()
		settings.Theme.MainColor = colour
		st := &payment.Store{ID: payment.NewID(), Name: "Coloured", PCICompliant: true, Settings: settings, CreatedOn: time.Now()}
		if err := f.db.Update(ctx, func(tx payment.Tx) error {
			m := &payment.Merchant{ID: payment.NewID(), Name: "M", Email: st.ID.String() + "@kessai.test", Verified: true, CreatedOn: st.CreatedOn}
			st.MerchantID = m.ID
			if err := tx.CreateMerchant(ctx, m); err != nil {
				return err
			}
			return tx.CreateStore(ctx, st)
		}); err != nil {
			t.Fatal(err)
		}
		tok, err := f.svc.Access.IssueStoreAppToken(ctx, st.ID, payment.NewAppToken{Domains: []string{"shop.example"}})
		if err != nil {
			t.Fatal(err)
		}
		rec := get(t, h, formURL("wc-checkout", with(baseParams(f), "appId", tok.JWT)))
		if rec.Code != 200 {
			t.Fatalf("%q: link form %d", colour, rec.Code)
		}
		style := regexp.MustCompile(`<style nonce="[^"]+">:root\{--accent:([^}]*)\}</style>`).FindStringSubmatch(rec.Body.String())
		switch {
		case want == "" && style != nil:
			t.Errorf("%q: the link form sets the accent %q", colour, style[1])
		case want != "" && (style == nil || style[1] != want):
			t.Errorf("%q: the link form's accent is %v, want %q", colour, style, want)
		}
	}
}
