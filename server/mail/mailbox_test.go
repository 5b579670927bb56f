package mail

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestMailboxKeepsTheLatest: past MailboxSize messages the oldest go,
// the rest are newest first and dated by the mailbox's clock.
func TestMailboxKeepsTheLatest(t *testing.T) {
	for _, n := range []int{0, 1, MailboxSize - 1, MailboxSize, MailboxSize + 1, 3 * MailboxSize} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			now := time.Date(2026, 11, 24, 7, 0, 0, 0, time.UTC)
			clock := func() time.Time { now = now.Add(time.Second); return now }
			b := NewMailbox(slog.New(slog.DiscardHandler), clock)
			for i := range n {
				if err := b.Send(context.Background(), Message{To: fmt.Sprintf("u%d@example.com", i)}); err != nil {
					t.Fatal(err)
				}
			}
			got := b.Messages()
			if want := min(n, MailboxSize); len(got) != want {
				t.Fatalf("kept %d, want %d", len(got), want)
			}
			for j, m := range got {
				i := n - 1 - j
				if m.To != fmt.Sprintf("u%d@example.com", i) {
					t.Errorf("position %d holds %s, want u%d", j, m.To, i)
				}
				if want := time.Date(2026, 11, 24, 7, 0, i+1, 0, time.UTC); !m.Sent.Equal(want) {
					t.Errorf("%s sent %v, want %v", m.To, m.Sent, want)
				}
			}
		})
	}
	if MailboxSize != 50 {
		t.Errorf("MailboxSize = %d, want 50", MailboxSize)
	}
}

// TestMailboxMessagesAreCopies: changing what Messages returned changes
// nothing in the mailbox.
func TestMailboxMessagesAreCopies(t *testing.T) {
	b := NewMailbox(slog.New(slog.DiscardHandler), nil)
	b.Send(context.Background(), Message{To: "a@example.com", Subject: "one"})
	b.Send(context.Background(), Message{To: "b@example.com", Subject: "two"})
	got := b.Messages()
	got[0].Subject = "changed"
	got[1] = Message{}
	_ = append(got[:1], Message{Subject: "appended"})
	again := b.Messages()
	if len(again) != 2 || again[0].Subject != "two" || again[1].Subject != "one" {
		t.Errorf("the mailbox changed with the copy: %+v", again)
	}
	if again[0].Sent.IsZero() {
		t.Error("no Sent time without a clock")
	}
}

// TestMailboxLogs: each message is logged at Info with its recipient,
// subject and text, so that a reset link can be followed from the log.
func TestMailboxLogs(t *testing.T) {
	var buf bytes.Buffer
	b := NewMailbox(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo})), nil)
	b.Send(context.Background(), Message{To: "owner@shop.example", Subject: "Reset", Text: "open " + testLink})
	out := buf.String()
	for _, want := range []string{"level=INFO", "owner@shop.example", "subject=Reset", testLink} {
		if !strings.Contains(out, want) {
			t.Errorf("the log lacks %q:\n%s", want, out)
		}
	}
}

// TestMailboxConcurrent: senders and readers at once (run with -race).
func TestMailboxConcurrent(t *testing.T) {
	b := NewMailbox(slog.New(slog.DiscardHandler), nil)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 20 {
				b.Send(context.Background(), Message{To: fmt.Sprintf("u%d-%d@example.com", i, j)})
				_ = b.Messages()
			}
		})
	}
	wg.Wait()
	if got := len(b.Messages()); got != MailboxSize {
		t.Errorf("kept %d of 160, want %d", got, MailboxSize)
	}
}
