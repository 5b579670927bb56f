package message

// Loader is checkout.js, the script merchants put on their pages: the
// button of the HTML mode, the dialog's and the frame's names for assistive
// technology, and what to say when the frame cannot be loaded. The gateway
// writes this table into the script it serves.
var Loader = newTable("loader", map[string]Text{
	"button":     {"Pay with card", "カードで支払う"},
	"dialog":     {"Payment", "お支払い"},
	"frame":      {"Secure payment form", "安全な決済フォーム"},
	"loadFailed": {"The payment form could not be loaded.", "決済フォームを読み込めませんでした。"},
})
