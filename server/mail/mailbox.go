package mail

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// MailboxSize is how many messages a Mailbox keeps; an older one is
// forgotten when a new one arrives.
const MailboxSize = 50

// Mailbox is the transport of a gateway without a mail server: it keeps
// the last MailboxSize messages in memory, for the console's mailbox page,
// and logs each one, text and all, so that a reset link can be followed
// from the log too. It is for test mode only: the log then holds what the
// mail holds.
type Mailbox struct {
	log   *slog.Logger
	clock func() time.Time

	mu   sync.Mutex
	msgs []Message // newest first, at most MailboxSize
}

var _ Transport = (*Mailbox)(nil)

// NewMailbox returns an empty mailbox logging to log (slog.Default() when
// nil) and dating messages by clock (time.Now when nil).
func NewMailbox(log *slog.Logger, clock func() time.Time) *Mailbox {
	if log == nil {
		log = slog.Default()
	}
	if clock == nil {
		clock = time.Now
	}
	return &Mailbox{log: log, clock: clock}
}

// Send keeps m, dated now, and logs it. It never fails.
func (b *Mailbox) Send(ctx context.Context, m Message) error {
	m.Sent = b.clock()
	b.mu.Lock()
	b.msgs = append(b.msgs, Message{})
	copy(b.msgs[1:], b.msgs)
	b.msgs[0] = m
	if len(b.msgs) > MailboxSize {
		b.msgs = b.msgs[:MailboxSize]
	}
	b.mu.Unlock()
	b.log.InfoContext(ctx, "mail kept in the local mailbox (no KESSAI_SMTP_URL)",
		"to", m.To, "subject", m.Subject, "text", m.Text)
	return nil
}

// Messages returns the kept messages, newest first, as a new slice.
func (b *Mailbox) Messages() []Message {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]Message, len(b.msgs))
	copy(out, b.msgs)
	return out
}
