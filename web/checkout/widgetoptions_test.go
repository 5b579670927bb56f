package checkout

import (
	"encoding/json"
	"html"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// configOf is the frame's configuration for widget.js.
func configOf(t *testing.T, body string) map[string]any {
	t.Helper()
	m := configBlock.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no kw-config in the frame:\n%s", body)
	}
	var cfg map[string]any
	if err := json.Unmarshal([]byte(html.UnescapeString(m[1])), &cfg); err != nil {
		t.Fatalf("kw-config %s: %v", m[1], err)
	}
	return cfg
}

// TestWidgetFramePhoneNumber: the loader's phoneNumber (data-phone-number
// in HTML mode) reaches the frame split as a token's phone_number, for the
// card token; one a token would refuse is left off and said so, and the
// frame still opens.
func TestWidgetFramePhoneNumber(t *testing.T) {
	f := newWidgetFixture(t)
	cases := []struct {
		in      string
		want    any // the config's phoneNumber
		refused bool
	}{
		{"", nil, false},
		{"   ", nil, false},
		{"090-1234-5678", map[string]any{"country_code": 81.0, "local_number": "090-1234-5678"}, false},
		{"+1 (555) 123-4567", map[string]any{"country_code": 1.0, "local_number": "(555) 123-4567"}, false},
		{"+819012345678", map[string]any{"country_code": 81.0, "local_number": "9012345678"}, false},
		{"090.1234.5678", nil, true},
		{"4000020000000000", nil, true},
		{`"><script>alert(1)</script>`, nil, true},
	}
	for _, c := range cases {
		rec, body := f.frame(t, nil, "phoneNumber", c.in)
		if rec.Code != http.StatusOK {
			t.Fatalf("phoneNumber %q: status %d", c.in, rec.Code)
		}
		cfg := configOf(t, body)
		if got := cfg["phoneNumber"]; !reflect.DeepEqual(got, c.want) {
			t.Errorf("phoneNumber %q: config has %v, want %v", c.in, got, c.want)
		}
		if got := cfg["phoneNumberRefused"] == true; got != c.refused {
			t.Errorf("phoneNumber %q: refused %v, want %v", c.in, got, c.refused)
		}
		if strings.Contains(body, "4000020000000000") {
			t.Errorf("phoneNumber %q: the card-shaped number is in the frame", c.in)
		}
		checkNoInline(t, body)
	}
}

// TestWidgetFrameItemStyle: data-inline-item-style reaches an inline
// frame as declarations its script sets property by property, and only
// those of a box's look whose values load nothing.
func TestWidgetFrameItemStyle(t *testing.T) {
	f := newWidgetFixture(t)
	rec, body := f.frame(t, nil, "inline", "true", "inlineItemStyle", "padding: 0 2px; border: 1px solid #ccc; background: url(https://evil.example/x)")
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d", rec.Code)
	}
	want := []any{[]any{"padding", "0 2px"}, []any{"border", "1px solid #ccc"}}
	if got := configOf(t, body)["itemStyle"]; !reflect.DeepEqual(got, want) {
		t.Errorf("itemStyle %v, want %v", got, want)
	}
	checkNoInline(t, body)
	// A modal has no inline items.
	_, body = f.frame(t, nil, "inlineItemStyle", "padding: 0 2px")
	if got, ok := configOf(t, body)["itemStyle"]; ok {
		t.Errorf("a modal frame got itemStyle %v", got)
	}
}

func TestParseItemStyle(t *testing.T) {
	cases := []struct {
		in   string
		want [][2]string
	}{
		{"", nil},
		{"padding: 0 2px", [][2]string{{"padding", "0 2px"}}},
		{"padding: 0 2px;", [][2]string{{"padding", "0 2px"}}},
		{"border:black;outline:none; padding: 0 8px", [][2]string{{"border", "black"}, {"outline", "none"}, {"padding", "0 8px"}}},
		{"Padding: 10px 0; BORDER-BOTTOM: none;", [][2]string{{"padding", "10px 0"}, {"border-bottom", "none"}}},
		{"color: rgb(10, 20, 30); width: calc(100% - 4px); border-color: rgba(0 0 0 / 50%)",
			[][2]string{{"color", "rgb(10, 20, 30)"}, {"width", "calc(100% - 4px)"}, {"border-color", "rgba(0 0 0 / 50%)"}}},
		{"font-size: 14px; line-height: 1.4; background-color: #fff", [][2]string{{"font-size", "14px"}, {"line-height", "1.4"}, {"background-color", "#fff"}}},
		// What could load something, run something, or leave the value.
		{"background: url(https://evil.example/x)", nil},
		{"background-color: url(https://evil.example/x)", nil},
		{"border: 1px solid URL(x)", nil},
		{"width: expression(alert(1))", nil},
		{"color: image-set(x)", nil},
		{"width: attr(data-x)", nil},
		{"color: var(--x)", nil},
		{`color: \75 rl(x)`, nil},
		{`color: "red"`, nil},
		{"color: red !important", nil},
		{"color: red} body{background:red", [][2]string{}},
		{"color: red /* x */", nil},
		{"padding: (1px)", nil},
		{"width: calc(1px", nil},
		{"position: fixed; top: 0; z-index: 99", nil},
		{"behavior: url(x.htc); -moz-binding: url(x)", nil},
		{"content: 'x'", nil},
		{"cursor: pointer", nil},
		{"padding 0", nil},
		{"padding: ", nil},
		{"padding: 0 2px; color: url(x); margin: 1px", [][2]string{{"padding", "0 2px"}, {"margin", "1px"}}},
		{strings.Repeat("padding: 1px;", 100), nil},
		{strings.Repeat("margin: 1px;", 40), func() [][2]string {
			out := make([][2]string, maxItemStyleDecls)
			for i := range out {
				out[i] = [2]string{"margin", "1px"}
			}
			return out
		}()},
	}
	for _, c := range cases {
		got := parseItemStyle(c.in)
		if len(got) == 0 && len(c.want) == 0 {
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("parseItemStyle(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// FuzzParseItemStyle: whatever it is given, what parseItemStyle keeps is
// an allowed property with a value that calls no function but the allowed
// ones and holds nothing that could end the value.
func FuzzParseItemStyle(f *testing.F) {
	for _, s := range []string{"padding: 0 2px", "color: rgb(1,2,3)", "background: url(x)", "width: calc(1px + 2px); margin: 0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, d := range parseItemStyle(s) {
			prop, value := d[0], d[1]
			if !itemStyleProperties[prop] {
				t.Fatalf("kept property %q", prop)
			}
			if strings.ContainsAny(value, `;:{}"'\!<>@`) || strings.Contains(value, "/*") {
				t.Fatalf("kept value %q", value)
			}
			for _, fn := range itemStyleFunction.FindAllString(strings.ToLower(value), -1) {
				if !itemStyleFunctions[fn] {
					t.Fatalf("kept value %q calling %s", value, fn)
				}
			}
		}
	})
}
