package message

// consoleKeys are the console's app token, webhook, store settings and
// test charge pages' texts.
var consoleKeys = map[string]Text{
	"title_stores": {"Stores", "店舗"},
}
