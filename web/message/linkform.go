package message

// LinkForm is the hosted link form (GET /forms/{id}): the payment page a
// shop links to, its result page and its error pages. Keys starting p_
// explain to the shop's developer what is wrong with a link; e_ are error
// pages (title and text), r_ the results.
var LinkForm = newTable("link form", map[string]Text{
	"title_pay":    {"Pay %s", "%s へのお支払い"},
	"pay_amount":   {"Pay %s", "%s を支払う"},
	"save_card":    {"Save card", "カードを登録する"},
	"order":        {"Order", "ご注文番号"},
	"amount":       {"Amount due", "お支払い金額"},
	"amount_label": {"Amount", "金額"},
	"customer":     {"Customer", "お名前"},
	"email":        {"E-mail", "メールアドレス"},
	"phone":        {"Phone", "電話番号"},
	"test_mode":    {"Test mode", "テストモード"},
	"test_hint": {
		"Test mode: no real money moves. Try 4000\u00a00200\u00a00000\u00a00000 (succeeds) or 4111\u00a01111\u00a01111\u00a01111 (declined).",
		"テストモードです。実際の請求は発生しません。4000\u00a00200\u00a00000\u00a00000（成功）または 4111\u00a01111\u00a01111\u00a01111（拒否）をお試しください。",
	},
	"test_hint_other": {
		"Test mode: no real money moves. The wallets' and the instructions' pages let you simulate the payment.",
		"テストモードです。実際の請求は発生しません。ウォレットやお支払い方法の案内ページで、支払いを試せます。",
	},
	"secure_other": {
		"What you enter goes straight to Kessai over an encrypted connection.",
		"入力内容は暗号化された通信で Kessai に直接送信されます。",
	},
	"card_details": {"Card details", "カード情報"},
	"pay_method":   {"How would you like to pay?", "お支払い方法"},
	"token_summary": {
		"Save a card with %s for later payments.",
		"%s での今後のお支払いのためにカードを登録します。",
	},
	"auth_note": {
		"Your card is authorised now and charged when the order ships.",
		"カードの与信のみを行い、発送時に請求が確定します。",
	},
	"secure": {
		"Card details go straight to Kessai over an encrypted connection; %s never sees them.",
		"カード情報は暗号化された通信で Kessai に直接送信され、%s には渡りません。",
	},
	"cancel":     {"Cancel and return to the shop", "支払いをやめてショップに戻る"},
	"processing": {"Processing your payment…", "お支払いを処理しています…"},
	"loading": {
		"Loading the secure payment form…",
		"安全な決済フォームを読み込んでいます…",
	},
	"load_failed": {
		"The payment form could not be loaded. Please reload the page.",
		"決済フォームを読み込めませんでした。ページを再読み込みしてください。",
	},
	"powered": {"Payments by Kessai", "Kessai による決済"},
	"noscript": {
		"This payment page needs JavaScript to keep your card details safe. Please enable it and reload.",
		"カード情報を安全に扱うため、このページには JavaScript が必要です。有効にしてから再読み込みしてください。",
	},
	"return": {"Return to the shop", "ショップに戻る"},
	"close_hint": {
		"You can close this page now.",
		"このページは閉じていただいて構いません。",
	},
	"charge_id":       {"Payment ID", "決済 ID"},
	"subscription_id": {"Subscription ID", "定期課金 ID"},
	"subscription":    {"Subscription", "定期課金"},
	"token_id":        {"Card token", "カードトークン"},
	"go_back":         {"Go back", "戻る"},
	"details":         {"Details for the shop's developer", "ショップの開発者向けの詳細"},

	"p_appid_missing": {
		"appId is missing: the link needs the store's app token.",
		"appId がありません。ストアのアプリトークンが必要です。",
	},
	"p_appid_invalid": {
		"appId is not a valid, active store app token.",
		"appId が有効なストアのアプリトークンではありません。",
	},
	"p_checkout": {
		"checkout must be \"payment\" or \"token\".",
		"checkout は \"payment\" または \"token\" を指定してください。",
	},
	"p_token_type": {
		"tokenType must be one_time, recurring or subscription.",
		"tokenType は one_time、recurring、subscription のいずれかです。",
	},
	"p_currency": {"currency %q is not supported.", "通貨 %q には対応していません。"},
	"p_currency_store": {
		"this store does not accept %s.",
		"このストアは %s を受け付けていません。",
	},
	"p_amount_missing": {"amount is required for a payment.", "支払いには amount が必要です。"},
	"p_amount": {
		"amount must be a positive whole number in the currency's minor unit.",
		"amount は通貨の最小単位による正の整数で指定してください。",
	},
	"p_amount_range": {
		"amount must be between %s and %s.",
		"amount は %s から %s の間で指定してください。",
	},
	"p_bool": {"%s must be true or false.", "%s は true または false を指定してください。"},
	"p_email": {
		"emailAddress is not an e-mail address.",
		"emailAddress がメールアドレスの形式ではありません。",
	},
	"p_text": {
		"%s is too long or contains control characters.",
		"%s が長すぎるか、制御文字を含んでいます。",
	},
	"p_locale": {"locale must be ja, en or auto.", "locale は ja、en、auto のいずれかです。"},
	"p_payment_types": {
		"paymentTypes must be a comma-separated list of payment types, such as card,pay_pay_online.",
		"paymentTypes は card,pay_pay_online のようにカンマ区切りで指定してください。",
	},
	"p_redirect": {
		"%s must be an http(s) URL (up to 1024 characters) on one of the app token's domains.",
		"%s はアプリトークンのドメイン上の http(s) URL（1024 文字以内）である必要があります。",
	},
	"p_sub_token": {
		"the subscription parameters (subscriptionPeriod …) need checkout=payment and tokenType=subscription.",
		"定期課金のパラメーター（subscriptionPeriod など）には checkout=payment と tokenType=subscription が必要です。",
	},
	"p_sub_period": {
		"give either subscriptionPeriod (daily, weekly, biweekly, monthly, bimonthly, quarterly, semiannually or annually) or subscriptionCyclicalPeriod (an ISO 8601 duration of whole days or more, such as P10D or P1M), not both.",
		"subscriptionPeriod（daily、weekly、biweekly、monthly、bimonthly、quarterly、semiannually、annually）または subscriptionCyclicalPeriod（P10D や P1M のような1日以上の ISO 8601 期間）のどちらか一方を指定してください。",
	},
	"p_sub_initial": {
		"subscriptionInitialAmount must be 0 or a whole number within the currency's limits for a payment.",
		"subscriptionInitialAmount は 0 または通貨の決済金額の範囲内の整数で指定してください。",
	},
	"p_sub_start": {
		"subscriptionStart must be a date (YYYY-MM-DD), today or later.",
		"subscriptionStart は今日以降の日付（YYYY-MM-DD）で指定してください。",
	},
	"p_sub_zone": {
		"subscriptionZoneId must be a time zone name such as Asia/Tokyo.",
		"subscriptionZoneId は Asia/Tokyo のようなタイムゾーン名で指定してください。",
	},
	"p_sub_plan": {
		"subscriptionPlan must be fixed_cycles, with subscriptionQty the number of payments (2 to 1200).",
		"subscriptionPlan は fixed_cycles とし、subscriptionQty に支払い回数（2〜1200）を指定してください。",
	},
	"p_too_long": {
		"the parameters are too long to keep for this payment; shorten the redirect URLs.",
		"パラメーターが長すぎるため、この決済で保持できません。リダイレクト URL を短くしてください。",
	},

	"e_invalid_title": {"This payment link is not valid", "この決済リンクは無効です"},
	"e_invalid_text": {
		"The shop sent you here with a link the payment page cannot use. Please return to the shop and try again, or contact the shop.",
		"ショップから渡されたリンクに問題があり、決済ページを表示できません。ショップに戻ってやり直すか、ショップにお問い合わせください。",
	},
	"e_not_found_title": {"Page not found", "ページが見つかりません"},
	"e_not_found_text": {
		"There is no payment page at this address.",
		"このアドレスに決済ページはありません。",
	},
	"e_csrf_title": {"This request was refused", "リクエストを受け付けられませんでした"},
	"e_csrf_text": {
		"The payment could not be confirmed because the request did not come from this payment page. Please reload the page and try again.",
		"このリクエストは決済ページから送信されたものではないため、お支払いを確定できませんでした。ページを再読み込みしてもう一度お試しください。",
	},
	"e_expired_title": {"This payment page has expired", "決済ページの有効期限が切れました"},
	"e_expired_text": {
		"Your session on this payment page ended. If you completed a payment, the shop will still receive it; otherwise please start again from the shop.",
		"決済ページのセッションが終了しました。お支払いが完了している場合はショップに通知されます。完了していない場合はショップからやり直してください。",
	},
	"e_no_payment_title": {"We could not find your payment", "お支払いを確認できませんでした"},
	"e_no_payment_text": {
		"The payment this page reported does not match this order. No redirect was made; please contact the shop if you were charged.",
		"報告されたお支払いがこのご注文と一致しません。リダイレクトは行っていません。請求が発生している場合はショップにお問い合わせください。",
	},
	"e_already_done_title": {
		"This payment page was already used",
		"この決済ページは使用済みです",
	},
	"e_already_done_text": {
		"This order has already been completed with another payment. Please contact the shop if you were charged twice.",
		"このご注文は別のお支払いで完了しています。二重に請求されている場合はショップにお問い合わせください。",
	},
	"e_internal_title": {"Something went wrong", "エラーが発生しました"},
	"e_internal_text": {
		"The payment page had a problem. Please try again in a moment.",
		"決済ページで問題が発生しました。しばらくしてからもう一度お試しください。",
	},

	"r_ok_title": {"Payment successful", "お支払いが完了しました"},
	"r_ok_text": {
		"Thank you! Your payment was received.",
		"ありがとうございます。お支払いを受け付けました。",
	},
	"r_subscribed_title": {"Subscription started", "定期課金のお申し込みが完了しました"},
	"r_subscribed_text": {
		"Thank you! Your subscription has started.",
		"ありがとうございます。定期課金を開始しました。",
	},
	"r_saved_title": {"Card saved", "カードを登録しました"},
	"r_saved_text": {
		"Your card was saved securely for this shop.",
		"このショップ用にカードを安全に登録しました。",
	},
	"r_pending_title": {"Payment is being processed", "お支払いを処理中です"},
	"r_pending_text": {
		"Your payment is still being confirmed. The shop will let you know once it completes.",
		"お支払いの確認中です。完了するとショップからお知らせがあります。",
	},
	"r_failed_title": {"Payment failed", "お支払いができませんでした"},
	"r_failed_text": {
		"Your payment could not be completed. No money was taken.",
		"お支払いを完了できませんでした。代金は請求されていません。",
	},
	"r_canceled_title": {"Payment canceled", "お支払いをキャンセルしました"},
	"r_canceled_text": {
		"You canceled the payment. No money was taken.",
		"お支払いはキャンセルされました。代金は請求されていません。",
	},
})
