package message

// Console is the merchant console (/console/): its frame and sign-in,
// reset and account pages here, its payment pages (consolePayments) and
// its keys and settings pages (consoleKeys) in their own files. Keys:
// title_<page> are page titles, n_ one-shot notices, e_ errors of the
// console itself, code_<CODE> and reason_<REASON> the service's error
// codes and field reasons in words, field_<field> the fields they name.
var Console = newTable("console", consoleTexts(consoleFrame, consolePayments, consoleKeys, consoleSlips))

// consoleTexts merges the console's parts; a key in two parts would leave
// one page with the other's text, so it stops the program at start.
func consoleTexts(parts ...map[string]Text) map[string]Text {
	all := map[string]Text{}
	for _, p := range parts {
		for k, t := range p {
			if _, ok := all[k]; ok {
				panic("message: the console's texts have the key " + k + " twice")
			}
			all[k] = t
		}
	}
	return all
}

var consoleFrame = map[string]Text{
	"console":      {"Kessai console", "Kessai 管理画面"},
	"product":      {"Kessai", "Kessai"},
	"skip":         {"Skip to content", "本文へ移動"},
	"nav_main":     {"Console", "管理画面"},
	"dashboard":    {"Dashboard", "ダッシュボード"},
	"charges":      {"Payments", "決済"},
	"stores":       {"Stores", "店舗"},
	"account":      {"Account", "アカウント"},
	"sign_out":     {"Sign out", "ログアウト"},
	"mode":         {"Mode", "モード"},
	"mode_test":    {"Test", "テスト"},
	"mode_live":    {"Live", "本番"},
	"mode_test_on": {"Test mode: you are looking at test data. No real money moves.", "テストモード：テスト用のデータを表示しています。実際の請求は発生しません。"},
	"switch_live":  {"Switch to live", "本番モードに切り替え"},
	"switch_test":  {"Switch to test", "テストモードに切り替え"},
	"signed_in_as": {"Signed in as %s", "%s でログイン中"},
	"confirm":      {"Confirm", "確定する"},
	"cancel":       {"Cancel", "キャンセル"},
	"back":         {"Back", "戻る"},
	"save":         {"Save", "保存する"},
	"none":         {"None", "なし"},
	"yes":          {"Yes", "はい"},
	"no":           {"No", "いいえ"},
	"footer":       {"Kessai, a self-hosted payment gateway", "Kessai セルフホスト型決済ゲートウェイ"},

	"title_signin":        {"Sign in", "ログイン"},
	"title_reset_request": {"Reset your password", "パスワードの再設定"},
	"title_reset_sent":    {"Check your e-mail", "メールをご確認ください"},
	"title_reset":         {"Choose a new password", "新しいパスワードの設定"},
	"title_mailbox":       {"Local mailbox", "ローカルメールボックス"},
	"title_account":       {"Account", "アカウント"},
	"title_error":         {"Something is wrong", "エラー"},

	"email":            {"E-mail address", "メールアドレス"},
	"password":         {"Password", "パスワード"},
	"sign_in":          {"Sign in", "ログイン"},
	"signin_lead":      {"Sign in to manage your payments, keys and stores.", "決済、API キー、店舗を管理するにはログインしてください。"},
	"forgot":           {"Forgot your password?", "パスワードをお忘れですか？"},
	"wait_seconds":     {"Too many attempts. Wait %d seconds, then try again.", "試行回数が多すぎます。%d 秒待ってから再度お試しください。"},
	"reset_lead":       {"Enter the e-mail address you sign in with. If it belongs to an account, we will send a link to choose a new password. The link works for 30 minutes.", "ログインに使うメールアドレスを入力してください。アカウントが存在する場合、新しいパスワードを設定するためのリンクをお送りします。リンクの有効期限は 30 分です。"},
	"send_link":        {"Send the link", "リンクを送信"},
	"reset_sent_lead":  {"If %s belongs to an account, a link to choose a new password is on its way. It works once, for 30 minutes.", "%s がアカウントに登録されている場合、新しいパスワードを設定するためのリンクをお送りしました。リンクは 30 分間、一度だけ使えます。"},
	"mailbox_hint":     {"This gateway has no SMTP server configured: mail goes to the local mailbox and the log.", "このゲートウェイには SMTP サーバーが設定されていないため、メールはローカルメールボックスとログに届きます。"},
	"open_mailbox":     {"Open the local mailbox", "ローカルメールボックスを開く"},
	"mailbox_lead":     {"Mail this gateway would have sent, newest first. Only this machine can see this page.", "このゲートウェイが送信したはずのメールです（新しい順）。このページはこのマシンからのみ表示できます。"},
	"mailbox_empty":    {"No mail yet.", "メールはまだありません。"},
	"mail_to":          {"To", "宛先"},
	"mail_subject":     {"Subject", "件名"},
	"mail_sent":        {"Sent", "送信日時"},
	"new_password":     {"New password", "新しいパスワード"},
	"confirm_password": {"New password again", "新しいパスワード（確認）"},
	"password_rule":    {"At least 10 characters.", "10 文字以上で入力してください。"},
	"set_password":     {"Set the password", "パスワードを設定"},
	"current_password": {"Current password", "現在のパスワード"},
	"change_password":  {"Change the password", "パスワードを変更"},
	"change_lead":      {"Changing the password signs out every other browser.", "パスワードを変更すると、他のすべてのブラウザからログアウトされます。"},
	"merchant":         {"Merchant", "加盟店"},

	"n_signed_out":       {"You are signed out.", "ログアウトしました。"},
	"n_session_ended":    {"Your session ended. Please sign in again.", "セッションの有効期限が切れました。再度ログインしてください。"},
	"n_password_reset":   {"Your password is set. Sign in with it.", "パスワードを設定しました。新しいパスワードでログインしてください。"},
	"n_password_changed": {"Your password is changed. Every other browser is signed out.", "パスワードを変更しました。他のすべてのブラウザからログアウトしました。"},

	"e_csrf":             {"This form expired or did not come from this console. Go back, reload the page and try again.", "このフォームは有効期限が切れているか、この管理画面から送信されたものではありません。戻ってページを再読み込みし、もう一度お試しください。"},
	"e_form":             {"The form could not be read.", "フォームを読み取れませんでした。"},
	"e_internal":         {"Something went wrong on our side. Please try again.", "システムエラーが発生しました。もう一度お試しください。"},
	"e_generic":          {"The request was refused.", "リクエストは受け付けられませんでした。"},
	"e_request_id":       {"Request ID", "リクエスト ID"},
	"e_reset_limit":      {"Too many reset requests for this address today (at most 5 a day). Try again tomorrow (UTC).", "このアドレスへの本日の再設定リクエストが上限（1 日 5 回）に達しました。明日（UTC）以降に再度お試しください。"},
	"e_reset_gone":       {"This link no longer works: it was used, it expired, or it is not a reset link. Ask for a new one.", "このリンクは使用済み、期限切れ、または無効です。新しいリンクをリクエストしてください。"},
	"e_passwords_differ": {"The two passwords differ.", "2 つのパスワードが一致しません。"},
	"go_dashboard":       {"Go to the dashboard", "ダッシュボードへ"},

	"code_INVALID_CREDENTIALS":           {"The e-mail address or the password is wrong.", "メールアドレスまたはパスワードが正しくありません。"},
	"code_INCORRECT_PASSWORD":            {"The current password is wrong.", "現在のパスワードが正しくありません。"},
	"code_TOO_MANY_REQUESTS":             {"Too many attempts. Wait a little, then try again.", "試行回数が多すぎます。しばらく待ってから再度お試しください。"},
	"code_VALIDATION_ERROR":              {"Some of what you entered is not valid.", "入力内容に誤りがあります。"},
	"code_NOT_FOUND":                     {"There is no such page or object here.", "該当するページまたはデータが見つかりません。"},
	"code_RESOURCE_LIMIT_REACHED":        {"The limit for this resource is reached.", "このリソースの上限に達しました。"},
	"code_INVALID_PERMISSIONS":           {"This is not allowed.", "この操作は許可されていません。"},
	"code_SERVICE_UNAVAILABLE_TRY_AGAIN": {"The service is busy. Try again in a moment.", "サービスが混み合っています。しばらくしてから再度お試しください。"},
	"code_EXPIRED_LOGIN_TOKEN":           {"Your session ended. Please sign in again.", "セッションの有効期限が切れました。再度ログインしてください。"},

	"reason_REQUIRED_VALUE":        {"required", "必須です"},
	"reason_INVALID_FORMAT":        {"not valid", "形式が正しくありません"},
	"reason_INVALID_FORMAT_EMAIL":  {"not an e-mail address", "メールアドレスの形式が正しくありません"},
	"reason_NUMBER_MIN":            {"too short or too small", "短すぎるか小さすぎます"},
	"reason_NUMBER_MAX":            {"too long or too large", "長すぎるか大きすぎます"},
	"reason_INVALID_FORMAT_LENGTH": {"too long", "長すぎます"},

	"field_email":        {"E-mail address", "メールアドレス"},
	"field_password":     {"Password", "パスワード"},
	"field_new_password": {"New password", "新しいパスワード"},
	"field_mode":         {"Mode", "モード"},
}
