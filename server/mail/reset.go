package mail

import (
	"context"
	"fmt"
	"strings"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/web/message"
)

// Resets sends the merchant console's password reset links through
// Transport, from From (empty: the transport's sender).
type Resets struct {
	Transport Transport
	From      string
}

var _ payment.ResetMailer = Resets{}

// SendPasswordReset implements payment.ResetMailer.
func (r Resets) SendPasswordReset(ctx context.Context, m payment.PasswordResetMail) error {
	msg := r.Render(m)
	if err := r.Transport.Send(ctx, msg); err != nil {
		return fmt.Errorf("mail: password reset: %w", err)
	}
	return nil
}

// Render writes the reset mail in m's language (Japanese for "ja",
// English for anything else): what the link is for, the link on a line of
// its own, until when it works (UTC, HH:MM), what to do when the reader
// did not ask for it.
func (r Resets) Render(m payment.PasswordResetMail) Message {
	l := message.English
	if message.Locale(m.Locale) == message.Japanese {
		l = message.Japanese
	}
	t := func(key string) string { return message.Mail.Get(key, l) }
	paragraphs := []string{
		t("reset_intro"),
		t("reset_action") + "\n" + m.Link,
		fmt.Sprintf(t("reset_expiry"), m.ExpiresOn.UTC().Format("15:04")),
		t("reset_ignore"),
		"-- \n" + t("footer"),
	}
	return Message{
		From:    r.From,
		To:      m.To,
		Subject: t("reset_subject"),
		Text:    strings.Join(paragraphs, "\n\n") + "\n",
	}
}
