package mail

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"io"
	"math/big"
	"mime"
	"mime/quotedprintable"
	"net"
	netmail "net/mail"
	"net/textproto"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kessai/kessai/server/payment"
)

// fakeSMTP is a mail server speaking just enough SMTP for go-mail: EHLO,
// STARTTLS (when it has a certificate), AUTH PLAIN and CRAM-MD5 (when
// auth lists them), MAIL, RCPT, DATA, RSET, NOOP, QUIT. It records what it
// was told.
type fakeSMTP struct {
	ln       net.Listener
	starttls *tls.Config // offer STARTTLS with this
	implicit bool        // the listener speaks TLS from the first byte
	auth     string      // offer AUTH with these mechanisms ("PLAIN CRAM-MD5")

	mu    sync.Mutex
	mails []receivedMail
	auths []authAttempt
	conns []net.Conn
	wg    sync.WaitGroup
}

type receivedMail struct {
	from string
	rcpt []string
	data []byte
	tls  bool
}

type authAttempt struct {
	mechanism, user, pass string
	tls                   bool
}

// startFakeSMTP listens on 127.0.0.1:0 until the test ends.
func startFakeSMTP(t *testing.T, f *fakeSMTP) *fakeSMTP {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if f.implicit {
		ln = tls.NewListener(ln, f.starttls)
	}
	f.ln = ln
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			f.mu.Lock()
			f.conns = append(f.conns, conn)
			f.mu.Unlock()
			f.wg.Add(1)
			go func() {
				defer f.wg.Done()
				f.serve(conn)
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		// A client that gave up may have left its connection open
		// (go-mail does not close it when STARTTLS or AUTH fails).
		f.mu.Lock()
		for _, c := range f.conns {
			c.Close()
		}
		f.mu.Unlock()
		f.wg.Wait()
	})
	return f
}

func (f *fakeSMTP) port() string {
	_, port, _ := net.SplitHostPort(f.ln.Addr().String())
	return port
}

func (f *fakeSMTP) received() ([]receivedMail, []authAttempt) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]receivedMail(nil), f.mails...), append([]authAttempt(nil), f.auths...)
}

func (f *fakeSMTP) serve(conn net.Conn) {
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	inTLS := f.implicit
	tp := textproto.NewConn(conn)
	reply := func(s string) bool { return tp.PrintfLine("%s", s) == nil }
	if !reply("220 fake.test ESMTP") {
		return
	}
	var cur receivedMail
	for {
		line, err := tp.ReadLine()
		if err != nil {
			return
		}
		verb, arg, _ := strings.Cut(line, " ")
		switch strings.ToUpper(verb) {
		case "EHLO", "HELO":
			lines := []string{"250-fake.test"}
			if f.starttls != nil && !inTLS {
				lines = append(lines, "250-STARTTLS")
			}
			if f.auth != "" {
				lines = append(lines, "250-AUTH "+f.auth)
			}
			lines = append(lines, "250 8BITMIME")
			if !reply(strings.Join(lines, "\r\n")) {
				return
			}
		case "STARTTLS":
			if f.starttls == nil || inTLS {
				reply("502 5.5.1 no")
				continue
			}
			reply("220 2.0.0 go ahead")
			tc := tls.Server(conn, f.starttls)
			if tc.Handshake() != nil {
				return
			}
			conn, inTLS = tc, true
			tp = textproto.NewConn(conn)
			cur = receivedMail{}
		case "AUTH":
			mech, initial, _ := strings.Cut(arg, " ")
			a := authAttempt{mechanism: strings.ToUpper(mech), tls: inTLS}
			switch a.mechanism {
			case "PLAIN":
				if initial == "" {
					reply("334 ")
					if initial, err = tp.ReadLine(); err != nil {
						return
					}
				}
				b, _ := base64.StdEncoding.DecodeString(initial)
				if parts := strings.Split(string(b), "\x00"); len(parts) == 3 {
					a.user, a.pass = parts[1], parts[2]
				}
			case "CRAM-MD5":
				reply("334 " + base64.StdEncoding.EncodeToString([]byte("<1.2@fake.test>")))
				resp, err := tp.ReadLine()
				if err != nil {
					return
				}
				b, _ := base64.StdEncoding.DecodeString(resp)
				a.user, _, _ = strings.Cut(string(b), " ")
			}
			f.mu.Lock()
			f.auths = append(f.auths, a)
			f.mu.Unlock()
			reply("235 2.7.0 authenticated")
		case "MAIL":
			cur = receivedMail{from: arg, tls: inTLS}
			reply("250 2.1.0 ok")
		case "RCPT":
			cur.rcpt = append(cur.rcpt, arg)
			reply("250 2.1.5 ok")
		case "DATA":
			reply("354 go on")
			data, err := tp.ReadDotBytes()
			if err != nil {
				return
			}
			cur.data = data
			f.mu.Lock()
			f.mails = append(f.mails, cur)
			f.mu.Unlock()
			cur = receivedMail{}
			reply("250 2.0.0 queued")
		case "RSET", "NOOP":
			reply("250 2.0.0 ok")
		case "QUIT":
			reply("221 2.0.0 bye")
			return
		default:
			reply("502 5.5.2 unknown command")
		}
	}
}

// testCertificate is a self-signed certificate for 127.0.0.1, and a
// client configuration that trusts it.
func testCertificate(t *testing.T) (server, client *tls.Config) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "fake.test"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(cert)
	server = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
	client = &tls.Config{RootCAs: roots, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}
	return server, client
}

// parsedMail is a received mail with its headers and body decoded.
type parsedMail struct {
	to, from, subject, body string
}

func parseMail(t *testing.T, data []byte) parsedMail {
	t.Helper()
	msg, err := netmail.ReadMessage(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("the mail does not parse: %v\n%s", err, data)
	}
	var dec mime.WordDecoder
	subject, err := dec.DecodeHeader(msg.Header.Get("Subject"))
	if err != nil {
		t.Fatalf("Subject %q: %v", msg.Header.Get("Subject"), err)
	}
	to, err := netmail.ParseAddress(msg.Header.Get("To"))
	if err != nil {
		t.Fatalf("To %q: %v", msg.Header.Get("To"), err)
	}
	from, err := netmail.ParseAddress(msg.Header.Get("From"))
	if err != nil {
		t.Fatalf("From %q: %v", msg.Header.Get("From"), err)
	}
	if ct := msg.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") || !strings.Contains(strings.ToLower(ct), "utf-8") {
		t.Errorf("Content-Type %q, want UTF-8 plain text", ct)
	}
	if msg.Header.Get("Date") == "" || msg.Header.Get("Message-Id") == "" {
		t.Errorf("no Date or Message-ID:\n%s", data)
	}
	var body io.Reader = msg.Body
	switch cte := strings.ToLower(msg.Header.Get("Content-Transfer-Encoding")); cte {
	case "quoted-printable":
		body = quotedprintable.NewReader(body)
	case "base64":
		body = base64.NewDecoder(base64.StdEncoding, body)
	case "", "7bit", "8bit":
	default:
		t.Fatalf("Content-Transfer-Encoding %q", cte)
	}
	text, err := io.ReadAll(body)
	if err != nil {
		t.Fatal(err)
	}
	return parsedMail{to: to.Address, from: from.Address, subject: subject, body: strings.ReplaceAll(string(text), "\r\n", "\n")}
}

// A link long enough to be wrapped, with the characters quoted-printable
// encodes.
const testLink = "https://pay.example.com/console/reset?token=Zm9vYmFyYmF6cXV4cXV1eGNvcmdlZ3JhdWx0Z2FycGx5d2FsZG9mcmVk_-=&lang=ja#a=b"

// TestSMTPDeliversResetMail: a reset mail sent through NewSMTP and Resets
// reaches the server for its recipient, with its subject and its link
// intact, over each kind of connection; credentials go only over TLS.
func TestSMTPDeliversResetMail(t *testing.T) {
	serverTLS, clientTLS := testCertificate(t)
	tests := []struct {
		name     string
		starttls bool   // the server offers STARTTLS
		implicit bool   // the server speaks TLS at once
		auth     string // the server offers AUTH with these
		userinfo string // user:password@, or ""
		scheme   string
		locale   string
		subject  string
		wantTLS  bool
	}{
		{name: "clear text without credentials", scheme: "smtp", locale: "en",
			subject: "Reset your Kessai password"},
		{name: "STARTTLS when offered", starttls: true, scheme: "smtp", locale: "ja",
			subject: "【Kessai】パスワード再設定のご案内", wantTLS: true},
		{name: "credentials over STARTTLS", starttls: true, auth: "PLAIN", scheme: "smtp",
			userinfo: "mailer:s3cret%2Fpw@", locale: "ja", subject: "【Kessai】パスワード再設定のご案内", wantTLS: true},
		{name: "implicit TLS", implicit: true, auth: "PLAIN", scheme: "smtps",
			userinfo: "mailer:s3cret%2Fpw@", locale: "en", subject: "Reset your Kessai password", wantTLS: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := &fakeSMTP{implicit: tc.implicit, auth: tc.auth}
			if tc.starttls || tc.implicit {
				srv.starttls = serverTLS
			}
			startFakeSMTP(t, srv)
			tr, err := NewSMTP(tc.scheme+"://"+tc.userinfo+"127.0.0.1:"+srv.port(), "Kessai <no-reply@pay.example.com>")
			if err != nil {
				t.Fatal(err)
			}
			tr.tlsConfig = clientTLS
			resets := Resets{Transport: tr}
			expires := time.Date(2026, 11, 24, 16, 5, 0, 0, time.FixedZone("JST", 9*3600))
			err = resets.SendPasswordReset(context.Background(), payment.PasswordResetMail{
				To: "owner@shop.example", Link: testLink, Locale: tc.locale, ExpiresOn: expires,
			})
			if err != nil {
				t.Fatalf("SendPasswordReset: %v", err)
			}
			mails, auths := srv.received()
			if len(mails) != 1 {
				t.Fatalf("the server received %d mails, want 1", len(mails))
			}
			got := mails[0]
			if got.tls != tc.wantTLS {
				t.Errorf("sent over TLS: %v, want %v", got.tls, tc.wantTLS)
			}
			if len(got.rcpt) != 1 || !strings.Contains(got.rcpt[0], "<owner@shop.example>") {
				t.Errorf("RCPT %q, want owner@shop.example", got.rcpt)
			}
			if !strings.Contains(got.from, "<no-reply@pay.example.com>") {
				t.Errorf("MAIL FROM %q", got.from)
			}
			m := parseMail(t, got.data)
			if m.to != "owner@shop.example" || m.from != "no-reply@pay.example.com" {
				t.Errorf("To %q, From %q", m.to, m.from)
			}
			if m.subject != tc.subject {
				t.Errorf("Subject %q, want %q", m.subject, tc.subject)
			}
			if !strings.Contains(m.body, "\n"+testLink+"\n") {
				t.Errorf("the link is not intact on a line of its own:\n%s", m.body)
			}
			if !strings.Contains(m.body, "07:05") {
				t.Errorf("the expiry (07:05 UTC) is missing:\n%s", m.body)
			}
			if tc.userinfo == "" {
				if len(auths) != 0 {
					t.Errorf("AUTH without credentials: %+v", auths)
				}
				return
			}
			if len(auths) != 1 || auths[0] != (authAttempt{mechanism: "PLAIN", user: "mailer", pass: "s3cret/pw", tls: true}) {
				t.Errorf("AUTH %+v, want one PLAIN over TLS as mailer with the decoded password", auths)
			}
		})
	}
}

// TestSMTPCredentialsNeedTLS: with credentials, a server that does not
// offer STARTTLS gets neither the password nor the mail, even though it
// offers AUTH.
func TestSMTPCredentialsNeedTLS(t *testing.T) {
	srv := startFakeSMTP(t, &fakeSMTP{auth: "PLAIN LOGIN CRAM-MD5"})
	tr, err := NewSMTP("smtp://mailer:s3cret@127.0.0.1:"+srv.port(), "no-reply@pay.example.com")
	if err != nil {
		t.Fatal(err)
	}
	err = tr.Send(context.Background(), Message{To: "owner@shop.example", Subject: "s", Text: "t"})
	if err == nil {
		t.Error("sent with credentials over a connection without TLS")
	} else if strings.Contains(err.Error(), "s3cret") {
		t.Errorf("the error shows the password: %v", err)
	}
	mails, auths := srv.received()
	for _, a := range auths {
		if !a.tls {
			t.Errorf("AUTH %s in clear text", a.mechanism)
		}
	}
	if len(mails) != 0 {
		t.Errorf("the server received %d mails", len(mails))
	}
}

// TestSMTPUnreachable: a server that refuses the connection, or accepts it
// and never answers, fails the mail quickly, without the password in the
// error.
func TestSMTPUnreachable(t *testing.T) {
	t.Run("refused", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		tr, err := NewSMTP("smtp://mailer:s3cret@"+addr, "no-reply@pay.example.com")
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		err = tr.Send(context.Background(), Message{To: "owner@shop.example", Subject: "s", Text: "t"})
		if err == nil {
			t.Fatal("a refused connection sent the mail")
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("the refusal took %v", d)
		}
		if strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), addr) {
			t.Errorf("error %q should name %s and not the password", err, addr)
		}
	})
	t.Run("silent", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		go func() {
			var conns []net.Conn
			defer func() {
				for _, c := range conns {
					c.Close()
				}
			}()
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				conns = append(conns, c) // held open, never answered
			}
		}()
		tr, err := NewSMTP("smtp://"+ln.Addr().String(), "no-reply@pay.example.com")
		if err != nil {
			t.Fatal(err)
		}
		if tr.timeout != SMTPTimeout || SMTPTimeout != 10*time.Second {
			t.Errorf("timeout %v, want 10s", tr.timeout)
		}
		tr.timeout = 300 * time.Millisecond
		start := time.Now()
		if err := tr.Send(context.Background(), Message{To: "owner@shop.example", Subject: "s", Text: "t"}); err == nil {
			t.Fatal("a silent server took the mail")
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("giving up on a silent server took %v", d)
		}
	})
}

// TestParseSMTPURL: what a URL says, what is refused, and that no
// refusal and no String repeats the password.
func TestParseSMTPURL(t *testing.T) {
	good := []struct {
		raw  string
		want SMTPServer
		str  string
	}{
		{"smtp://mail.example.com", SMTPServer{Host: "mail.example.com", Port: 587}, "smtp://mail.example.com:587"},
		{"smtp://mail.example.com:25/", SMTPServer{Host: "mail.example.com", Port: 25}, "smtp://mail.example.com:25"},
		{"smtps://mail.example.com", SMTPServer{Host: "mail.example.com", Port: 465, ImplicitTLS: true}, "smtps://mail.example.com:465"},
		{"smtp://kessai:s3cret@mail.example.com:2525", SMTPServer{Host: "mail.example.com", Port: 2525, Username: "kessai", Password: "s3cret"},
			"smtp://kessai:xxxxx@mail.example.com:2525"},
		{"smtps://apikey%40example.com:s3cret%2F%3A%40@[2001:db8::1]", SMTPServer{Host: "2001:db8::1", Port: 465, ImplicitTLS: true,
			Username: "apikey@example.com", Password: "s3cret/:@"}, "smtps://apikey%40example.com:xxxxx@[2001:db8::1]:465"},
	}
	for _, tc := range good {
		t.Run(tc.raw, func(t *testing.T) {
			got, err := ParseSMTPURL(tc.raw)
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
			if got.String() != tc.str {
				t.Errorf("String() = %q, want %q", got.String(), tc.str)
			}
			if got.RequiresTLS() != (tc.want.ImplicitTLS || tc.want.Username != "") {
				t.Errorf("RequiresTLS() = %v", got.RequiresTLS())
			}
		})
	}
	bad := []string{
		"",
		"mail.example.com:587",
		"http://kessai:s3cret@mail.example.com",
		"smtp:kessai:s3cret@mail.example.com",
		"smtp://kessai:s3cret@",
		"smtp://kessai:s3cret@:587",
		"smtp://kessai:s3cret@mail.example.com:0",
		"smtp://kessai:s3cret@mail.example.com:65536",
		"smtp://kessai:s3cret@mail.example.com:smtp",
		"smtp://kessai:s3cret@mail.example.com/inbox",
		"smtp://kessai:s3cret@mail.example.com?from=x@example.com",
		"smtp://kessai:s3cret@mail.example.com?insecure_skip_verify=true",
		"smtp://kessai:s3cret@mail.example.com#x",
		"smtp://kessai:s3cret@mail example.com",
		"smtp://kessai:s3cret@[::1",
		"smtp://kessai:s3cret\x7f@mail.example.com",
		"smtp://kessai:s3cret%zz@mail.example.com",
		"smtp://kessai:%s3cret@mail.example.com",
		"smtp://kessai:s3cret",
		"smtps://kessai:s3cret/",
		"smtp://kessai:s3cret@mail.exa\x00mple.com",
		"smtp://kessai:s3cret@mail.exa%zzmple.com",
		"smtp://:s3cret@mail.example.com",
		"smtp://kessai@mail.example.com",
		"smtp://kessai:@mail.example.com",
	}
	for _, raw := range bad {
		t.Run(raw, func(t *testing.T) {
			got, err := ParseSMTPURL(raw)
			if err == nil {
				t.Fatalf("accepted as %+v", got)
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Errorf("the error shows the password: %v", err)
			}
			if _, err := NewSMTP(raw, "no-reply@example.com"); err == nil || strings.Contains(err.Error(), "s3cret") {
				t.Errorf("NewSMTP: %v", err)
			}
		})
	}
	if _, err := NewSMTP("smtp://mail.example.com", "not an address"); err == nil {
		t.Error("NewSMTP took a sender that is no address")
	}
}
