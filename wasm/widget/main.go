//go:build js && wasm

// Command widget is the card form's WebAssembly. It binds the card package
// to the fields of the widget frame (templates/widget.html): it formats the
// number as the customer types and keeps the caret where it was, detects the
// brand and shows its mark, writes the expiry as MM / YY, sizes the security
// code by brand, and validates each field when it is left or full. Its
// messages are the frame's: the page embeds them in its configuration, in
// its language, from the gateway's catalogue (web/message), so this program
// carries no texts.
//
// The frame works without it: static/widget.js formats and checks the
// fields in plain JavaScript until this program says it is ready, by
// setting data-wasm="ready" on <html> and window.kessaiWasm, and then
// leaves the fields to it. widget.js still owns everything else (the
// messages to the embedding page, the API calls).
//
// Everything imported here is downloaded by every shopper, so it is
// syscall/js, the card package and strings: no fmt, no encoding/json, no
// net/http, not even time (today's month comes from the browser's Date), so
// that it is the Go runtime and little more (a test checks).
package main

import (
	"strings"
	"syscall/js"

	"github.com/kessai/kessai/wasm/card"
	"github.com/kessai/kessai/wasm/widget/field"
)

// input is one field: its <input>, its wrapper and its error slot.
type input struct {
	el, wrap, err js.Value
	// key names the field in its messages' keys (field.MessageKey).
	key string
}

func (f *input) value() string { return f.el.Get("value").String() }

func (f *input) setValue(v string) { f.el.Set("value", v) }

// showError writes msg in the field's error slot and marks the input
// invalid for assistive technology; "" clears both.
func (f *input) showError(msg string) {
	if msg == "" {
		f.el.Call("removeAttribute", "aria-invalid")
		f.wrap.Get("classList").Call("remove", "is-invalid")
		f.err.Set("textContent", "")
		return
	}
	f.el.Call("setAttribute", "aria-invalid", "true")
	f.wrap.Get("classList").Call("add", "is-invalid")
	if f.err.Get("textContent").String() != msg {
		f.err.Set("textContent", msg)
	}
}

func (f *input) invalid() bool {
	return f.wrap.Get("classList").Call("contains", "is-invalid").Bool()
}

func (f *input) setComplete(ok bool) {
	f.wrap.Get("classList").Call("toggle", "is-complete", ok)
}

type form struct {
	doc js.Value
	// messages are the frame's script texts by key, a JavaScript object.
	messages               js.Value
	number, exp, cvc, name *input
	brandImg               js.Value
	brand                  card.Brand
	// numberDigits is the number's digit count after the last edit, to
	// tell a deleted group space from a deleted digit.
	numberDigits int
}

func main() {
	doc := js.Global().Get("document")
	f := newForm(doc)
	if f == nil {
		return // not the widget page
	}
	f.bind()
	f.refresh()
	api := js.Global().Get("Object").New()
	api.Set("check", js.FuncOf(func(this js.Value, args []js.Value) any { return f.check() }))
	api.Set("brand", js.FuncOf(func(this js.Value, args []js.Value) any { return string(f.brand) }))
	js.Global().Set("kessaiWasm", api)
	doc.Get("documentElement").Get("dataset").Set("wasm", "ready")
	doc.Call("dispatchEvent", js.Global().Get("Event").New("kessai:wasm-ready"))
	select {} // the callbacks live as long as the page
}

func newForm(doc js.Value) *form {
	get := func(id string) *input {
		el := doc.Call("getElementById", "kw-"+id)
		if el.IsNull() {
			return nil
		}
		return &input{
			el:   el,
			wrap: el.Call("closest", ".kw-field"),
			err:  doc.Call("getElementById", "kw-"+id+"-err"),
			key:  id,
		}
	}
	f := &form{
		doc:      doc,
		messages: messagesOf(doc),
		number:   get("number"),
		exp:      get("exp"),
		cvc:      get("cvc"),
		name:     get("name"),
		brand:    card.Unknown,
	}
	if f.number == nil || f.exp == nil || f.cvc == nil || f.name == nil {
		return nil
	}
	f.brandImg = doc.Call("getElementById", "kw-brand")
	return f
}

func (f *form) on(in *input, event string, fn func(ev js.Value)) {
	in.el.Call("addEventListener", event, js.FuncOf(func(this js.Value, args []js.Value) any {
		fn(args[0])
		return nil
	}))
}

func (f *form) bind() {
	f.on(f.number, "input", func(ev js.Value) { f.numberInput(ev) })
	f.on(f.number, "blur", func(js.Value) { f.validate(f.number, false) })
	f.on(f.exp, "input", func(ev js.Value) { f.expInput(ev) })
	f.on(f.exp, "blur", func(js.Value) { f.validate(f.exp, false) })
	f.on(f.cvc, "input", func(ev js.Value) { f.cvcInput(ev) })
	f.on(f.cvc, "blur", func(js.Value) { f.validate(f.cvc, false) })
	f.on(f.name, "input", func(js.Value) {
		if f.name.invalid() {
			f.validate(f.name, false)
		}
	})
	f.on(f.name, "blur", func(js.Value) { f.validate(f.name, false) })
}

// refresh reformats what was typed before the program was ready.
func (f *form) refresh() {
	if v := f.number.value(); v != "" {
		f.number.setValue(card.Format(card.Clamp(v)))
	}
	f.numberDigits = len(card.Digits(f.number.value()))
	if v := f.exp.value(); v != "" {
		f.exp.setValue(field.FormatExpiry(v, true))
	}
	f.setBrand(card.DetectBrand(f.number.value()))
	for _, in := range []*input{f.number, f.exp, f.cvc, f.name} {
		if in.invalid() {
			f.validate(in, false)
		}
	}
}

// typing reports whether an input event inserted text by keyboard (not
// autofill, paste or deletion), the only case where focus may move on.
func typing(ev js.Value) bool {
	t := ev.Get("inputType")
	return t.Type() == js.TypeString && t.String() == "insertText"
}

func deleting(ev js.Value) bool {
	t := ev.Get("inputType")
	return t.Type() == js.TypeString && strings.HasPrefix(t.String(), "delete")
}

func (f *form) focused(in *input) bool {
	return f.doc.Get("activeElement").Equal(in.el)
}

// caret returns the caret position and whether it is at the end.
func caret(in *input, v string) (int, bool) {
	s := in.el.Get("selectionStart")
	if s.Type() != js.TypeNumber {
		return utf16Len(v), true
	}
	c := s.Int()
	return c, c >= utf16Len(v)
}

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r > 0xFFFF {
			n++
		}
	}
	return n
}

func (f *form) place(in *input, pos int) {
	if f.focused(in) {
		in.el.Call("setSelectionRange", pos, pos)
	}
}

func (f *form) numberInput(ev js.Value) {
	in := f.number
	v := in.value()
	pos, atEnd := caret(in, v)
	idx := card.DigitIndex(v, pos)
	d := card.Clamp(v)
	// Backspace (or Delete) on a group space removed no digit: remove the
	// digit beside it instead, as the customer meant.
	if t := ev.Get("inputType"); t.Type() == js.TypeString && len(d) == f.numberDigits && len(d) > 0 {
		switch t.String() {
		case "deleteContentBackward":
			if idx > 0 {
				d, idx, atEnd = d[:idx-1]+d[idx:], idx-1, false
			}
		case "deleteContentForward":
			if idx < len(d) {
				d, atEnd = d[:idx]+d[idx+1:], false
			}
		}
	}
	f.numberDigits = len(d)
	out := card.Format(d)
	if out != v {
		in.setValue(out)
		if atEnd {
			f.place(in, len(out))
		} else {
			f.place(in, card.FormatCaret(d, idx))
		}
	}
	b := card.DetectBrand(d)
	f.setBrand(b)
	state := card.NumberState(d)
	in.setComplete(state == "")
	switch {
	case len(d) >= b.MaxLength() || field.AutoAdvance(b, len(d)):
		f.validate(in, false)
	case in.invalid():
		f.validate(in, false)
	}
	if state == "" && typing(ev) && atEnd && field.AutoAdvance(b, len(d)) {
		f.exp.el.Call("focus")
	}
	if f.cvc.value() != "" && (f.cvc.invalid() || f.cvc.wrap.Get("classList").Call("contains", "is-complete").Bool()) {
		f.checkCVCQuietly()
	}
}

func (f *form) expInput(ev js.Value) {
	in := f.exp
	v := in.value()
	pos, atEnd := caret(in, v)
	idx := card.DigitIndex(v, pos)
	out := field.FormatExpiry(v, deleting(ev))
	if out != v {
		in.setValue(out)
		if atEnd {
			f.place(in, len(out))
		} else {
			f.place(in, field.CaretAfterDigits(out, idx))
		}
	}
	state := card.ExpiryState(out, today())
	in.setComplete(state == "")
	full := len(card.Digits(out)) == 4
	if full || in.invalid() {
		f.validate(in, false)
	}
	if full && state == "" && typing(ev) && atEnd {
		f.cvc.el.Call("focus")
	}
}

func (f *form) cvcInput(ev js.Value) {
	in := f.cvc
	v := in.value()
	d := card.Digits(v)
	if m := field.CVVMax(f.brand); len(d) > m {
		d = d[:m]
	}
	if d != v {
		in.setValue(d)
	}
	state := card.CVVState(d, f.brand)
	in.setComplete(state == "")
	full := field.Known(f.brand) && len(d) == f.brand.CVVLength()
	if full || in.invalid() {
		f.validate(in, false)
	}
	if full && state == "" && typing(ev) && f.name.value() == "" {
		f.name.el.Call("focus")
	}
}

// checkCVCQuietly re-judges the security code after the brand changed.
func (f *form) checkCVCQuietly() {
	state := card.CVVState(f.cvc.value(), f.brand)
	f.cvc.setComplete(state == "")
	if f.cvc.invalid() || state == card.ReasonInvalidCVV {
		f.validate(f.cvc, false)
	}
}

// setBrand shows b's mark and sizes the security-code field.
func (f *form) setBrand(b card.Brand) {
	if b == f.brand {
		return
	}
	f.brand = b
	f.number.wrap.Get("dataset").Set("brand", string(b))
	if !f.brandImg.IsNull() {
		if src := f.brandImg.Call("getAttribute", "data-src-"+string(b)); !src.IsNull() {
			f.brandImg.Set("src", src)
		}
		label := f.brandImg.Call("getAttribute", "data-label-"+string(b))
		if label.IsNull() {
			f.brandImg.Set("alt", "")
		} else {
			f.brandImg.Set("alt", label)
		}
	}
	m := field.CVVMax(b)
	f.cvc.el.Set("maxLength", m)
	if b == card.AmericanExpress {
		f.cvc.el.Set("placeholder", "1234")
	} else {
		f.cvc.el.Set("placeholder", "123")
	}
}

// clock is the browser's present as the card package reads it: a card is
// good through its expiry month in the shopper's calendar.
type clock struct{ year, month, day int }

func (c clock) Date() (int, int, int) { return c.year, c.month, c.day }

// today reads the browser's clock (what time.Now would, in the page's time
// zone, without the time package).
func today() clock {
	d := js.Global().Get("Date").New()
	return clock{d.Call("getFullYear").Int(), d.Call("getMonth").Int() + 1, d.Call("getDate").Int()}
}

// state judges one field as it stands.
func (f *form) state(in *input) string {
	switch in {
	case f.number:
		return card.NumberState(in.value())
	case f.exp:
		return card.ExpiryState(in.value(), today())
	case f.cvc:
		return card.CVVState(in.value(), f.brand)
	default:
		return card.CardholderState(in.value())
	}
}

// messagesOf reads the texts of the frame's configuration (the JSON in
// #kw-config, which widget.js has already read) with the browser's own
// parser: encoding/json would cost the download more than the texts.
func messagesOf(doc js.Value) (m js.Value) {
	defer func() {
		if recover() != nil { // JSON.parse threw: no texts, the generic line stays empty
			m = js.Undefined()
		}
	}()
	el := doc.Call("getElementById", "kw-config")
	if el.IsNull() {
		return js.Undefined()
	}
	return js.Global().Get("JSON").Call("parse", el.Get("textContent")).Get("messages")
}

// text is the message of a key, or the generic one when the frame has no
// text for it.
func (f *form) text(key string) string {
	if f.messages.Type() != js.TypeObject {
		return ""
	}
	for _, k := range []string{key, field.GenericMessageKey} {
		if v := f.messages.Get(k); v.Type() == js.TypeString {
			return v.String()
		}
	}
	return ""
}

// message is the text for a state of a field in the page's language.
func (f *form) message(in *input, state string) string {
	if state == "" {
		return ""
	}
	return f.text(field.MessageKey(in.key, state))
}

// validate shows the field's problem, if any. An empty field is only
// reported when required is set (on submit), never on leaving it: a
// customer tabbing through is not told off for what they have not typed.
func (f *form) validate(in *input, required bool) bool {
	state := f.state(in)
	in.setComplete(state == "")
	if state == card.ReasonRequired && !required {
		in.showError("")
		return false
	}
	in.showError(f.message(in, state))
	return state == ""
}

// check validates every card field for a submit and returns
// {ok, expMonth, expYear, brand, first}: the expiry as numbers (the year
// with four digits) and the id of the first field in error, for focus.
func (f *form) check() any {
	out := js.Global().Get("Object").New()
	ok := true
	first := ""
	for _, in := range []*input{f.number, f.exp, f.cvc, f.name} {
		if !f.validate(in, true) {
			if ok {
				first = in.el.Get("id").String()
			}
			ok = false
		}
	}
	if m, y, err := card.ParseExpiry(f.exp.value()); err == nil {
		out.Set("expMonth", m)
		out.Set("expYear", card.NormalizeYear(y))
	}
	out.Set("ok", ok)
	out.Set("first", first)
	out.Set("brand", string(f.brand))
	return out
}
