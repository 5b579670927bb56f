package message

// Frame is the widget frame's page: the card form merchants embed, served
// by the gateway (GET /widget/frame), and its error page. The amount on
// the pay button is an Amount.
var Frame = newTable("widget frame", map[string]Text{
	"title": {"Card payment", "カード決済"},
	"close": {"Close", "閉じる"},
	"test":  {"Test mode", "テストモード"},
	"testHint": {
		"No real charge is made. Try 4000\u00a00200\u00a00000\u00a00000 with any future date and any CVC.",
		"実際の請求は発生しません。テストカード 4000\u00a00200\u00a00000\u00a00000 と、未来の有効期限、任意のセキュリティコードでお試しください。",
	},
	"testHintWallet": {
		"No real charge is made. The wallet's page is a simulator: pay, refuse or cancel there.",
		"実際の請求は発生しません。ウォレットの画面はテスト用です。そこで支払い、拒否、キャンセルを試せます。",
	},
	"accepted": {"Accepted cards", "ご利用いただけるカード"},
	"email":    {"Email", "メールアドレス"},
	"emailPh":  {"you@example.com", "you@example.com"},
	"number":   {"Card number", "カード番号"},
	"exp":      {"Expiry date", "有効期限"},
	"expPh":    {"MM / YY", "MM / YY"},
	"cvc":      {"Security code", "セキュリティコード"},
	"cvcHint": {
		"3 digits on the back, or 4 on the front for American Express",
		"カード裏面の3桁（American Express は表面の4桁）",
	},
	"name":      {"Cardholder name", "カード名義人"},
	"namePh":    {"TARO YAMADA", "TARO YAMADA"},
	"payAmount": {"Pay %s", "%s を支払う"},
	"pay":       {"Pay", "支払う"},
	"saveCard":  {"Save card", "カードを登録する"},
	"secured":   {"Payments secured by Kessai", "Kessai による安全な決済"},
	"noscript": {
		"Please turn on JavaScript to pay by card.",
		"カードでお支払いいただくには JavaScript を有効にしてください。",
	},
	// Wallets (online payments the shopper approves in the wallet's app
	// or page) and 3-D Secure, when the issuer asks the shopper.
	"walletsLabel": {"Pay with an app", "スマホ決済で支払う"},
	"orCard":       {"Or pay by card", "またはカードで支払う"},
	"qr":           {"QR code to scan with your phone", "スマートフォンで読み取る QR コード"},
	"walletWait":   {"Waiting for your payment…", "お支払いをお待ちしています…"},
	"walletBack":   {"Choose another way to pay", "別の方法で支払う"},
	"threeDSTitle": {"Confirm it is you", "本人認証"},
	"threeDSFrame": {"Your card issuer's confirmation page", "カード会社の認証画面"},
	// Konbini payments and bank transfers: a form of their own beside the
	// card's, chosen with the method switch.
	"titleAny":      {"Payment", "お支払い"},
	"methods":       {"Payment method", "お支払い方法"},
	"methodCard":    {"Card", "カード"},
	"methodKonbini": {"Konbini", "コンビニ"},
	"methodBank":    {"Bank transfer", "銀行振込"},
	"orOther":       {"Or pay another way", "または他の方法で支払う"},
	"store":         {"Convenience store", "お支払いするコンビニ"},
	"storePick":     {"Choose a store", "選択してください"},
	"customerName":  {"Name", "お名前"},
	"customerPh":    {"Taro Yamada", "山田 太郎"},
	"phone":         {"Phone number", "電話番号"},
	"phonePh":       {"090-1234-5678", "090-1234-5678"},
	"phoneHint": {
		"A Japanese number. The store may ask for it when you pay.",
		"日本国内の電話番号です。お支払いの際に必要になる場合があります。",
	},
	"emailOptional": {"Email (optional)", "メールアドレス（任意）"},
	"bank":          {"Bank", "振込先の銀行"},
	"konbiniNote": {
		"You get a payment number to pay with at the store within %d days.",
		"お支払い番号を発行します。%d日以内に店頭でお支払いください。",
	},
	"bankNote": {
		"You get an account of your own to transfer the amount to within %d days.",
		"お客様専用の振込先口座を発行します。%d日以内にお振込みください。",
	},
	"payKonbini": {"Pay %s at a store", "%s をコンビニで支払う"},
	"payBank":    {"Pay %s by bank transfer", "%s を銀行振込で支払う"},
	"continue":   {"Continue", "次へ進む"},
	"testHintKonbini": {
		"No real charge is made. The instructions page lets you pay or let the deadline pass.",
		"実際の請求は発生しません。お支払い方法の案内ページで、支払いや期限切れを試せます。",
	},
	"testHintBank": {
		"No real charge is made. The instructions page lets you make test deposits.",
		"実際の請求は発生しません。振込先の案内ページで、テスト入金を試せます。",
	},
	"slipTitle": {"How to pay", "お支払い方法のご案内"},
	"slipDone":  {"Close", "閉じる"},
	"errTitle":  {"This payment form cannot be shown", "決済フォームを表示できません"},
	"errToken": {
		"The shop's payment settings are not valid (app token). Please contact the shop.",
		"ショップの決済設定（アプリトークン）が正しくありません。ショップにお問い合わせください。",
	},
	"errOrigin": {
		"This page is not allowed to show the shop's payment form. Please contact the shop.",
		"このページではショップの決済フォームを表示できません。ショップにお問い合わせください。",
	},
	"errParams": {
		"The payment details sent by the shop are incomplete or not valid. Please contact the shop.",
		"ショップから送られたお支払い情報が不足しているか正しくありません。ショップにお問い合わせください。",
	},
	"errCards": {
		"Card payments are not available for this shop.",
		"このショップではカード決済をご利用いただけません。",
	},
})

// FrameScript is what the scripts of the widget frame show: widget.js
// (the outcome of a payment, the e-mail field, the card fields until the
// WebAssembly runs) and the WebAssembly (the card fields). The frame
// embeds the whole table, in the page's language, in its configuration, so
// neither script has texts of its own.
//
// The card fields' keys are "<field>.<state>": number, exp, cvc and name,
// each required (empty on submit), incomplete (more typing can still make
// it right), invalid, and for the expiry expired; field.generic is for a
// state without a text of its own. The Japanese of these is what a
// Japanese checkout says beside a field: polite, short, no full stop.
var FrameScript = newTable("widget frame scripts", map[string]Text{
	"number.required":   {"Enter the card number.", "カード番号を入力してください"},
	"number.invalid":    {"The card number is not valid.", "カード番号が正しくありません"},
	"number.incomplete": {"The card number is incomplete.", "カード番号の桁数が足りません"},
	"exp.required":      {"Enter the expiration date as MM/YY.", "有効期限を MM/YY の形式で入力してください"},
	"exp.incomplete":    {"Enter the expiration date as MM/YY.", "有効期限を MM/YY の形式で入力してください"},
	"exp.invalid":       {"The expiration date is not valid.", "有効期限が正しくありません"},
	"exp.expired":       {"This card has expired.", "このカードは有効期限が切れています"},
	"cvc.required":      {"Enter the security code.", "セキュリティコードを入力してください"},
	"cvc.incomplete":    {"The security code is incomplete.", "セキュリティコードの桁数が足りません"},
	"cvc.invalid":       {"The security code is not valid.", "セキュリティコードが正しくありません"},
	"name.required":     {"Enter the cardholder name.", "カード名義人を入力してください"},
	"name.invalid": {
		"Enter the cardholder name as shown on the card, up to 64 characters.",
		"カード名義人はカードに記載のとおり64文字以内で入力してください",
	},
	"field.generic": {"Please check this field.", "入力内容をご確認ください"},

	// A konbini payment's fields; phone.<state> follows the field
	// package's MessageKey, as the card fields' do.
	"store.required": {"Choose a convenience store.", "コンビニを選択してください"},
	"cname.required": {"Enter your name.", "お名前を入力してください"},
	"cname.invalid": {
		"Enter your name, up to 60 characters.",
		"お名前は60文字以内で入力してください",
	},
	"phone.required": {"Enter your phone number.", "電話番号を入力してください"},
	"phone.invalid": {
		"Enter a phone number of 10 or 11 digits, such as 090-1234-5678.",
		"電話番号は 090-1234-5678 のように10桁か11桁で入力してください",
	},
	"phone.foreign": {
		"Enter a Japanese phone number.",
		"日本国内の電話番号を入力してください",
	},
	"bank.required": {"Choose a bank.", "銀行を選択してください"},

	"email.required": {"Enter your email address.", "メールアドレスを入力してください"},
	"email.invalid": {
		"Enter a valid email address.",
		"正しいメールアドレスを入力してください",
	},
	"declined": {
		"Your card was declined. Please try another card or contact your card issuer.",
		"カードが承認されませんでした。別のカードをお試しいただくか、カード会社にお問い合わせください。",
	},
	"expiredCard": {
		"This card has expired. Please use another card.",
		"このカードは有効期限が切れています。別のカードをご利用ください。",
	},
	"incorrectCvc": {
		"The security code is incorrect. Please check it and try again.",
		"セキュリティコードが正しくありません。ご確認のうえ、もう一度お試しください。",
	},
	"contactBank": {
		"Your card issuer declined the payment. Please contact them or use another card.",
		"カード会社によりお支払いが承認されませんでした。カード会社にお問い合わせいただくか、別のカードをご利用ください。",
	},
	"threeDS": {
		"Card authentication (3-D Secure) failed. Please try again or use another card.",
		"本人認証（3Dセキュア）に失敗しました。もう一度お試しいただくか、別のカードをご利用ください。",
	},
	"processing": {
		"The payment could not be processed. Please try again in a moment.",
		"決済を処理できませんでした。しばらくしてからもう一度お試しください。",
	},
	"tooQuick": {
		"This card was just used. Please wait a moment before trying it again.",
		"このカードは直前に使用されています。少し時間をおいてからもう一度お試しください。",
	},
	"tooMany": {
		"Too many attempts. Please wait a minute and try again.",
		"試行回数が多すぎます。1分ほどおいてからもう一度お試しください。",
	},
	"network": {
		"Could not reach the payment server. Check your connection and try again.",
		"決済サーバーに接続できませんでした。通信環境をご確認のうえ、もう一度お試しください。",
	},
	"config": {
		"This payment form is not set up correctly. Please contact the shop.",
		"決済フォームの設定に問題があります。ショップにお問い合わせください。",
	},
	"amount": {
		"This amount cannot be paid by card here. Please contact the shop.",
		"この金額はカードでお支払いいただけません。ショップにお問い合わせください。",
	},
	"testCardLive": {
		"Test cards cannot be used for real payments. Please use your own card.",
		"テストカードは実際のお支払いにはご利用いただけません。お手持ちのカードをご利用ください。",
	},
	"expired": {
		"This payment session has expired. Please try again.",
		"お支払いの有効期限が切れました。もう一度お試しください。",
	},
	"unavailable": {
		"Card payments are not available right now. Please try again later.",
		"現在カード決済をご利用いただけません。しばらくしてからもう一度お試しください。",
	},
	"generic": {
		"Something went wrong. Please try again.",
		"エラーが発生しました。もう一度お試しください。",
	},
	"awaiting": {
		"Waiting for confirmation from your card issuer…",
		"カード会社の確認を待っています…",
	},
	"walletTitle": {"Pay with %s", "%s で支払う"},
	"walletScan": {
		"Scan the QR code with your phone, or open %s on this device.",
		"スマートフォンで QR コードを読み取るか、この端末で %s を開いてください。",
	},
	"walletHint": {"Open %s to pay.", "%s を開いてお支払いください。"},
	"walletOpen": {"Open %s", "%s を開く"},
	"walletRefused": {
		"The payment was declined in the app. Please try again or choose another way to pay.",
		"アプリでお支払いが承認されませんでした。もう一度お試しいただくか、別のお支払い方法をお選びください。",
	},
	"walletExpired": {
		"The time to pay has run out. Please try again.",
		"お支払いの期限が切れました。もう一度お試しください。",
	},
	"walletCanceled": {
		"The payment was canceled. Please try again or choose another way to pay.",
		"お支払いがキャンセルされました。もう一度お試しいただくか、別のお支払い方法をお選びください。",
	},
	"chooseMethod": {"Please choose how to pay.", "お支払い方法をお選びください。"},
	"slipFailed": {
		"The payment could not be started. Please try again or choose another way to pay.",
		"お支払いを開始できませんでした。もう一度お試しいただくか、別のお支払い方法をお選びください。",
	},
	"slipUnavailable": {
		"This way to pay is not available right now. Please choose another.",
		"このお支払い方法は現在ご利用いただけません。別の方法をお選びください。",
	},
	"slipSaved":  {"Payment details received", "お支払い情報を受け付けました"},
	"busy":       {"A payment is already in progress.", "お支払いの処理中です。"},
	"paid":       {"Payment complete", "お支払いが完了しました"},
	"authorized": {"Payment authorised", "与信が完了しました"},
	"saved":      {"Card saved", "カード情報を登録しました"},
	"subscribed": {"Subscription started", "定期課金のお申し込みが完了しました"},
	"doneHint":   {"Thank you.", "ありがとうございました。"},
	"working":    {"Processing…", "処理中…"},
	"timeout": {
		"The payment is taking longer than expected. Please check with the shop before trying again.",
		"お支払いの処理に時間がかかっています。再度お試しになる前にショップにご確認ください。",
	},
})
