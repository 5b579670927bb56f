package checkout

import (
	"regexp"
	"strings"
)

// UnivaPay's HTML mode takes data-inline-item-style, CSS declarations for
// each field of the inline form ("padding: 0 2px", as WooCommerce sends).
// The frame sets them one property at a time through CSSOM
// (style.setProperty, which its Content-Security-Policy allows where a
// style attribute would not), so a value can never leave its property; what
// is kept is further narrowed to the look of a box, and to values that load
// nothing (no url(), image-set(), expression(), attr(), escapes, quotes).
// A declaration outside that is dropped, as a browser drops one it does not
// understand; the rest apply.

// maxItemStyle bounds the declarations taken, in bytes and in number.
const (
	maxItemStyle      = 1024
	maxItemStyleDecls = 32
)

// itemStyleProperties are the properties a field may be given.
var itemStyleProperties = map[string]bool{
	"padding": true, "padding-top": true, "padding-right": true, "padding-bottom": true, "padding-left": true,
	"margin": true, "margin-top": true, "margin-right": true, "margin-bottom": true, "margin-left": true,
	"border": true, "border-top": true, "border-right": true, "border-bottom": true, "border-left": true,
	"border-width": true, "border-style": true, "border-color": true, "border-radius": true,
	"outline": true, "outline-width": true, "outline-style": true, "outline-color": true, "outline-offset": true,
	"background-color": true, "color": true, "opacity": true, "box-shadow": true,
	"font-size": true, "font-weight": true, "font-style": true, "line-height": true, "letter-spacing": true,
	"text-align": true, "width": true, "min-width": true, "max-width": true, "height": true, "min-height": true,
	"max-height": true, "gap": true,
}

// itemStyleValue is what a kept value may hold: words, numbers with their
// units, colours, and the arithmetic of calc(); no quotes, backslashes,
// semicolons, braces or "!".
var itemStyleValue = regexp.MustCompile(`^[a-zA-Z0-9 #%.,()+\-/*]+$`)

// itemStyleFunction finds the functions a value calls.
var itemStyleFunction = regexp.MustCompile(`[a-zA-Z-]*\(`)

// itemStyleFunctions are the functions a value may call: colours and
// arithmetic, none of which loads anything.
var itemStyleFunctions = map[string]bool{
	"rgb(": true, "rgba(": true, "hsl(": true, "hsla(": true, "calc(": true, "min(": true, "max(": true, "clamp(": true,
}

// parseItemStyle reads data-inline-item-style into the [property, value]
// pairs the frame sets on each field.
func parseItemStyle(raw string) [][2]string {
	if len(raw) > maxItemStyle {
		return nil
	}
	var out [][2]string
	for _, decl := range strings.Split(raw, ";") {
		prop, value, ok := strings.Cut(decl, ":")
		prop, value = strings.ToLower(strings.TrimSpace(prop)), strings.TrimSpace(value)
		if !ok || !itemStyleProperties[prop] || value == "" || !itemStyleValue.MatchString(value) ||
			strings.Count(value, "(") != strings.Count(value, ")") || strings.Contains(value, "/*") {
			continue
		}
		calls := itemStyleFunction.FindAllString(strings.ToLower(value), -1)
		allowed := true
		for _, fn := range calls {
			allowed = allowed && itemStyleFunctions[fn]
		}
		if !allowed {
			continue
		}
		if out = append(out, [2]string{prop, value}); len(out) == maxItemStyleDecls {
			break
		}
	}
	return out
}
