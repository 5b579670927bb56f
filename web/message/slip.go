package message

// Slip is the sandbox's instructions page of a konbini payment or a bank
// transfer (web/sandboxpages/slip.go): what to pay, where, with which
// numbers, by when, and how; the payment's state once it has moved; and
// the test-mode panel that stands for the store's counter and the bank.
// cvs_ are the stores' names as each language writes them, num_ the names
// of the numbers their counters and terminals ask for, step_<kind>_<n>
// the how-to-pay steps of each kind of store, pay_ a bank transfer's
// deposit states, r_ the ended payment's, sim_ the simulation panel's,
// err_ its refusals. date is a Go time layout; weekdays are the names the
// layout's "Mon" becomes, Sunday first.
var Slip = newTable("sandbox instructions", map[string]Text{
	"title_konbini":  {"Pay at %s", "%sでのお支払い"},
	"title_pay_easy": {"Pay with %s", "%sでのお支払い"},
	"title_bank":     {"Pay by bank transfer", "銀行振込でのお支払い"},
	"lead_konbini": {
		"Take the numbers below to any %s and pay in cash by the deadline.",
		"下記の番号で、お支払い期限までに%sの店舗で現金でお支払いください。",
	},
	"lead_pay_easy": {
		"Pay with %s at a bank ATM or in your online banking, with the numbers below, by the deadline.",
		"下記の番号で、お支払い期限までに銀行ATMまたはインターネットバンキングから%sでお支払いください。",
	},
	"lead_bank": {
		"Transfer the amount to the account below by the deadline. The account is for this payment only.",
		"お支払い期限までに下記の口座へお振り込みください。この口座は今回のお支払い専用です。",
	},

	"amount":       {"Amount", "お支払い金額"},
	"to_transfer":  {"Amount to transfer", "お振込金額"},
	"deadline":     {"Pay by", "お支払い期限"},
	"deadline_at":  {"%s Japan time (UTC+9)", "%s（日本時間）"},
	"date":         {"Mon 2 Jan 2006, 15:04", "2006年1月2日（Mon）15:04"},
	"weekdays":     {"Sun Mon Tue Wed Thu Fri Sat", "日 月 火 水 木 金 土"},
	"left_days":    {"%d days left", "残り%d日"},
	"left_day":     {"1 day left", "残り1日"},
	"left_hours":   {"%d hours left", "残り%d時間"},
	"left_hour":    {"1 hour left", "残り1時間"},
	"left_minutes": {"%d minutes left", "残り%d分"},
	"left_minute":  {"1 minute left", "残り1分"},
	"customer":     {"Name", "お名前"},
	"payee":        {"Payment to", "お支払い先"},
	"pay_at":       {"Pay at", "お支払い場所"},
	"status":       {"Status", "状況"},
	"language":     {"Language", "言語"},

	"st_awaiting":   {"Awaiting payment", "お支払い待ち"},
	"st_successful": {"Paid", "お支払い済み"},
	"st_expired":    {"Deadline passed", "期限切れ"},
	"st_canceled":   {"Canceled", "キャンセル済み"},
	"st_failed":     {"Ended", "終了"},

	"cvs_seven_eleven":         {"7-Eleven", "セブン-イレブン"},
	"cvs_family_mart":          {"FamilyMart", "ファミリーマート"},
	"cvs_lawson":               {"Lawson", "ローソン"},
	"cvs_mini_stop":            {"Ministop", "ミニストップ"},
	"cvs_seico_mart":           {"Seicomart", "セイコーマート"},
	"cvs_pay_easy":             {"Pay-easy", "Pay-easy（ペイジー）"},
	"cvs_circle_k":             {"Circle K", "サークルK"},
	"cvs_sunkus":               {"Sunkus", "サンクス"},
	"cvs_daily_yamazaki":       {"Daily Yamazaki", "デイリーヤマザキ"},
	"cvs_yamazaki_daily_store": {"Yamazaki Daily Store", "ヤマザキデイリーストアー"},
	"cvs_other":                {"a convenience store", "コンビニエンスストア"},

	"num_slip":         {"Payment slip number", "払込票番号"},
	"num_order":        {"Order number", "注文番号"},
	"num_company":      {"Company code", "企業コード"},
	"num_customer":     {"Customer number", "お客様番号"},
	"num_receipt":      {"Receipt number", "受付番号"},
	"num_confirmation": {"Confirmation number", "確認番号"},
	"num_payment":      {"Payment number", "お支払い番号"},

	"howto": {"How to pay", "お支払い方法"},
	// Seven-Eleven: the slip number at the register.
	"step_seven_1": {"At the register, say you want to pay for an online order.", "レジで「インターネット代金の支払い」とお伝えください。"},
	"step_seven_2": {"Show or read out the payment slip number above.", "上記の払込票番号を提示するか、お伝えください。"},
	"step_seven_3": {"Check the amount on the register's screen and pay in cash.", "レジの画面で金額を確認し、現金でお支払いください。"},
	"step_seven_4": {"Keep the receipt: it is your proof of payment.", "お支払いの証明となる払込受領証を必ずお受け取りください。"},
	// FamilyMart, and the Circle K and Sunkus stores it took over: the
	// multi-copy machine.
	"step_famima_1": {"At the store's multi-copy machine, choose \"Payments\".", "店内のマルチコピー機で「代金支払い」を選びます。"},
	"step_famima_2": {"Enter the company code, then the order number above.", "上記の企業コード、注文番号の順に入力します。"},
	"step_famima_3": {"Take the slip the machine prints to the register within 30 minutes.", "発券された申込券を30分以内にレジへお持ちください。"},
	"step_famima_4": {"Pay in cash and keep the receipt: it is your proof of payment.", "現金でお支払いのうえ、お支払いの証明となる領収書をお受け取りください。"},
	// Lawson and Ministop: the Loppi terminal.
	"step_loppi_1": {"At the Loppi terminal, choose \"Customers with a number\".", "店内のLoppiで「各種番号をお持ちの方」を選びます。"},
	"step_loppi_2": {"Enter the customer number and the confirmation number above.", "上記のお客様番号と確認番号を入力します。"},
	"step_loppi_3": {"Take the slip the terminal prints to the register within 30 minutes.", "発券された申込券を30分以内にレジへお持ちください。"},
	"step_loppi_4": {"Pay in cash and keep the receipt: it is your proof of payment.", "現金でお支払いのうえ、お支払いの証明となる領収書をお受け取りください。"},
	// Seicomart and the Yamazaki stores: at the register.
	"step_counter_1": {"At the register, say you want to pay for an online order.", "レジで「インターネット支払い」とお伝えください。"},
	"step_counter_2": {"Give the numbers above; the staff enter them.", "上記の番号をお伝えください（店員が入力します）。"},
	"step_counter_3": {"Check the amount and pay in cash.", "金額を確認し、現金でお支払いください。"},
	"step_counter_4": {"Keep the receipt: it is your proof of payment.", "お支払いの証明となる領収書を必ずお受け取りください。"},
	// Pay-easy: an ATM or online banking.
	"step_payeasy_1": {"At a bank ATM with the Pay-easy mark, or in your online banking, choose Pay-easy (taxes and fees).", "ペイジーマークのある銀行ATM、またはインターネットバンキングで「税金・料金払込み（ペイジー）」を選びます。"},
	"step_payeasy_2": {"Enter the customer number and the confirmation number above.", "上記のお客様番号と確認番号を入力します。"},
	"step_payeasy_3": {"Check the amount and the payee, then pay from your account or in cash.", "金額とお支払い先を確認し、口座引き落としまたは現金でお支払いください。"},
	"step_payeasy_4": {"Keep the statement: it is your proof of payment.", "お支払いの証明となる明細書を保管してください。"},
	// A bank transfer.
	"step_bank_1": {"In your online banking, at an ATM or at a bank's counter, choose a transfer.", "インターネットバンキング、ATM、銀行窓口のいずれかで振込を選びます。"},
	"step_bank_2": {"Enter the bank, the branch, the account type and the account number above.", "上記の銀行、支店、口座種別、口座番号を入力します。"},
	"step_bank_3": {"Check that the account holder is the one shown, and transfer the amount.", "口座名義が表示と同じであることを確認し、金額をお振り込みください。"},
	"step_bank_4": {"If you send less, the rest is still due: transfer it to the same account before the deadline.", "お振込み額が不足した場合は、期限までに残りの金額を同じ口座へお振り込みください。"},

	"bank":           {"Bank", "銀行名"},
	"bank_code":      {"Bank code %s", "金融機関コード %s"},
	"branch":         {"Branch", "支店名"},
	"branch_code":    {"Branch code %s", "支店コード %s"},
	"account_type":   {"Account type", "口座種別"},
	"acct_ordinary":  {"Ordinary", "普通"},
	"acct_checking":  {"Current", "当座"},
	"acct_savings":   {"Savings", "貯蓄"},
	"account_number": {"Account number", "口座番号"},
	"account_holder": {"Account holder", "口座名義"},
	"deposited":      {"Received so far", "入金済み金額"},
	"due":            {"Still due", "残りのお支払い金額"},
	"of_total":       {"of %s", "（ご請求金額 %s）"},

	"pay_unpaid":       {"No transfer received yet", "未入金"},
	"pay_insufficient": {"Part paid: %s still due", "一部入金済み（残り %s）"},
	"pay_short":        {"Part paid: %s short", "一部入金（%s 不足）"},
	"pay_exact":        {"Paid in full", "全額入金済み"},
	"pay_exceeded":     {"Overpaid by %s", "%s の超過入金"},
	"pay_exceeded_note": {
		"More than the amount has been transferred. The shop will contact you about the difference.",
		"ご請求金額を超えてお振込みいただきました。差額についてはショップからご連絡いたします。",
	},

	"copy":        {"Copy", "コピー"},
	"copied":      {"Copied", "コピーしました"},
	"copy_failed": {"Select the number and copy it", "番号を選択してコピーしてください"},
	"print":       {"Print", "印刷する"},
	"keep": {
		"Print this page or write the numbers down: you need them to pay.",
		"お支払いの際に必要ですので、このページを印刷するか番号をお控えください。",
	},
	"back":        {"Back to %s", "%s に戻る"},
	"footer_live": {"Payment instructions by Kessai", "Kessai によるお支払いのご案内"},

	"r_successful_title": {"Payment received", "お支払いを確認しました"},
	"r_successful_konbini": {
		"You paid %s at %s. Thank you.",
		"%sを%sでお支払いいただきました。ありがとうございました。",
	},
	"r_successful_bank": {
		"Your transfer of %s has been received. Thank you.",
		"%sのお振込みを確認しました。ありがとうございました。",
	},
	"r_expired_title": {"The payment deadline has passed", "お支払い期限が過ぎました"},
	"r_expired_konbini": {
		"This payment was not made by %s, and it can no longer be made: do not use its numbers. Please contact the shop.",
		"%sまでにお支払いがなかったため、このお支払いはできなくなりました。番号は使用せず、ショップにお問い合わせください。",
	},
	"r_expired_bank": {
		"The amount was not transferred by %s, so this payment has ended: do not transfer to this account any more. For money already sent, please contact the shop.",
		"%sまでにお振込みが完了しなかったため、このお支払いは終了しました。この口座へはお振り込みにならないでください。お振込み済みの金額については、ショップにお問い合わせください。",
	},
	"r_canceled_title": {"This payment was canceled", "このお支払いはキャンセルされました"},
	"r_canceled_konbini": {
		"The shop canceled this payment: there is nothing to pay. Do not use its numbers.",
		"ショップがこのお支払いをキャンセルしました。お支払いの必要はありません。番号は使用しないでください。",
	},
	"r_canceled_bank": {
		"The shop canceled this payment: there is nothing to pay. Do not transfer to this account.",
		"ショップがこのお支払いをキャンセルしました。お支払いの必要はありません。この口座へはお振り込みにならないでください。",
	},
	"r_failed_title": {"This payment has ended", "このお支払いは終了しました"},
	"r_failed_text": {
		"This payment can no longer be made. Please contact the shop.",
		"このお支払いはできなくなりました。ショップにお問い合わせください。",
	},
	"paid_on":     {"Paid on", "お支払い日時"},
	"canceled_on": {"Canceled on", "キャンセル日時"},

	"sim_title": {"Sandbox: what the shopper does", "サンドボックス：購入者の操作"},
	"sim_badge": {"Test mode only", "テストモード限定"},
	"sim_lead_konbini": {
		"A real shopper pays at the store; these buttons stand in for that. They appear on test-mode payments only, never on a live one.",
		"実際には購入者が店舗で支払います。このボタンはその代わりです。テストモードの決済にのみ表示され、本番の決済には表示されません。",
	},
	"sim_lead_bank": {
		"A real shopper's bank sends the money; this form stands in for it. It appears on test-mode payments only, never on a live one.",
		"実際には購入者の銀行から入金されます。このフォームはその代わりです。テストモードの決済にのみ表示され、本番の決済には表示されません。",
	},
	"sim_pay":      {"Pay at the counter", "店頭で支払う"},
	"sim_pay_hint": {"The store takes the money: the charge succeeds.", "店舗で支払われ、決済が成功します。"},
	"sim_lead_pay_easy": {
		"A real shopper pays at an ATM or in online banking; these buttons stand in for that. They appear on test-mode payments only, never on a live one.",
		"実際には購入者がATMまたはインターネットバンキングで支払います。このボタンはその代わりです。テストモードの決済にのみ表示され、本番の決済には表示されません。",
	},
	"sim_pay_pay_easy":      {"Pay at the ATM", "ATMで支払う"},
	"sim_pay_hint_pay_easy": {"The bank takes the money: the charge succeeds.", "銀行で支払われ、決済が成功します。"},
	"sim_expire":            {"Let the deadline pass", "支払期限を過ぎさせる"},
	"sim_expire_hint": {
		"Nobody pays in time: the charge fails (327).",
		"期限内に支払われず、決済は失敗します（327）。",
	},
	"sim_deposit":        {"Deposit", "入金する"},
	"sim_deposit_amount": {"Amount deposited (yen)", "入金額（円）"},
	"sim_deposit_hint": {
		"What is still due, unless you change it. Less leaves the rest due; more is recorded as an overpayment.",
		"初期値は残りの金額です。少なければ残額が残り、多ければ超過入金として記録されます。",
	},

	"err_amount_empty": {"Enter the amount deposited.", "入金額を入力してください。"},
	"err_amount_nan": {
		"Enter the amount as a whole number of yen, such as 1200.",
		"入金額は 1200 のように円単位の整数で入力してください。",
	},
	"err_amount_min": {"The amount must be at least ¥1.", "入金額は1円以上にしてください。"},
	"err_amount_max": {"The amount must be at most %s.", "入金額は%s以下にしてください。"},
	"err_ended": {
		"This payment has already ended (%s): nothing was done.",
		"このお支払いはすでに終了しています（%s）。操作は行われませんでした。",
	},
})
