package message

// Demo is the demo storefront, Kessai Coffee: a shop of its own on its own
// origin, which pays through the gateway as any merchant would. Keys
// starting e_ are its error pages (title and text).
var Demo = newTable("demo storefront", map[string]Text{
	"meta_description": {
		"Kessai Coffee: a demo shop for the Kessai payment gateway.",
		"Kessai Coffee — Kessai 決済ゲートウェイのデモショップ",
	},
	"skip":        {"Skip to content", "本文へ移動"},
	"banner_pill": {"Demo", "デモ"},
	"banner": {
		"A test-mode shop for the Kessai payment gateway: no real money moves.",
		"Kessai 決済ゲートウェイのテストモードのショップです。実際の請求は発生しません。",
	},
	"banner_link": {"Test cards", "テストカード"},
	"nav_label":   {"Main", "メイン"},
	"nav_shop":    {"Shop", "ショップ"},
	"nav_orders":  {"Orders", "注文履歴"},
	"nav_cart":    {"Cart", "カート"},
	"cart_count":  {"%d items", "%d 点"},
	"lang_label":  {"Language", "言語"},
	"footer": {
		"Small-batch coffee from an imaginary roastery in Tokyo.",
		"東京の架空の小さな焙煎所のコーヒー。",
	},
	"footer_gateway": {
		"Payments are taken by the Kessai gateway at",
		"決済は Kessai ゲートウェイで行われます：",
	},

	"home_title":  {"Small-batch coffee", "小さな焙煎所のコーヒー"},
	"hero_kicker": {"Kessai demo storefront", "Kessai デモストア"},
	"hero_title": {
		"Small-batch coffee, roasted in Tokyo.",
		"東京の小さな焙煎所から、焙きたてのコーヒーを。",
	},
	"hero_text": {
		"A real little shop wired to the Kessai gateway. Add something to your cart and pay with a test card — in a pop-up, inside the page, with a plain HTML form or on Kessai's hosted page. Every payment is checked by this shop's server before the order counts.",
		"Kessai ゲートウェイにつながった、本物の小さなショップです。商品をカートに入れて、テストカードでお支払いください。ポップアップ、ページ内フォーム、HTML フォーム、Kessai のホスト型決済ページの4通りを試せます。注文は必ずショップのサーバーが決済を確認してから確定します。",
	},
	"hero_cta":         {"Browse the coffee", "コーヒーを見る"},
	"test_cards_title": {"Test cards", "テストカード"},
	"test_ok":          {"succeeds", "成功"},
	"test_ng":          {"declined", "拒否"},
	"test_any": {
		"Any future expiry date, any 3-digit CVC and any name.",
		"有効期限は未来の日付、セキュリティコードは任意の3桁、名義は自由です。",
	},
	"test_3ds": {"3-D Secure, code 123456", "3Dセキュア（コード 123456）"},
	"test_paypay": {
		"PayPay: choose it in the pop-up, then scan the QR code or open the test page, and press Pay there.",
		"PayPay：ポップアップで選び、QR コードを読み取るかテスト画面を開いて「支払う」を押してください。",
	},
	"shop_title": {"Our coffee", "コーヒー豆と道具"},
	"shop_sub": {
		"Roasted every Monday and Thursday. Prices include tax; shipping is free.",
		"毎週月曜・木曜に焙煎。価格は税込、送料無料です。",
	},
	"add_to_cart": {"Add to cart", "カートに入れる"},
	"add_named":   {"Add %s to cart", "%s をカートに入れる"},
	"in_cart":     {"%d in your cart", "カートに %d 点"},
	"added":       {"%s is in your cart.", "%s をカートに入れました。"},
	"view_cart":   {"View cart", "カートを見る"},
	"how_title":   {"What happens when you pay", "お支払いの仕組み"},
	"how_1_title": {"The card form comes from the gateway", "カード入力欄はゲートウェイから"},
	"how_1": {
		"This page loads one script from Kessai. Card fields live in a frame on the gateway's origin, so this shop never sees a card number.",
		"このページは Kessai のスクリプトを1つ読み込むだけ。カード入力欄はゲートウェイのオリジンのフレーム内にあり、ショップはカード番号に触れません。",
	},
	"how_2_title": {"The shop gets only an id", "ショップが受け取るのは ID だけ"},
	"how_2": {
		"When the payment succeeds, the widget hands this page the charge id and nothing else.",
		"決済が成功すると、ウィジェットはこのページに決済 ID だけを渡します。",
	},
	"how_3_title": {"The shop's server checks it", "ショップのサーバーが確認"},
	"how_3": {
		"Before an order counts as paid, the shop's server asks the gateway — with its secret — whether that charge really is for this cart's amount.",
		"注文を確定する前に、ショップのサーバーがシークレット付きでゲートウェイに問い合わせ、その決済がカートの金額と一致するかを確かめます。",
	},

	"cart_title": {"Your cart", "カート"},
	"cart_empty": {
		"Your cart is empty. The beans are waiting.",
		"カートは空です。コーヒー豆がお待ちしています。",
	},
	"continue_shopping": {"Continue shopping", "買い物を続ける"},
	"remove":            {"Remove", "削除"},
	"remove_named":      {"Remove %s", "%s を削除"},
	"dec_named":         {"One fewer %s", "%s を1つ減らす"},
	"inc_named":         {"One more %s", "%s を1つ増やす"},
	"qty":               {"Quantity", "数量"},
	"summary":           {"Order summary", "ご注文内容"},
	"subtotal":          {"Subtotal", "小計"},
	"shipping":          {"Shipping", "送料"},
	"free":              {"Free", "無料"},
	"total":             {"Total (tax incl.)", "合計（税込）"},
	"checkout_btn":      {"Proceed to checkout", "レジに進む"},

	"checkout_title": {"Checkout", "お支払い"},
	"crumbs":         {"Breadcrumb", "パンくずリスト"},
	"pay_how":        {"Choose how to pay", "お支払い方法を選択"},
	"order_ref":      {"Order", "注文番号"},
	"pay_amount":     {"Pay %s", "%s を支払う"},
	"processing":     {"Confirming your payment…", "お支払いを確認しています…"},
	"widget_unavailable": {
		"The payment form could not be loaded from the gateway. Is it running?",
		"ゲートウェイから決済フォームを読み込めませんでした。ゲートウェイは起動していますか？",
	},
	"widget_error": {
		"The payment did not go through. Please check the card details and try again.",
		"お支払いが完了しませんでした。カード情報を確認して、もう一度お試しください。",
	},
	"failed_back": {
		"The payment on the hosted page did not go through. You can try again with any method.",
		"ホスト型決済ページでのお支払いは完了しませんでした。どの方法でも再度お試しいただけます。",
	},
	"m_modal":       {"Pop-up", "ポップアップ"},
	"m_modal_short": {"Widget in a dialog", "ダイアログで入力"},
	"m_modal_text": {
		"Opens Kessai's payment form in a dialog over this page: a card, or PayPay. This is what most shops use.",
		"Kessai の決済フォームをこのページの上にダイアログで開きます。カードのほか PayPay も選べます。最も一般的な組み込み方です。",
	},
	"m_inline":       {"Embedded", "埋め込み"},
	"m_inline_short": {"Form in the page", "ページ内で入力"},
	"m_inline_text": {
		"The card form sits right here, in a frame served by the gateway; this page's own button submits it.",
		"ゲートウェイが配信するフレームで、カード入力フォームをこのページ内に表示します。送信はこのページのボタンから行います。",
	},
	"m_html":       {"HTML form", "HTML フォーム"},
	"m_html_short": {"No JavaScript to write", "JavaScript 不要"},
	"m_html_text": {
		"A <span data-app-id> inside a plain form. The loader turns it into a button, adds univapayChargeId to the form and submits it.",
		"通常のフォームに <span data-app-id> を置くだけ。ローダーがボタンを表示し、フォームに univapayChargeId を追加して送信します。",
	},
	"m_hosted":       {"Hosted page", "決済ページ"},
	"m_hosted_short": {"Pay on Kessai", "Kessai で支払う"},
	"m_hosted_text": {
		"Leave this site and pay on Kessai's hosted payment page; it sends you back here, and this shop checks the payment.",
		"Kessai のホスト型決済ページでお支払いいただきます。完了後このショップに戻り、ショップが決済を確認します。",
	},
	"hosted_btn": {"Continue to the secure payment page", "安全な決済ページへ進む"},
	"code_label": {"How this is embedded", "組み込みコード"},
	"secure_note": {
		"Card details are typed into a frame served by the gateway — this shop never sees them — and the shop's server verifies every payment with the gateway before confirming your order.",
		"カード情報はゲートウェイが配信するフレームに入力され、ショップには渡りません。ショップのサーバーはゲートウェイで決済を確認してから注文を確定します。",
	},

	"orders_title": {"Orders", "注文履歴"},
	"orders_sub": {
		"Every order below was verified by the shop's server with the gateway before it was recorded: through the gateway's API, or by the payment notification the gateway signed.",
		"以下の注文はすべて、ショップのサーバーがゲートウェイで決済を確認してから記録したものです（ゲートウェイの API、またはゲートウェイが署名した決済通知による確認）。",
	},
	"orders_empty": {
		"No orders yet. Buy some coffee with a test card and it will show up here.",
		"まだ注文はありません。テストカードでコーヒーを購入すると、ここに表示されます。",
	},
	"col_order":     {"Order", "注文番号"},
	"col_date":      {"Date", "日時"},
	"col_items":     {"Items", "商品"},
	"col_amount":    {"Amount", "金額"},
	"col_method":    {"Paid with", "支払い方法"},
	"col_status":    {"Status", "状態"},
	"col_charge":    {"Charge ID", "決済 ID"},
	"mode":          {"Mode", "モード"},
	"order_title":   {"Order", "ご注文"},
	"order_heading": {"Order %s", "ご注文 %s"},
	"thanks_title":  {"Thank you for your order!", "ご注文ありがとうございます！"},
	"thanks_text": {
		"The shop's server confirmed your payment with the gateway. Your coffee is on its way (in spirit).",
		"ショップのサーバーがゲートウェイでお支払いを確認しました。コーヒーは（気持ちの上で）発送済みです。",
	},
	"all_orders": {"All orders", "注文履歴を見る"},

	"status_successful": {"Paid", "支払い済み"},
	"status_authorized": {"Authorised", "与信済み"},
	"method_modal":      {"Pop-up widget", "ポップアップ"},
	"method_inline":     {"Embedded widget", "埋め込みフォーム"},
	"method_html":       {"HTML form", "HTML フォーム"},
	"method_hosted":     {"Hosted page", "決済ページ"},
	"method_widget":     {"Widget", "ウィジェット"},
	"method_webhook":    {"Confirmed by the gateway's notification", "ゲートウェイからの通知で確認"},

	"reason":           {"Reason:", "理由："},
	"check_again":      {"Check again", "もう一度確認する"},
	"back_to_checkout": {"Back to checkout", "お支払いに戻る"},
	"back_home":        {"Back to the shop", "ショップに戻る"},

	"e_not_found_title": {"Page not found", "ページが見つかりません"},
	"e_not_found_text": {
		"There is nothing at this address.",
		"このアドレスには何もありません。",
	},
	"e_csrf_title": {"Please try that again", "もう一度お試しください"},
	"e_csrf_text": {
		"The form you sent had expired or came from another site. Reload the page and try again.",
		"送信されたフォームの有効期限が切れているか、別のサイトから送信されました。ページを再読み込みしてもう一度お試しください。",
	},
	"e_unverified_title": {
		"We could not confirm your payment",
		"お支払いを確認できませんでした",
	},
	"e_unverified_text": {
		"The shop checks every payment with the gateway before accepting an order, and this one did not pass. Your order has not been placed.",
		"ショップは注文を受け付ける前に必ずゲートウェイで決済を確認しますが、このお支払いは確認できませんでした。注文は確定していません。",
	},
	"e_declined_title": {"Payment not completed", "お支払いが完了しませんでした"},
	"e_declined_text": {
		"The gateway reports that this payment did not succeed, so no order was placed. You can try again with another card.",
		"ゲートウェイによると、このお支払いは成功しなかったため注文は確定していません。別のカードでもう一度お試しください。",
	},
	"e_pending_title": {"Your payment is still processing", "お支払いを処理中です"},
	"e_pending_text": {
		"The gateway has not finished with this payment yet. Check again in a moment.",
		"ゲートウェイでの処理がまだ完了していません。少し待ってからもう一度確認してください。",
	},
	"e_internal_title": {"Something went wrong", "エラーが発生しました"},
	"e_internal_text": {
		"The shop had a problem saving your order. Please try again.",
		"ご注文の保存中に問題が発生しました。もう一度お試しください。",
	},
})
