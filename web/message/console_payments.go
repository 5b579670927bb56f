package message

// consolePayments are the console's dashboard and payment pages' texts.
var consolePayments = map[string]Text{
	"title_dashboard": {"Dashboard", "ダッシュボード"},
}
