//go:build js && wasm

// Command widget is the card form's WebAssembly: the card package's rules
// and the field package's (a konbini shopper's phone number among them),
// exported to the widget frame's script
// (static/widget.js) as functions. The script binds them to the fields (it
// formats the number as the customer types and keeps the caret where it
// was, shows the brand's mark, writes the expiry as MM / YY, sizes the
// security code by brand, and validates each field when it is left or
// full), exactly as it binds static/cardrules.js, the plain-JavaScript port
// of the same rules, until this program is ready or when it cannot run. The
// frame's messages are the page's, in its language, so this program carries
// no texts.
//
// Nothing here calls JavaScript: the script calls in, through
// //go:wasmexport functions, instead of this program reaching the page
// through syscall/js, whose values, callbacks and reflection-free
// marshalling cost the download more than the rules themselves. Strings
// cross in this program's memory: the script asks buffer for room, writes
// a call's string arguments there one after the other as UTF-8 and passes
// their lengths; a string result is written at the start of the same
// buffer and its length returned.
//
// Everything imported here is downloaded by every shopper, so it is the
// card package and its field rules: no fmt, no encoding/json, no net/http,
// not even time (the script passes today's date from the browser's Date),
// so that it is the Go runtime and little more (a test checks).
package main

import (
	"unsafe"

	"github.com/kessai/kessai/wasm/card"
	"github.com/kessai/kessai/wasm/widget/field"
)

func main() {
	// Returning would end the program and its exports with it; blocked, it
	// hands control back to the page until the script calls in.
	select {}
}

// buf is the exchange buffer: the arguments of the call in progress, then
// its string result.
var buf = make([]byte, 256)

// buffer makes room for n bytes and returns where the buffer is (it moves
// when it grows, and the memory's ArrayBuffer changes when the memory
// does: the script asks for both after every call).
//
//go:wasmexport buffer
func buffer(n int32) unsafe.Pointer {
	if int(n) > len(buf) {
		buf = make([]byte, n)
	}
	return unsafe.Pointer(unsafe.SliceData(buf))
}

// args reads a call's string arguments, laid out one after the other.
func arg1(n int32) string { return string(buf[:n]) }

func arg2(n, m int32) (string, string) { return string(buf[:n]), string(buf[n : n+m]) }

// result writes s at the start of the buffer and returns its length.
func result(s string) int32 {
	if len(s) > len(buf) {
		buf = make([]byte, len(s))
	}
	return int32(copy(buf, s))
}

//go:wasmexport digits
func digits(n int32) int32 { return result(card.Digits(arg1(n))) }

//go:wasmexport clamp
func clamp(n int32) int32 { return result(card.Clamp(arg1(n))) }

//go:wasmexport format
func format(n int32) int32 { return result(card.Format(arg1(n))) }

//go:wasmexport formatCaret
func formatCaret(n, digitIndex int32) int32 {
	return int32(card.FormatCaret(arg1(n), int(digitIndex)))
}

//go:wasmexport digitIndex
func digitIndex(n, caret int32) int32 { return int32(card.DigitIndex(arg1(n), int(caret))) }

//go:wasmexport detectBrand
func detectBrand(n int32) int32 { return result(string(card.DetectBrand(arg1(n)))) }

//go:wasmexport numberState
func numberState(n int32) int32 { return result(card.NumberState(arg1(n))) }

//go:wasmexport cvvState
func cvvState(n, b int32) int32 {
	cvv, brand := arg2(n, b)
	return result(card.CVVState(cvv, card.Brand(brand)))
}

//go:wasmexport cardholderState
func cardholderState(n int32) int32 { return result(card.CardholderState(arg1(n))) }

// clock is the browser's present as the card package reads it: a card is
// good through its expiry month in the shopper's calendar.
type clock struct{ year, month, day int }

func (c clock) Date() (int, int, int) { return c.year, c.month, c.day }

//go:wasmexport expiryState
func expiryState(n, year, month, day int32) int32 {
	return result(card.ExpiryState(arg1(n), clock{int(year), int(month), int(day)}))
}

// parseExpiry returns year×100 + month, or 0 when the expiry does not
// parse (a year is never 0).
//
//go:wasmexport parseExpiry
func parseExpiry(n int32) int32 {
	m, y, err := card.ParseExpiry(arg1(n))
	if err != nil {
		return 0
	}
	return int32(y*100 + m)
}

//go:wasmexport normalizeYear
func normalizeYear(year int32) int32 { return int32(card.NormalizeYear(int(year))) }

//go:wasmexport formatExpiry
func formatExpiry(n int32, deleting bool) int32 {
	return result(field.FormatExpiry(arg1(n), deleting))
}

//go:wasmexport caretAfterDigits
func caretAfterDigits(n, k int32) int32 { return int32(field.CaretAfterDigits(arg1(n), int(k))) }

//go:wasmexport maxLength
func maxLength(b int32) int32 { return int32(card.Brand(arg1(b)).MaxLength()) }

//go:wasmexport cvvLength
func cvvLength(b int32) int32 { return int32(card.Brand(arg1(b)).CVVLength()) }

//go:wasmexport cvvMax
func cvvMax(b int32) int32 { return int32(field.CVVMax(card.Brand(arg1(b)))) }

//go:wasmexport known
func known(b int32) bool { return field.Known(card.Brand(arg1(b))) }

//go:wasmexport autoAdvance
func autoAdvance(b, digits int32) bool {
	return field.AutoAdvance(card.Brand(arg1(b)), int(digits))
}

// japanesePhone answers field.JapanesePhone as "local state": the digits
// to send (none when refused), a space, and the state ("" when taken).
//
//go:wasmexport japanesePhone
func japanesePhone(n int32) int32 {
	local, state := field.JapanesePhone(arg1(n))
	return result(local + " " + state)
}

//go:wasmexport messageKey
func messageKey(f, s int32) int32 { return result(field.MessageKey(arg2(f, s))) }

// names are the constants the script compares with, separated by spaces
// in this order: the state of an empty field, of a security code that
// cannot be right, the brand with four-digit codes, the unknown brand, and
// the key of the text for a state that has none of its own.
//
//go:wasmexport names
func names() int32 {
	return result(card.ReasonRequired + " " + card.ReasonInvalidCVV + " " + string(card.AmericanExpress) + " " +
		string(card.Unknown) + " " + field.GenericMessageKey)
}
