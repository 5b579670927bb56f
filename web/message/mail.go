package message

// Mail is the e-mail the gateway sends (server/mail): plain text, one text
// per paragraph. Keys starting reset_ are the merchant console's password
// reset mail; footer ends every mail.
var Mail = newTable("mail", map[string]Text{
	"reset_subject": {"Reset your Kessai password", "【Kessai】パスワード再設定のご案内"},
	"reset_intro": {
		"We received a request to reset the password of your Kessai merchant console account.",
		"Kessai 加盟店管理画面のアカウントについて、パスワード再設定のご依頼を受け付けました。",
	},
	"reset_action": {
		"To choose a new password, open this link:",
		"以下のリンクから新しいパスワードを設定してください。",
	},
	"reset_expiry": {
		"The link can be used once, until %s UTC.",
		"このリンクは %s（UTC）まで有効で、一度のみご利用いただけます。",
	},
	"reset_ignore": {
		"If you did not ask for this, you can ignore this mail: your password stays as it is.",
		"お心当たりがない場合は、お手数ですが本メールを破棄してください。パスワードは変更されません。",
	},
	"footer": {
		"This mail was sent automatically by Kessai; replies to it are not read.",
		"このメールは Kessai から自動送信されています。ご返信いただいてもお答えできませんのでご了承ください。",
	},
})
