// Package card is the card-number, expiry, security-code and cardholder
// logic that the browser widget and the server must agree on.
//
// The widget (compiled to js/wasm) uses it to detect the brand while the
// customer types, to format the number and keep the caret in place, and to
// say what is wrong before anything leaves the page. The server uses the same
// rules to validate POST /tokens, so a number the widget accepts is never
// refused by the server for a reason the customer could not see, and the
// other way round. It names problems by code only (the wire reasons and
// the widget's states); what each says to people, in Japanese and English,
// is in the message catalogue (web/message), which the frame hands to the
// widget with the page.
//
// Because every import ends up in the widget download, the package imports
// only errors, strings, time, unicode and unicode/utf8: no fmt, no reflect,
// no encoding, no net. A test enforces this.
//
// Card numbers are secrets. Nothing here logs, and nothing here turns a
// number into text other than Format, whose output belongs in the input field
// the customer is typing into and nowhere else. Use BIN and LastFour for
// anything that is stored, shown later or logged.
//
// Every function that takes a card number accepts it as the customer typed
// it and cleans it with Digits first, so callers need not remember to.
// Rules that depend on the date take it as an argument; nothing here reads
// the clock.
package card
