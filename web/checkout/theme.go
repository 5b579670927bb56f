package checkout

import (
	"net/http"
	"strings"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/web/asset"
)

// cssColour is the one rule for a store's theme colours, wherever a page
// writes one into CSS: "#" and 3, 4, 6 or 8 hexadecimal digits — #rgb,
// #rgba, #rrggbb, #rrggbbaa, CSS's hex colour forms — in either case, with
// spaces around it forgiven. It returns the colour in lower case, or ""
// for anything else: a colour name, rgb(), hex digits without "#", or text
// meant to break out of a stylesheet.
func cssColour(c string) string {
	c = strings.TrimSpace(c)
	hex, ok := strings.CutPrefix(c, "#")
	if !ok {
		return ""
	}
	switch len(hex) {
	case 3, 4, 6, 8:
	default:
		return ""
	}
	hex = strings.ToLower(hex)
	if strings.Trim(hex, "0123456789abcdef") != "" {
		return ""
	}
	return "#" + hex
}

// themeVars are the theme's colours in the order of theme.css's "c"
// parameter, with the CSS custom property each sets.
var themeVars = []struct {
	prop string
	get  func(payment.Theme) string
}{
	{"--kw-panel", func(t payment.Theme) string { return t.MainBackground }},
	{"--kw-panel-2", func(t payment.Theme) string { return t.SecondaryBackground }},
	{"--kw-accent", func(t payment.Theme) string { return t.MainColor }},
	{"--kw-on-accent", func(t payment.Theme) string { return t.MainText }},
	{"--kw-text", func(t payment.Theme) string { return t.PrimaryText }},
	{"--kw-muted", func(t payment.Theme) string { return t.SecondaryText }},
	{"--kw-field-text", func(t payment.Theme) string { return t.BaseText }},
	{"--kw-page", func(t payment.Theme) string { return t.BodyBackground }},
}

// themeURL is the stylesheet carrying a store's colours. The colours are
// the URL (without their "#", which would end it), so it needs no lookup,
// is the same on every gateway instance and can be cached for good.
func themeURL(t payment.Theme) string {
	parts := make([]string, len(themeVars))
	for i, v := range themeVars {
		parts[i] = strings.TrimPrefix(cssColour(v.get(t)), "#")
	}
	return "/widget/theme.css?c=" + strings.Join(parts, "-")
}

// theme serves GET /widget/theme.css?c=rrggbb-rrggbb-…: the store's colours
// as CSS custom properties (no inline style is allowed in the frame). Each
// colour is held to cssColour again, since anyone can write this URL.
func (wp *widgetPage) theme(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(r.URL.Query().Get("c"), "-")
	var b strings.Builder
	b.WriteString(":root{")
	for i, v := range themeVars {
		if i < len(parts) {
			if c := cssColour("#" + parts[i]); c != "" {
				b.WriteString(v.prop + ":" + c + ";")
			}
		}
	}
	b.WriteString("}\n")
	h := w.Header()
	h.Set("Content-Type", "text/css; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", asset.ImmutableCache)
	_, _ = w.Write([]byte(b.String()))
}
