package payment_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"golang.org/x/crypto/bcrypt"

	"github.com/kessai/kessai/server/kessaitest"
	"github.com/kessai/kessai/server/kessaitest/servicetest"
	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/sqlite"
)

// fakeThrottle counts attempts per key and refuses, counting nothing,
// once any key of a call has had its Burst; it gives nothing back, so a
// test sees exactly which allowance ran out.
type fakeThrottle struct {
	mu    sync.Mutex
	count map[string]int
}

func (f *fakeThrottle) Take(ctx context.Context, keys []payment.ThrottleKey) (time.Duration, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.count == nil {
		f.count = map[string]int{}
	}
	for _, k := range keys {
		if f.count[k.Key] >= k.Burst {
			return time.Minute / time.Duration(k.PerMinute), nil
		}
	}
	for _, k := range keys {
		f.count[k.Key]++
	}
	return 0, nil
}

// mailCatcher is a ResetMailer that keeps what it is given.
type mailCatcher struct {
	mu    sync.Mutex
	mails []payment.PasswordResetMail
}

func (m *mailCatcher) SendPasswordReset(ctx context.Context, mail payment.PasswordResetMail) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mails = append(m.mails, mail)
	return nil
}

func (m *mailCatcher) all() []payment.PasswordResetMail {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]payment.PasswordResetMail(nil), m.mails...)
}

// consoleStack is a service with a console user (the demo merchant's),
// a throttle and a mail catcher, on a clock the test moves.
type consoleStack struct {
	*servicetest.Stack
	demo     *servicetest.Demo
	clock    *kessaitest.Clock
	throttle *fakeThrottle
	mail     *mailCatcher
	dir      string
}

const consoleOrigin = "https://pay.kessai.test"

func newConsoleStack(t *testing.T) *consoleStack {
	t.Helper()
	cs := &consoleStack{clock: kessaitest.NewClock(time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)),
		throttle: &fakeThrottle{}, mail: &mailCatcher{}, dir: t.TempDir()}
	cs.Stack = servicetest.New(t, servicetest.Options{
		Clock: cs.clock, PublicOrigin: consoleOrigin, Path: filepath.Join(cs.dir, "kessai.db"),
		Config: payment.Config{Throttle: cs.throttle, ResetMailer: cs.mail},
	})
	cs.demo = cs.SeedDemo(t)
	return cs
}

func (cs *consoleStack) signIn(t *testing.T, password string) (string, *payment.ConsoleSession) {
	t.Helper()
	token, sess, err := cs.Service.Console.SignIn(context.Background(), payment.SignInRequest{
		Email: payment.DemoEmail, Password: password, ClientIP: "192.0.2.1"})
	if err != nil {
		t.Fatalf("sign in: %v", err)
	}
	return token, sess
}

// otherMerchant makes a second merchant with a console user and a store.
func (cs *consoleStack) otherMerchant(t *testing.T, email string) (*payment.User, *payment.Store) {
	t.Helper()
	hash, err := bcrypt.GenerateFromPassword([]byte("other-merchant-password"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	now := cs.clock.Now()
	m := &payment.Merchant{ID: payment.NewID(), Name: "Other", Email: email, CreatedOn: now}
	u := &payment.User{ID: payment.NewID(), MerchantID: m.ID, Email: email, PasswordHash: hash, CreatedOn: now}
	st := &payment.Store{ID: payment.NewID(), MerchantID: m.ID, Name: "Other store", Settings: payment.DefaultStoreSettings(), CreatedOn: now}
	err = cs.DB.Update(context.Background(), func(tx payment.Tx) error {
		if err := tx.CreateMerchant(context.Background(), m); err != nil {
			return err
		}
		if err := tx.CreateUser(context.Background(), u); err != nil {
			return err
		}
		return tx.CreateStore(context.Background(), st)
	})
	if err != nil {
		t.Fatal(err)
	}
	return u, st
}

func wantConsoleErr(t *testing.T, err error, code payment.Code, fields ...string) {
	t.Helper()
	if got := payment.ErrorCode(err); got != code {
		t.Fatalf("err = %v, want %s", err, code)
	}
	var pe *payment.Error
	if len(fields) == 0 {
		return
	}
	pe, _ = err.(*payment.Error)
	var got []string
	for _, f := range pe.Fields {
		got = append(got, f.Field+" "+f.Reason)
	}
	if strings.Join(got, ",") != strings.Join(fields, ",") {
		t.Fatalf("fields = %v, want %v", got, fields)
	}
}

func TestSignIn(t *testing.T) {
	cs := newConsoleStack(t)
	ctx := context.Background()
	pw := cs.demo.ConsolePassword
	for _, tc := range []struct {
		name, email, password string
		ok                    bool
	}{
		{"right", payment.DemoEmail, pw, true},
		{"address in another case and with blanks", "  DEMO@Kessai.TEST ", pw, true},
		{"wrong password", payment.DemoEmail, pw + "x", false},
		{"password in another case", payment.DemoEmail, strings.ToUpper(pw), false},
		{"unknown address", "nobody@kessai.test", pw, false},
		{"empty password", payment.DemoEmail, "", false},
		{"empty address", "", pw, false},
		{"a megabyte of password", payment.DemoEmail, strings.Repeat("p", 1<<20), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			token, sess, err := cs.Service.Console.SignIn(ctx, payment.SignInRequest{Email: tc.email, Password: tc.password, ClientIP: "198.51.100." + tc.name[:1]})
			if !tc.ok {
				wantConsoleErr(t, err, payment.CodeInvalidCredentials)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if sess.Mode != payment.ModeTest || sess.MerchantID != cs.demo.MerchantID {
				t.Errorf("session = %+v, want test mode of the demo merchant", sess)
			}
			got, err := cs.Service.Console.ConsoleSession(ctx, token)
			if err != nil || got.UserID != sess.UserID {
				t.Fatalf("ConsoleSession = %v, %v", got, err)
			}
		})
	}
}

// TestSignInGivesANewTokenEachTime: a session token is made at sign-in,
// never taken from the browser, and signing out ends only that session.
func TestSignInGivesANewTokenEachTime(t *testing.T) {
	cs := newConsoleStack(t)
	ctx := context.Background()
	a, _ := cs.signIn(t, cs.demo.ConsolePassword)
	b, _ := cs.signIn(t, cs.demo.ConsolePassword)
	if a == b {
		t.Fatal("two sign-ins gave the same token")
	}
	if err := cs.Service.Console.SignOut(ctx, a); err != nil {
		t.Fatal(err)
	}
	_, err := cs.Service.Console.ConsoleSession(ctx, a)
	wantConsoleErr(t, err, payment.CodeExpiredLoginToken)
	if _, err := cs.Service.Console.ConsoleSession(ctx, b); err != nil {
		t.Fatalf("the other session ended too: %v", err)
	}
	for _, bad := range []string{"", "x", strings.Repeat("A", 52), a + "A", "../../etc", strings.Repeat("Z", 1<<16)} {
		_, err := cs.Service.Console.ConsoleSession(ctx, bad)
		wantConsoleErr(t, err, payment.CodeExpiredLoginToken)
	}
}

// TestSessionTokensAreNotStored: the database holds neither a session's
// token nor a reset link's, only keyed hashes of them.
func TestSessionTokensAreNotStored(t *testing.T) {
	cs := newConsoleStack(t)
	token, _ := cs.signIn(t, cs.demo.ConsolePassword)
	if err := cs.Service.Console.RequestPasswordReset(context.Background(), payment.PasswordResetRequest{Email: payment.DemoEmail}); err != nil {
		t.Fatal(err)
	}
	cs.Service.Console.WaitForMail()
	mails := cs.mail.all()
	if len(mails) != 1 {
		t.Fatalf("%d mails, want 1", len(mails))
	}
	reset := strings.TrimPrefix(mails[0].Link, consoleOrigin+payment.PasswordResetPath)
	files, _ := filepath.Glob(filepath.Join(cs.dir, "*"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for what, secret := range map[string]string{"session token": token, "reset token": reset} {
			if strings.Contains(string(b), secret) {
				t.Errorf("%s holds the %s in plain text", filepath.Base(f), what)
			}
		}
	}
}

func TestSessionTimeouts(t *testing.T) {
	ctx := context.Background()
	t.Run("idle", func(t *testing.T) {
		cs := newConsoleStack(t)
		token, _ := cs.signIn(t, cs.demo.ConsolePassword)
		// Used every 29 minutes, it lives on.
		for range 4 {
			cs.clock.Advance(29 * time.Minute)
			if _, err := cs.Service.Console.ConsoleSession(ctx, token); err != nil {
				t.Fatalf("after %v of use: %v", cs.clock.Now().Sub(time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)), err)
			}
		}
		cs.clock.Advance(payment.ConsoleIdleTimeout)
		_, err := cs.Service.Console.ConsoleSession(ctx, token)
		wantConsoleErr(t, err, payment.CodeExpiredLoginToken)
	})
	t.Run("idle just before and at the limit", func(t *testing.T) {
		cs := newConsoleStack(t)
		a, _ := cs.signIn(t, cs.demo.ConsolePassword)
		cs.clock.Advance(payment.ConsoleIdleTimeout - time.Second)
		if _, err := cs.Service.Console.ConsoleSession(ctx, a); err != nil {
			t.Fatalf("one second before the idle timeout: %v", err)
		}
		b, _ := cs.signIn(t, cs.demo.ConsolePassword)
		cs.clock.Advance(payment.ConsoleIdleTimeout)
		_, err := cs.Service.Console.ConsoleSession(ctx, b)
		wantConsoleErr(t, err, payment.CodeExpiredLoginToken)
	})
	t.Run("absolute", func(t *testing.T) {
		cs := newConsoleStack(t)
		token, _ := cs.signIn(t, cs.demo.ConsolePassword)
		for cs.clock.Now().Before(time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC).Add(payment.ConsoleAbsoluteTimeout - 20*time.Minute)) {
			cs.clock.Advance(20 * time.Minute)
			if _, err := cs.Service.Console.ConsoleSession(ctx, token); err != nil {
				t.Fatalf("busy session ended early at %v: %v", cs.clock.Now(), err)
			}
		}
		cs.clock.Set(time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC).Add(payment.ConsoleAbsoluteTimeout))
		_, err := cs.Service.Console.ConsoleSession(ctx, token)
		wantConsoleErr(t, err, payment.CodeExpiredLoginToken)
	})
}

// TestSignInThrottle: after five attempts on one account from one
// address, even the right password waits; another address still gets in
// until the account's own allowance is spent.
func TestSignInThrottle(t *testing.T) {
	cs := newConsoleStack(t)
	ctx := context.Background()
	try := func(ip, password string) error {
		_, _, err := cs.Service.Console.SignIn(ctx, payment.SignInRequest{Email: payment.DemoEmail, Password: password, ClientIP: ip})
		return err
	}
	for i := range 5 {
		wantConsoleErr(t, try("203.0.113.9", "guess-"+string(rune('a'+i))), payment.CodeInvalidCredentials)
	}
	err := try("203.0.113.9", cs.demo.ConsolePassword)
	wantConsoleErr(t, err, payment.CodeTooManyRequests)
	if pe := err.(*payment.Error); pe.RetryAfter <= 0 {
		t.Errorf("RetryAfter = %v, want > 0", pe.RetryAfter)
	}
	if err := try("203.0.113.10", cs.demo.ConsolePassword); err != nil {
		t.Fatalf("from another address: %v", err)
	}
	// Guessers spread over addresses spend the account's allowance.
	n := 0
	for ; n < 100; n++ {
		if err := try("198.18.0."+string(rune('0'+n%10))+string(rune('0'+n/10)), "guess"); payment.ErrorCode(err) == payment.CodeTooManyRequests {
			break
		}
	}
	if n >= 100 || n < 10 {
		t.Fatalf("the account was held after %d spread guesses, want between 10 and 100", n)
	}
	// One address guessing across accounts is held too.
	m := 0
	for ; m < 100; m++ {
		_, _, err := cs.Service.Console.SignIn(ctx, payment.SignInRequest{Email: "user" + string(rune('a'+m%26)) + string(rune('a'+m/26)) + "@kessai.test", Password: "guess", ClientIP: "192.0.2.200"})
		if payment.ErrorCode(err) == payment.CodeTooManyRequests {
			break
		}
	}
	if m >= 100 {
		t.Fatal("one address guessed 100 accounts unheld")
	}
}

func TestChangePassword(t *testing.T) {
	cs := newConsoleStack(t)
	ctx := context.Background()
	old := cs.demo.ConsolePassword
	mine, _ := cs.signIn(t, old)
	other, _ := cs.signIn(t, old)
	if err := cs.Service.Console.SetConsoleMode(ctx, mine, payment.ModeLive); err != nil {
		t.Fatal(err)
	}
	if err := cs.Service.Console.RequestPasswordReset(ctx, payment.PasswordResetRequest{Email: payment.DemoEmail}); err != nil {
		t.Fatal(err)
	}
	cs.Service.Console.WaitForMail()
	link := cs.mail.all()[0].Link

	_, _, err := cs.Service.Console.ChangePassword(ctx, mine, old+"x", "a-new-password-1", "192.0.2.1")
	wantConsoleErr(t, err, payment.CodeIncorrectPassword)
	_, _, err = cs.Service.Console.ChangePassword(ctx, mine, old, "short", "192.0.2.1")
	wantConsoleErr(t, err, payment.CodeValidation, "new_password NUMBER_MIN")
	_, _, err = cs.Service.Console.ChangePassword(ctx, mine, old, strings.Repeat("l", payment.MaxPasswordLength+1), "192.0.2.1")
	wantConsoleErr(t, err, payment.CodeValidation, "new_password NUMBER_MAX")

	token, sess, err := cs.Service.Console.ChangePassword(ctx, mine, old, "a-new-password-1", "192.0.2.1")
	if err != nil {
		t.Fatal(err)
	}
	if token == mine || sess.Mode != payment.ModeLive {
		t.Errorf("new session: same token %v, mode %s (want a new token in live mode)", token == mine, sess.Mode)
	}
	for name, tok := range map[string]string{"this browser's old session": mine, "another browser's session": other} {
		_, err := cs.Service.Console.ConsoleSession(ctx, tok)
		if payment.ErrorCode(err) != payment.CodeExpiredLoginToken {
			t.Errorf("%s survived the password change: %v", name, err)
		}
	}
	if _, err := cs.Service.Console.ConsoleSession(ctx, token); err != nil {
		t.Fatalf("the new session: %v", err)
	}
	_, _, err = cs.Service.Console.SignIn(ctx, payment.SignInRequest{Email: payment.DemoEmail, Password: old, ClientIP: "192.0.2.2"})
	wantConsoleErr(t, err, payment.CodeInvalidCredentials)
	cs.signIn(t, "a-new-password-1")
	err = cs.Service.Console.ResetPassword(ctx, strings.TrimPrefix(link, consoleOrigin+payment.PasswordResetPath), "a-third-password")
	wantConsoleErr(t, err, payment.CodeNotFound)
}

func TestPasswordReset(t *testing.T) {
	cs := newConsoleStack(t)
	ctx := context.Background()
	session, _ := cs.signIn(t, cs.demo.ConsolePassword)
	if err := cs.Service.Console.RequestPasswordReset(ctx, payment.PasswordResetRequest{Email: " Demo@Kessai.test", Locale: "ja"}); err != nil {
		t.Fatal(err)
	}
	cs.Service.Console.WaitForMail()
	mails := cs.mail.all()
	if len(mails) != 1 || mails[0].To != payment.DemoEmail || mails[0].Locale != "ja" ||
		!mails[0].ExpiresOn.Equal(cs.clock.Now().Add(payment.PasswordResetTTL)) {
		t.Fatalf("mails = %+v", mails)
	}
	token, ok := strings.CutPrefix(mails[0].Link, consoleOrigin+payment.PasswordResetPath)
	if !ok {
		t.Fatalf("link %q is not on the gateway's origin", mails[0].Link)
	}
	if err := cs.Service.Console.CheckPasswordReset(ctx, token); err != nil {
		t.Fatal(err)
	}
	// A password the rules refuse leaves the link usable.
	wantConsoleErr(t, cs.Service.Console.ResetPassword(ctx, token, "short"), payment.CodeValidation, "password NUMBER_MIN")
	if err := cs.Service.Console.ResetPassword(ctx, token, "reset-password-1"); err != nil {
		t.Fatal(err)
	}
	wantConsoleErr(t, cs.Service.Console.ResetPassword(ctx, token, "reset-password-2"), payment.CodeNotFound)
	wantConsoleErr(t, cs.Service.Console.CheckPasswordReset(ctx, token), payment.CodeNotFound)
	_, err := cs.Service.Console.ConsoleSession(ctx, session)
	wantConsoleErr(t, err, payment.CodeExpiredLoginToken)
	cs.signIn(t, "reset-password-1")

	// Expiry: usable until 30 minutes have passed, not at 30.
	if err := cs.Service.Console.RequestPasswordReset(ctx, payment.PasswordResetRequest{Email: payment.DemoEmail}); err != nil {
		t.Fatal(err)
	}
	cs.Service.Console.WaitForMail()
	late := strings.TrimPrefix(cs.mail.all()[1].Link, consoleOrigin+payment.PasswordResetPath)
	cs.clock.Advance(payment.PasswordResetTTL - time.Second)
	if err := cs.Service.Console.CheckPasswordReset(ctx, late); err != nil {
		t.Fatalf("a second before expiry: %v", err)
	}
	cs.clock.Advance(time.Second)
	wantConsoleErr(t, cs.Service.Console.ResetPassword(ctx, late, "reset-password-3"), payment.CodeNotFound)

	for _, bad := range []string{"", "garbage", strings.Repeat("A", 52), token + "A"} {
		wantConsoleErr(t, cs.Service.Console.CheckPasswordReset(ctx, bad), payment.CodeNotFound)
	}
}

// TestPasswordResetLimit: five requests per address and UTC day, the
// sixth refused as a resource limit, the same for an address nobody has;
// a new UTC day starts afresh.
func TestPasswordResetLimit(t *testing.T) {
	cs := newConsoleStack(t)
	ctx := context.Background()
	for _, email := range []string{payment.DemoEmail, "nobody@kessai.test"} {
		t.Run(email, func(t *testing.T) {
			for i := range payment.PasswordResetsPerDay {
				if err := cs.Service.Console.RequestPasswordReset(ctx, payment.PasswordResetRequest{Email: email, ClientIP: "192.0.2." + string(rune('1'+i))}); err != nil {
					t.Fatalf("request %d: %v", i+1, err)
				}
			}
			err := cs.Service.Console.RequestPasswordReset(ctx, payment.PasswordResetRequest{Email: strings.ToUpper(email), ClientIP: "192.0.2.99"})
			wantConsoleErr(t, err, payment.CodeResourceLimit, "password_reset_token RESOURCE_LIMIT_REACHED")
		})
	}
	cs.Service.Console.WaitForMail()
	if n := len(cs.mail.all()); n != payment.PasswordResetsPerDay {
		t.Errorf("%d mails, want %d (none for the unknown address, none for the refused)", n, payment.PasswordResetsPerDay)
	}
	cs.clock.Set(time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC))
	if err := cs.Service.Console.RequestPasswordReset(ctx, payment.PasswordResetRequest{Email: payment.DemoEmail, ClientIP: "192.0.2.50"}); err != nil {
		t.Fatalf("the next UTC day: %v", err)
	}
	for _, tc := range []struct{ email, want string }{
		{"", "email REQUIRED_VALUE"},
		{"not an address", "email INVALID_FORMAT_EMAIL"},
		{strings.Repeat("a", 300) + "@kessai.test", "email INVALID_FORMAT_EMAIL"},
	} {
		err := cs.Service.Console.RequestPasswordReset(ctx, payment.PasswordResetRequest{Email: tc.email})
		wantConsoleErr(t, err, payment.CodeValidation, tc.want)
	}
}

// TestConsoleCaller: the console acts for its own merchant only, in the
// session's mode, with a server's rights.
func TestConsoleCaller(t *testing.T) {
	cs := newConsoleStack(t)
	ctx := context.Background()
	_, otherStore := cs.otherMerchant(t, "other@kessai.test")
	token, sess := cs.signIn(t, cs.demo.ConsolePassword)

	c, err := cs.Service.Console.ConsoleCaller(ctx, sess, uuid.Nil)
	if err != nil {
		t.Fatal(err)
	}
	if !c.WithSecret() || !c.Console() || c.MerchantID() != cs.demo.MerchantID || c.Token().Mode != payment.ModeTest {
		t.Errorf("caller = %+v", c.Token())
	}
	stores, err := cs.Service.Merchants.Stores(ctx, c, payment.ListParams{Limit: 10})
	if err != nil || len(stores.Items) != 1 || stores.Items[0].ID != cs.demo.StoreID {
		t.Fatalf("stores = %+v, %v", stores.Items, err)
	}
	_, err = cs.Service.Console.ConsoleCaller(ctx, sess, otherStore.ID)
	wantConsoleErr(t, err, payment.CodeNotFound)
	_, err = cs.Service.Console.ConsoleCaller(ctx, sess, uuid.New())
	wantConsoleErr(t, err, payment.CodeNotFound)

	wantConsoleErr(t, cs.Service.Console.SetConsoleMode(ctx, token, "production"), payment.CodeValidation, "mode INVALID_FORMAT")
	if err := cs.Service.Console.SetConsoleMode(ctx, token, payment.ModeLive); err != nil {
		t.Fatal(err)
	}
	live, err := cs.Service.Console.ConsoleSession(ctx, token)
	if err != nil || live.Mode != payment.ModeLive {
		t.Fatalf("session after switching = %+v, %v", live, err)
	}
	lc, err := cs.Service.Console.ConsoleCaller(ctx, live, cs.demo.StoreID)
	if err != nil || lc.Token().Mode != payment.ModeLive || lc.Token().StoreID != cs.demo.StoreID {
		t.Fatalf("live store caller = %+v, %v", lc, err)
	}
	// A test charge is invisible to the live console, and the other way round.
	ch := servicetest.Pay(t, cs.Service, cs.demo.Caller, "4000020000000000", 1000, "JPY", nil)
	_, err = cs.Service.Charging.Charge(ctx, lc, cs.demo.StoreID, ch.ID, 0)
	wantConsoleErr(t, err, payment.CodeNotFound)
	tc, err := cs.Service.Console.ConsoleCaller(ctx, sess, cs.demo.StoreID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.Service.Charging.Charge(ctx, tc, cs.demo.StoreID, ch.ID, 0); err != nil {
		t.Fatalf("the test console reading a test charge: %v", err)
	}
}

// TestConsoleCallerTakesCardsAsAGatewayPage: the console's caller is the
// gateway's own page as well as its merchant's server, so it may make a
// card token (the keys page's test charge) for a store that does not comply
// with PCI DSS, where the merchant's own server may not. The demo store
// complies, so the console's other tests never ask.
func TestConsoleCallerTakesCardsAsAGatewayPage(t *testing.T) {
	cs := newConsoleStack(t)
	ctx := context.Background()
	err := cs.DB.Update(ctx, func(tx payment.Tx) error {
		st, err := tx.Store(ctx, cs.demo.StoreID)
		if err != nil {
			return err
		}
		st.PCICompliant = false
		return tx.UpdateStore(ctx, st)
	})
	if err != nil {
		t.Fatal(err)
	}
	_, sess := cs.signIn(t, cs.demo.ConsolePassword)
	console, err := cs.Service.Console.ConsoleCaller(ctx, sess, cs.demo.StoreID)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		caller *payment.Caller
		ok     bool
	}{
		{"Console", console, true},
		{"MerchantServer", cs.demo.Caller, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := cs.Service.Tokens.CreateToken(ctx, tc.caller, payment.NewToken{
				PaymentType: payment.PaymentTypeCard, Type: payment.OneTime, Email: "shopper@example.com",
				Card: &payment.CardInput{Cardholder: "TARO YAMADA", Number: "4000020000000000", ExpMonth: 12, ExpYear: 2039, CVV: "123"},
			})
			switch {
			case tc.ok && err != nil:
				t.Errorf("card token on a store that is not PCI compliant: %v", err)
			case !tc.ok && payment.ErrorCode(err) != payment.CodeDirectCardTokenDisabled:
				t.Errorf("card token on a store that is not PCI compliant: %v, want %s", err, payment.CodeDirectCardTokenDisabled)
			}
		})
	}
}

func TestUpdateStore(t *testing.T) {
	cs := newConsoleStack(t)
	ctx := context.Background()
	_, otherStore := cs.otherMerchant(t, "other@kessai.test")
	_, sess := cs.signIn(t, cs.demo.ConsolePassword)
	c, err := cs.Service.Console.ConsoleCaller(ctx, sess, uuid.Nil)
	if err != nil {
		t.Fatal(err)
	}
	ptr := func(s string) *string { return &s }
	yes := true
	theme := payment.DefaultStoreSettings().Theme
	theme.MainColor = "#AA3300"
	brands := []string{" JCB", "visa", "jcb"}
	rt := payment.RecurringBounded
	st, err := cs.Service.Merchants.UpdateStore(ctx, c, cs.demo.StoreID, payment.StoreUpdate{
		Name: ptr("  Renamed  "), ThreeDSRequired: &yes, ForbiddenCardBrands: &brands, RecurringType: &rt, Theme: &theme,
	})
	if err != nil {
		t.Fatal(err)
	}
	if st.Name != "Renamed" || !st.Settings.ThreeDSRequired || strings.Join(st.Settings.ForbiddenCardBrands, ",") != "jcb,visa" ||
		st.Settings.RecurringType != payment.RecurringBounded || st.Settings.Theme.MainColor != "#AA3300" || !st.PCICompliant {
		t.Errorf("store = %+v", st)
	}
	again, err := cs.Service.Merchants.Store(ctx, c, cs.demo.StoreID)
	if err != nil || again.Name != "Renamed" || !again.Settings.ThreeDSRequired {
		t.Errorf("stored = %+v, %v", again, err)
	}
	bad := theme
	bad.BodyBackground = "red"
	badBrands := []string{"visa", "bitcoin"}
	badType := payment.RecurringPrivilege("sometimes")
	for _, tc := range []struct {
		name string
		u    payment.StoreUpdate
		want string
	}{
		{"empty name", payment.StoreUpdate{Name: ptr("   ")}, "name REQUIRED_VALUE"},
		{"long name", payment.StoreUpdate{Name: ptr(strings.Repeat("n", 101))}, "name INVALID_FORMAT_LENGTH"},
		{"colour", payment.StoreUpdate{Theme: &bad}, "theme.body_background INVALID_FORMAT"},
		{"brand", payment.StoreUpdate{ForbiddenCardBrands: &badBrands}, "forbidden_card_brands BRAND_NOT_DEFINED"},
		{"recurring type", payment.StoreUpdate{RecurringType: &badType}, "recurring_type INVALID_FORMAT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := cs.Service.Merchants.UpdateStore(ctx, c, cs.demo.StoreID, tc.u)
			wantConsoleErr(t, err, payment.CodeValidation, tc.want)
		})
	}
	_, err = cs.Service.Merchants.UpdateStore(ctx, c, otherStore.ID, payment.StoreUpdate{Name: ptr("Mine now")})
	wantConsoleErr(t, err, payment.CodeNotFound)
	browser, err := cs.Service.Access.BrowserCaller(ctx, cs.demo.Token.JWT, consoleOrigin)
	if err != nil {
		t.Fatal(err)
	}
	_, err = cs.Service.Merchants.UpdateStore(ctx, browser, cs.demo.StoreID, payment.StoreUpdate{Name: ptr("From a browser")})
	wantConsoleErr(t, err, payment.CodeInvalidPermissions)
}

func TestDashboard(t *testing.T) {
	cs := newConsoleStack(t)
	ctx := context.Background()
	for _, p := range []struct {
		card   string
		amount int64
	}{{"4000020000000000", 1000}, {"4000020000000000", 2500}, {"4111111111111111", 700}} {
		servicetest.Pay(t, cs.Service, cs.demo.Caller, p.card, p.amount, "JPY", nil)
	}
	_, sess := cs.signIn(t, cs.demo.ConsolePassword)
	c, err := cs.Service.Console.ConsoleCaller(ctx, sess, uuid.Nil)
	if err != nil {
		t.Fatal(err)
	}
	d, err := cs.Service.Merchants.Dashboard(ctx, c, cs.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if d.Total != 3 || d.Counts[payment.ChargeSuccessful] != 2 || d.Counts[payment.ChargeFailed] != 1 || d.Volume["JPY"] != 3500 {
		t.Errorf("dashboard = %+v", d)
	}
	yesterday, err := cs.Service.Merchants.Dashboard(ctx, c, cs.clock.Now().Add(-24*time.Hour))
	if err != nil || yesterday.Total != 0 {
		t.Errorf("yesterday = %+v, %v", yesterday, err)
	}
}

// racingStorage runs before, once, when the first Update after arm
// starts: a write of another request landing between a check and the
// transaction that acts on it.
type racingStorage struct {
	payment.Storage
	mu     sync.Mutex
	before func()
}

func (r *racingStorage) Update(ctx context.Context, fn func(payment.Tx) error) error {
	r.mu.Lock()
	before := r.before
	r.before = nil
	r.mu.Unlock()
	if before != nil {
		before()
	}
	return r.Storage.Update(ctx, fn)
}

func (r *racingStorage) arm(f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.before = f
}

// TestSignInRacingAPasswordChange: a password changed after a sign-in
// checked the old one, before its session is made, leaves that sign-in
// without a session.
func TestSignInRacingAPasswordChange(t *testing.T) {
	var racing *racingStorage
	clock := kessaitest.NewClock(time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC))
	st := servicetest.New(t, servicetest.Options{Clock: clock, Storage: func(db *sqlite.DB) payment.Storage {
		racing = &racingStorage{Storage: db}
		return racing
	}})
	demo := st.SeedDemo(t)
	ctx := context.Background()
	hash, err := bcrypt.GenerateFromPassword([]byte("changed-elsewhere-1"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	racing.arm(func() {
		err := st.DB.Update(ctx, func(tx payment.Tx) error {
			u, err := tx.UserByEmail(ctx, payment.DemoEmail)
			if err != nil {
				return err
			}
			return tx.SetUserPassword(ctx, u.ID, hash)
		})
		if err != nil {
			t.Error(err)
		}
	})
	_, _, err = st.Service.Console.SignIn(ctx, payment.SignInRequest{Email: payment.DemoEmail, Password: demo.ConsolePassword, ClientIP: "192.0.2.1"})
	wantConsoleErr(t, err, payment.CodeInvalidCredentials)
	if _, _, err := st.Service.Console.SignIn(ctx, payment.SignInRequest{Email: payment.DemoEmail, Password: "changed-elsewhere-1", ClientIP: "192.0.2.1"}); err != nil {
		t.Fatalf("with the new password: %v", err)
	}
}

// slowMailer takes its time, as an SMTP server may.
type slowMailer struct {
	mailCatcher
	delay time.Duration
}

func (m *slowMailer) SendPasswordReset(ctx context.Context, mail payment.PasswordResetMail) error {
	time.Sleep(m.delay)
	return m.mailCatcher.SendPasswordReset(ctx, mail)
}

// TestWaitForMail: a reset request answers before its mail is sent, and
// WaitForMail (which shutdown calls) returns only once it is.
func TestWaitForMail(t *testing.T) {
	slow := &slowMailer{delay: 300 * time.Millisecond}
	st := servicetest.New(t, servicetest.Options{Config: payment.Config{ResetMailer: slow}})
	st.SeedDemo(t)
	start := time.Now()
	if err := st.Service.Console.RequestPasswordReset(context.Background(), payment.PasswordResetRequest{Email: payment.DemoEmail}); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took >= slow.delay {
		t.Errorf("the request waited for the mail (%v)", took)
	}
	st.Service.Console.WaitForMail()
	if n := len(slow.all()); n != 1 {
		t.Fatalf("%d mails after WaitForMail, want 1", n)
	}
}

// brokenThrottle cannot count, as a limiter whose Redis is away.
type brokenThrottle struct{}

func (brokenThrottle) Take(context.Context, []payment.ThrottleKey) (time.Duration, error) {
	return 0, errors.New("redis: connection refused")
}

// TestThrottleUnavailable: when the throttle cannot count, sign-ins and
// reset requests are refused as unavailable, never let through uncounted.
func TestThrottleUnavailable(t *testing.T) {
	st := servicetest.New(t, servicetest.Options{Config: payment.Config{Throttle: brokenThrottle{}}})
	demo := st.SeedDemo(t)
	ctx := context.Background()
	_, _, err := st.Service.Console.SignIn(ctx, payment.SignInRequest{Email: payment.DemoEmail, Password: demo.ConsolePassword})
	wantConsoleErr(t, err, payment.CodeServiceUnavailable)
	err = st.Service.Console.RequestPasswordReset(ctx, payment.PasswordResetRequest{Email: payment.DemoEmail})
	wantConsoleErr(t, err, payment.CodeServiceUnavailable)
}

// TestPasswordResetThrottle: one client address gets ten reset requests
// at once, then one every 30 seconds (two a minute), whatever addresses
// it asks for; another client address is not held by it.
func TestPasswordResetThrottle(t *testing.T) {
	cs := newConsoleStack(t)
	ctx := context.Background()
	ask := func(i int, ip string) error {
		return cs.Service.Console.RequestPasswordReset(ctx, payment.PasswordResetRequest{Email: fmt.Sprintf("user%d@kessai.test", i), ClientIP: ip})
	}
	for i := range 10 {
		if err := ask(i, "192.0.2.7"); err != nil {
			t.Fatalf("request %d: %v", i+1, err)
		}
	}
	err := ask(10, "192.0.2.7")
	wantConsoleErr(t, err, payment.CodeTooManyRequests)
	if pe := err.(*payment.Error); pe.RetryAfter != 30*time.Second {
		t.Errorf("RetryAfter = %v, want 30s (two a minute)", pe.RetryAfter)
	}
	if err := ask(11, "192.0.2.8"); err != nil {
		t.Fatalf("from another address: %v", err)
	}
}

// TestSignInWithCardNumberAddress (issue 25, D6): no user has an address
// made of a card number, and the throttle, whose keys hold the address,
// never sees one.
func TestSignInWithCardNumberAddress(t *testing.T) {
	cs := newConsoleStack(t)
	for _, email := range []string{"4000020000000000@example.com", "4000.0200.0000.0000@example.com"} {
		_, _, err := cs.Service.Console.SignIn(context.Background(), payment.SignInRequest{Email: email, Password: "guess", ClientIP: "192.0.2.1"})
		wantConsoleErr(t, err, payment.CodeInvalidCredentials)
	}
	cs.throttle.mu.Lock()
	defer cs.throttle.mu.Unlock()
	for k := range cs.throttle.count {
		if strings.Contains(k, "@example.com") {
			t.Errorf("the throttle counted %q", k)
		}
	}
}
