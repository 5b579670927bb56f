package mail

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	netmail "net/mail"
	"net/url"
	"strconv"
	"strings"
	"time"

	gomail "github.com/wneessen/go-mail"
)

// Defaults of an SMTP server URL.
const (
	// SubmissionPort is smtp://'s port: mail submission, STARTTLS.
	SubmissionPort = 587
	// SubmissionsPort is smtps://'s port: mail submission over TLS.
	SubmissionsPort = 465
	// SMTPTimeout bounds the connection to the server and each step of
	// the conversation with it: a hung server fails a mail rather than
	// holding its sender.
	SMTPTimeout = 10 * time.Second
)

// SMTPServer is what KESSAI_SMTP_URL says: which server, how to secure
// the connection, whose credentials. Its String never shows the password.
type SMTPServer struct {
	Host string
	Port int
	// ImplicitTLS (smtps://) speaks TLS from the first byte; otherwise
	// (smtp://) the client asks for STARTTLS when the server offers it.
	ImplicitTLS bool
	// Username and Password, when set, are sent with SMTP AUTH, and only
	// over TLS: a server that does not offer STARTTLS gets no password
	// (the mail fails instead).
	Username string
	Password string
}

// RequiresTLS reports whether the client must refuse a connection that
// stays in clear text: one with credentials to send.
func (s SMTPServer) RequiresTLS() bool {
	return s.ImplicitTLS || s.Username != ""
}

// String is the URL with the password replaced by xxxxx.
func (s SMTPServer) String() string {
	u := url.URL{Scheme: "smtp", Host: net.JoinHostPort(s.Host, strconv.Itoa(s.Port))}
	if s.ImplicitTLS {
		u.Scheme = "smtps"
	}
	if s.Username != "" {
		u.User = url.UserPassword(s.Username, "xxxxx")
	}
	return u.String()
}

// ParseSMTPURL reads smtp://[user:password@]host[:port] (STARTTLS, port
// 587) or smtps://[user:password@]host[:port] (TLS, port 465); user and
// password are percent-encoded. Nothing else may follow the address: no
// path, no query, no fragment. Its errors never repeat the URL, which may
// hold a password.
func ParseSMTPURL(rawURL string) (SMTPServer, error) {
	var s SMTPServer
	u, err := url.Parse(rawURL)
	if err != nil {
		// url.Error repeats the whole URL; its Err alone says what is
		// wrong. Some of those quote the part that is wrong, which may
		// be the password: smtp://user:password without @host has the
		// "port" password.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		if strings.Contains(err.Error(), `"`) {
			err = errors.New("write smtp://[user:password@]host[:port], user and password percent-encoded")
		}
		return SMTPServer{}, fmt.Errorf("mail: invalid SMTP URL: %w", err)
	}
	switch u.Scheme {
	case "smtp":
		s.Port = SubmissionPort
	case "smtps":
		s.ImplicitTLS = true
		s.Port = SubmissionsPort
	default:
		return SMTPServer{}, errors.New("mail: an SMTP URL starts with smtp:// or smtps://")
	}
	if u.Opaque != "" {
		return SMTPServer{}, errors.New("mail: invalid SMTP URL: write smtp://host, with two slashes")
	}
	s.Host = u.Hostname()
	if s.Host == "" {
		return SMTPServer{}, errors.New("mail: the SMTP URL has no host")
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return SMTPServer{}, errors.New("mail: the SMTP URL's port is not a number from 1 to 65535")
		}
		s.Port = n
	}
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return SMTPServer{}, errors.New("mail: the SMTP URL has a path, query or fragment; only [user:password@]host[:port] is understood")
	}
	if u.User != nil {
		s.Username = u.User.Username()
		s.Password, _ = u.User.Password()
		if s.Username == "" || s.Password == "" {
			return SMTPServer{}, fmt.Errorf("mail: the SMTP URL of %s has a user or password without the other", s.Host)
		}
	}
	return s, nil
}

// SMTP sends mail through the operator's mail server, one connection per
// mail: reset links are few, and a connection kept open would only go
// stale between them.
type SMTP struct {
	server  SMTPServer
	from    string
	timeout time.Duration
	// tlsConfig replaces the system's roots in tests (nil: verify the
	// server's certificate for Host against the system's roots).
	tlsConfig *tls.Config
}

var _ Transport = (*SMTP)(nil)

// NewSMTP returns a transport to the server rawURL names (see
// ParseSMTPURL), sending as from ("Kessai <no-reply@example.com>") the
// messages that name no sender of their own.
func NewSMTP(rawURL, from string) (*SMTP, error) {
	server, err := ParseSMTPURL(rawURL)
	if err != nil {
		return nil, err
	}
	if _, err := netmail.ParseAddress(from); err != nil {
		return nil, fmt.Errorf("mail: sender %q: %w", from, err)
	}
	return &SMTP{server: server, from: from, timeout: SMTPTimeout}, nil
}

// Server is where the transport sends.
func (s *SMTP) Server() SMTPServer { return s.server }

// Send delivers m to the server. It gives up after SMTPTimeout without an
// answer, or when ctx ends first.
func (s *SMTP) Send(ctx context.Context, m Message) error {
	msg, err := s.message(m)
	if err != nil {
		return err
	}
	client, err := gomail.NewClient(s.server.Host, s.options()...)
	if err != nil {
		return fmt.Errorf("mail: %s: %w", s.server, err)
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if err := client.DialAndSendWithContext(ctx, msg); err != nil {
		return fmt.Errorf("mail: sending through %s: %w", s.server, err)
	}
	return nil
}

// options are the client's settings for one mail.
func (s *SMTP) options() []gomail.Option {
	opts := []gomail.Option{gomail.WithPort(s.server.Port), gomail.WithTimeout(s.timeout)}
	switch {
	case s.server.ImplicitTLS:
		opts = append(opts, gomail.WithSSL())
	case s.server.RequiresTLS():
		// A password never crosses in clear: no STARTTLS, no mail.
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSMandatory))
	default:
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSOpportunistic))
	}
	if s.tlsConfig != nil {
		opts = append(opts, gomail.WithTLSConfig(s.tlsConfig))
	}
	if s.server.Username != "" {
		opts = append(opts, gomail.WithSMTPAuth(gomail.SMTPAuthAutoDiscover),
			gomail.WithUsername(s.server.Username), gomail.WithPassword(s.server.Password))
	}
	return opts
}

// message is m as go-mail's: UTF-8 plain text, quoted-printable, dated
// m.Sent (now when zero).
func (s *SMTP) message(m Message) (*gomail.Msg, error) {
	msg := gomail.NewMsg()
	from := m.From
	if from == "" {
		from = s.from
	}
	if err := msg.From(from); err != nil {
		return nil, fmt.Errorf("mail: sender %q: %w", from, err)
	}
	if err := msg.To(m.To); err != nil {
		return nil, fmt.Errorf("mail: recipient: %w", err)
	}
	msg.Subject(m.Subject)
	sent := m.Sent
	if sent.IsZero() {
		sent = time.Now()
	}
	msg.SetDateWithValue(sent)
	msg.SetUserAgent("Kessai")
	msg.SetBodyString(gomail.TypeTextPlain, m.Text)
	return msg, nil
}
