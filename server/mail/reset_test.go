package mail

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/web/message"
)

// TestResetsRender: the reset mail is in the recipient's language
// (English unless Japanese), with the link on its own line, the expiry in
// UTC, what to do when one did not ask, and the product's name.
func TestResetsRender(t *testing.T) {
	expires := time.Date(2026, 11, 24, 16, 35, 0, 0, time.FixedZone("JST", 9*3600))
	tests := []struct {
		locale string
		want   message.Locale
	}{
		{"ja", message.Japanese},
		{"en", message.English},
		{"", message.English},
		{"fr", message.English},
		{"ja-JP-x", message.English},
	}
	for _, tc := range tests {
		t.Run(tc.locale, func(t *testing.T) {
			r := Resets{From: "Kessai <no-reply@pay.example.com>"}
			m := r.Render(payment.PasswordResetMail{To: "owner@shop.example", Link: testLink, Locale: tc.locale, ExpiresOn: expires})
			if m.To != "owner@shop.example" || m.From != "Kessai <no-reply@pay.example.com>" {
				t.Errorf("To %q From %q", m.To, m.From)
			}
			if want := message.Mail.Get("reset_subject", tc.want); m.Subject != want {
				t.Errorf("Subject %q, want %q", m.Subject, want)
			}
			for _, key := range []string{"reset_intro", "reset_action", "reset_ignore", "footer"} {
				if want := message.Mail.Get(key, tc.want); !strings.Contains(m.Text, want) {
					t.Errorf("the text lacks %s (%q):\n%s", key, want, m.Text)
				}
			}
			for _, want := range []string{"\n" + testLink + "\n", "07:35", "Kessai"} {
				if !strings.Contains(m.Text, want) {
					t.Errorf("the text lacks %q:\n%s", want, m.Text)
				}
			}
			if strings.Contains(m.Text, "16:35") || strings.Contains(m.Text, "%!") {
				t.Errorf("the expiry is not in UTC or a blank is wrong:\n%s", m.Text)
			}
			hasJapanese := strings.Contains(m.Text, "パスワード")
			if hasJapanese != (tc.want == message.Japanese) {
				t.Errorf("locale %q gave the wrong language:\n%s", tc.locale, m.Text)
			}
		})
	}
}

// TestResetsSend: SendPasswordReset hands the rendered mail to the
// transport, and says when the transport failed.
func TestResetsSend(t *testing.T) {
	box := NewMailbox(slog.New(slog.DiscardHandler), nil)
	r := Resets{Transport: box, From: "no-reply@pay.example.com"}
	m := payment.PasswordResetMail{To: "owner@shop.example", Link: testLink, Locale: "ja", ExpiresOn: time.Now().Add(30 * time.Minute)}
	if err := r.SendPasswordReset(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	got := box.Messages()
	want := r.Render(m)
	if len(got) != 1 || got[0].To != want.To || got[0].Subject != want.Subject || got[0].Text != want.Text || got[0].From != want.From {
		t.Errorf("the mailbox holds %+v, want %+v", got, want)
	}
	broken := errors.New("server down")
	err := Resets{Transport: failing{broken}}.SendPasswordReset(context.Background(), m)
	if !errors.Is(err, broken) {
		t.Errorf("a failed send returned %v", err)
	}
}

type failing struct{ err error }

func (f failing) Send(context.Context, Message) error { return f.err }
