package message

// Sandbox is the sandbox acquirer's approval pages on the gateway's
// origin: the 3-D Secure challenge (the issuer's "ACS", keys acs_), the
// wallet simulator (wallet_), their results (r_<kind>_<status>, kind
// 3ds, 3ds_token or wallet) and error pages (e_). brand_ are the wallets'
// names as each language writes them.
var Sandbox = newTable("sandbox", map[string]Text{
	"sandbox":  {"Sandbox", "サンドボックス"},
	"merchant": {"Merchant", "加盟店"},
	"amount":   {"Amount", "金額"},
	"powered":  {"Kessai sandbox: no real money moves", "Kessai サンドボックス：実際の請求は発生しません"},

	"acs_title":  {"Verify this payment", "本人認証"},
	"acs_issuer": {"Kessai Test Bank · 3-D Secure", "Kessai テスト銀行・3-D セキュア"},
	"acs_lead": {
		"Your card issuer asks you to confirm this payment with a one-time code.",
		"カード発行会社がワンタイムパスワードによるお支払いの確認を求めています。",
	},
	"acs_token_lead": {
		"Your card issuer asks you to confirm this card for %s with a one-time code.",
		"カード発行会社が %s でのカードのご利用をワンタイムパスワードで確認しています。",
	},
	"acs_card":        {"Card", "カード"},
	"acs_card_ending": {"ending in %s", "末尾 %s"},
	"acs_code":        {"One-time code", "ワンタイムパスワード"},
	"acs_code_hint": {
		"Enter the 6-digit code your bank sent you.",
		"銀行から届いた 6 桁のコードを入力してください。",
	},
	"acs_sandbox_code": {
		"In the sandbox the code is %s; any other code is wrong, and three wrong codes fail the authentication.",
		"サンドボックスではコードは %s です。それ以外は誤りとなり、3 回誤ると認証に失敗します。",
	},
	"acs_wrong": {
		"That code is not right. Tries left: %d.",
		"コードが正しくありません。残り %d 回入力できます。",
	},
	"acs_submit":    {"Submit", "送信"},
	"acs_cancel":    {"Cancel", "キャンセル"},
	"acs_time_left": {"This page expires in", "このページの有効期限まで"},

	"wallet_title": {"Pay with %s", "%s で支払う"},
	"wallet_lead": {
		"This is the sandbox's %s payment screen. Choose what the shopper does; no real money moves.",
		"サンドボックスの %s 決済画面です。購入者の操作を選んでください。実際の請求は発生しません。",
	},
	"wallet_scan": {
		"Or scan this code with a phone to pay there: this page follows.",
		"スマートフォンでこのコードを読み取って支払うこともできます。このページも連動します。",
	},
	"wallet_qr_alt":   {"QR code of this payment screen", "この決済画面の QR コード"},
	"wallet_pay":      {"Pay", "支払う"},
	"wallet_fail":     {"Fail", "失敗させる"},
	"wallet_cancel":   {"Cancel", "キャンセル"},
	"wallet_expire":   {"Let it expire", "期限切れにする"},
	"wallet_pay_hint": {"The payment succeeds.", "支払いが成功します。"},
	"wallet_fail_hint": {
		"The wallet refuses the payment (340).",
		"ウォレットが支払いを拒否します（340）。",
	},
	"wallet_cancel_hint": {
		"The shopper cancels the payment (345).",
		"購入者が支払いをキャンセルします（345）。",
	},
	"wallet_expire_hint": {
		"Nobody pays in time (327).",
		"時間内に支払われません（327）。",
	},
	"wallet_time_left": {"Time left", "残り時間"},

	"brand_pay_pay":     {"PayPay", "PayPay"},
	"brand_alipay":      {"Alipay", "Alipay（支付宝）"},
	"brand_alipay_plus": {"Alipay+", "Alipay+"},
	"brand_we_chat":     {"WeChat Pay", "WeChat Pay（微信支付）"},
	"brand_d_barai":     {"d Barai", "d払い"},
	"brand_rakuten":     {"Rakuten Pay", "楽天ペイ"},
	"brand_wallet":      {"Wallet", "ウォレット"},

	"r_close": {"You can close this page now.", "このページは閉じていただいて構いません。"},

	"r_wallet_successful_title": {"Payment complete", "お支払いが完了しました"},
	"r_wallet_successful_text": {
		"You paid %s to %s. The charge is successful.",
		"%s を %s にお支払いいただきました。決済は成功しました。",
	},
	"r_wallet_failed_title": {"Payment refused", "お支払いが拒否されました"},
	"r_wallet_failed_text": {
		"The wallet refused the payment. The charge failed (340, PAYMENT_WALLET_REJECTED); no money was taken.",
		"ウォレットがお支払いを拒否しました。決済は失敗しました（340、PAYMENT_WALLET_REJECTED）。代金は請求されていません。",
	},
	"r_wallet_canceled_title": {"Payment canceled", "お支払いをキャンセルしました"},
	"r_wallet_canceled_text": {
		"The payment was canceled, and so is the charge; no money was taken.",
		"お支払いはキャンセルされ、決済もキャンセルされました。代金は請求されていません。",
	},
	"r_wallet_expired_title": {"Payment expired", "お支払いの期限が切れました"},
	"r_wallet_expired_text": {
		"The payment was not made in time. The charge failed (327, CONFIRMATION_PERIOD_EXPIRED); no money was taken.",
		"期限内にお支払いがありませんでした。決済は失敗しました（327、CONFIRMATION_PERIOD_EXPIRED）。代金は請求されていません。",
	},

	"r_3ds_successful_title": {"Verification complete", "本人認証が完了しました"},
	"r_3ds_successful_text": {
		"Your bank confirmed the payment. The card is now being charged; the shop will show the result.",
		"銀行がお支払いを確認しました。引き続きカードの決済を行います。結果はショップに表示されます。",
	},
	"r_3ds_failed_title": {"Verification failed", "本人認証に失敗しました"},
	"r_3ds_failed_text": {
		"The code was wrong three times. The charge failed (358, THREE_DS_COULD_NOT_BE_COMPLETED); no money was taken.",
		"コードを 3 回誤りました。決済は失敗しました（358、THREE_DS_COULD_NOT_BE_COMPLETED）。代金は請求されていません。",
	},
	"r_3ds_canceled_title": {"Verification canceled", "本人認証をキャンセルしました"},
	"r_3ds_canceled_text": {
		"The verification was canceled, so the card will not be charged; no money was taken.",
		"本人認証はキャンセルされたため、カードへの請求は行われません。代金は請求されていません。",
	},
	"r_3ds_expired_title": {"Verification expired", "本人認証の期限が切れました"},
	"r_3ds_expired_text": {
		"The verification was not finished in time. The charge failed (358, THREE_DS_COULD_NOT_BE_COMPLETED); no money was taken.",
		"期限内に本人認証が完了しませんでした。決済は失敗しました（358、THREE_DS_COULD_NOT_BE_COMPLETED）。代金は請求されていません。",
	},

	"r_3ds_token_successful_title": {"Card verified", "カードを確認しました"},
	"r_3ds_token_successful_text": {
		"Your bank confirmed the card; the shop may now use it for payments.",
		"銀行がカードを確認しました。ショップはこのカードでお支払いを受けられます。",
	},
	"r_3ds_token_failed_title": {"Verification failed", "本人認証に失敗しました"},
	"r_3ds_token_failed_text": {
		"The code was wrong three times. The card was not verified.",
		"コードを 3 回誤りました。カードは確認されませんでした。",
	},
	"r_3ds_token_canceled_title": {"Verification canceled", "本人認証をキャンセルしました"},
	"r_3ds_token_canceled_text": {
		"The verification was canceled. The card was not verified.",
		"本人認証はキャンセルされました。カードは確認されませんでした。",
	},
	"r_3ds_token_expired_title": {"Verification expired", "本人認証の期限が切れました"},
	"r_3ds_token_expired_text": {
		"The verification was not finished in time. The card was not verified.",
		"期限内に本人認証が完了しませんでした。カードは確認されませんでした。",
	},

	"e_not_found_title": {"Page not found", "ページが見つかりません"},
	"e_not_found_text": {
		"There is no payment screen at this address. It may be for another kind of payment, or the address is incomplete.",
		"このアドレスに決済画面はありません。別の種類の決済のアドレスか、アドレスが不完全な可能性があります。",
	},
	"e_forbidden_title": {"This request was refused", "リクエストを受け付けられませんでした"},
	"e_forbidden_text": {
		"The request did not come from this payment screen. Nothing was changed; please reload the page and try again.",
		"このリクエストは決済画面から送信されたものではありません。何も変更していません。ページを再読み込みしてもう一度お試しください。",
	},
	"e_invalid_title": {"That is not possible here", "この操作はできません"},
	"e_invalid_text": {
		"This payment screen does not offer that action. Nothing was changed.",
		"この決済画面ではその操作はできません。何も変更していません。",
	},
	"e_live_title": {"Test mode only", "テストモード限定"},
	"e_live_text": {
		"This is a live payment: the sandbox does not act on it. Nothing was changed.",
		"本番の決済のため、サンドボックスでは操作できません。何も変更していません。",
	},
	"e_internal_title": {"Something went wrong", "エラーが発生しました"},
	"e_internal_text": {
		"The payment screen had a problem. Please try again in a moment.",
		"決済画面で問題が発生しました。しばらくしてからもう一度お試しください。",
	},
})
