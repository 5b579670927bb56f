// Package mail sends the gateway's e-mail: for now the merchant console's
// password reset links (Resets, a payment.ResetMailer).
//
// A mail is a Message handed to a Transport. In production the transport
// is SMTP, a client of the operator's mail server (KESSAI_SMTP_URL) built
// on github.com/wneessen/go-mail, so that the gateway does not speak SMTP,
// MIME and TLS itself. Without a mail server, in test mode, the transport
// is a Mailbox: the mail stays in memory for the console's mailbox page
// and is written to the log, so that someone running the gateway on their
// machine (make run) can still follow a reset link.
//
// The texts come from the message catalogue (message.Mail), in the
// recipient's language.
package mail

import (
	"context"
	"time"
)

// Message is one plain-text mail to one recipient.
type Message struct {
	// From is the sender's address ("Kessai <no-reply@example.com>");
	// empty means the transport's own.
	From    string
	To      string
	Subject string
	Text    string
	// Sent is when the mail left; the transport sets it when it is zero.
	Sent time.Time
}

// Transport delivers a Message. Send returns when the mail was handed on
// (to the mail server, to the mailbox) or could not be; it does not wait
// for the mail to reach its recipient.
type Transport interface {
	Send(ctx context.Context, m Message) error
}
