package message

// CheckoutSlip is what a shopper is told about a konbini payment or a bank
// transfer they make away from the screen: the stores and banks by name
// (store_<convenience_store>, bank_<brand>: the API's values), and the
// instructions an awaiting charge gives (the numbers, the account, the
// deadline), which the widget frame's script shows in the modal and the
// hosted link form on its result page. The deadline is written with
// deadline_format, whose {…} are a date and time in Japan, with the names
// of weekdays and months; web/checkout's formatDeadline fills them, and
// its port in static/widget.js.
var CheckoutSlip = newTable("payment slip", map[string]Text{
	"store_seven_eleven":         {"7-Eleven", "セブン-イレブン"},
	"store_family_mart":          {"FamilyMart", "ファミリーマート"},
	"store_lawson":               {"Lawson", "ローソン"},
	"store_mini_stop":            {"Ministop", "ミニストップ"},
	"store_seico_mart":           {"Seicomart", "セイコーマート"},
	"store_pay_easy":             {"Pay-easy (ATM, online banking)", "ペイジー（ATM・ネットバンキング）"},
	"store_circle_k":             {"Circle K", "サークルK"},
	"store_sunkus":               {"Sunkus", "サンクス"},
	"store_daily_yamazaki":       {"Daily Yamazaki", "デイリーヤマザキ"},
	"store_yamazaki_daily_store": {"Yamazaki Daily Store", "ヤマザキデイリーストアー"},
	"bank_aozora_bank":           {"GMO Aozora Net Bank", "GMOあおぞらネット銀行"},
	"bank_bank_test_brand":       {"Test Bank (sandbox)", "テスト銀行（サンドボックス）"},

	"konbini_title": {"Pay at %s", "%sでお支払いください"},
	"konbini_text": {
		"Give the numbers below at the store's register or terminal, and pay in cash by the deadline.",
		"店頭のレジまたは端末で下記の番号をお伝えのうえ、期限までに現金でお支払いください。",
	},
	"pay_easy_title": {"Pay with Pay-easy", "ペイジーでお支払いください"},
	"pay_easy_text": {
		"Pay at an ATM or in online banking that shows the Pay-easy mark, with the numbers below, by the deadline.",
		"ペイジーマークのある ATM またはネットバンキングで、下記の番号を使って期限までにお支払いください。",
	},
	"bank_title": {"Transfer %s", "%s をお振込みください"},
	"bank_text": {
		"Transfer the amount to the account below by the deadline. The account is for this payment only.",
		"期限までに下記の口座へお振込みください。この口座は今回のお支払い専用です。",
	},
	"keep": {
		"Keep these details: you need them to pay.",
		"お支払いに必要な情報です。お控えください。",
	},
	"store":           {"Pay at", "お支払い先"},
	"payment_number":  {"Payment number", "お支払い番号"},
	"customer_number": {"Customer number", "お客様番号"},
	"confirmation":    {"Confirmation number", "確認番号"},
	"amount":          {"Amount", "お支払い金額"},
	"deadline":        {"Pay by", "お支払い期限"},
	"bank":            {"Bank", "銀行名"},
	"branch":          {"Branch", "支店名"},
	"account_type":    {"Account type", "口座種別"},
	"ordinary":        {"Ordinary", "普通"},
	"account_number":  {"Account number", "口座番号"},
	"holder":          {"Account holder", "口座名義"},
	"code":            {"code %s", "コード %s"},
	"open": {
		"Open the instructions to print or save",
		"印刷・保存用の案内を開く",
	},
	"copy":      {"Copy", "コピー"},
	"copy_what": {"Copy the %s", "%sをコピー"},
	"copied":    {"Copied", "コピーしました"},

	"deadline_format": {
		"{weekday} {day} {month} {year}, {time} (Japan time)",
		"{year}年{month}{day}日（{weekday}）{time}（日本時間）",
	},
	"weekdays": {"Sun Mon Tue Wed Thu Fri Sat", "日 月 火 水 木 金 土"},
	"months": {
		"Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec",
		"1月 2月 3月 4月 5月 6月 7月 8月 9月 10月 11月 12月",
	},
})
