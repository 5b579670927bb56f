package access

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"golang.org/x/crypto/bcrypt"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/payment/outbox"
)

// The merchant console's accounts: sign-in with a password, sessions kept
// in storage, password resets. The console's pages (web/console) keep only a
// session's token in a cookie and act through ConsoleCaller, so that what
// they show and do passes the same rules as the API: the console is one
// more door to the same service.

// signInKeys are the allowances one sign-in attempt counts against. The
// account and address together allow the fewest: a guesser at one address
// gets about two guesses a minute. The account alone allows more, so that
// guessers spread over many addresses are held too while the real user,
// once they stop, gets in again within minutes: the throttle delays, it
// never locks an account for good. The address alone bounds one
// machine's guessing across accounts.
func signInKeys(email, clientIP string) []payment.ThrottleKey {
	return []payment.ThrottleKey{
		{Key: "signin/account+ip/" + email + "/" + clientIP, Burst: 5, PerMinute: 2},
		{Key: "signin/account/" + email, Burst: 20, PerMinute: 6},
		{Key: "signin/ip/" + clientIP, Burst: 30, PerMinute: 10},
	}
}

// resetRequestKeys bound the reset requests of one address: each sends a
// mail, and the daily quota alone would let one machine fill many
// mailboxes.
func resetRequestKeys(clientIP string) []payment.ThrottleKey {
	return []payment.ThrottleKey{{Key: "reset/ip/" + clientIP, Burst: 10, PerMinute: 2}}
}

func (s *Console) tooManyAttempts(wait time.Duration) error {
	return &payment.Error{Code: payment.CodeTooManyRequests, Message: "too many attempts; try again later", RetryAfter: wait}
}

func (s *Console) throttle(ctx context.Context, keys []payment.ThrottleKey) error {
	if s.throttler == nil {
		return nil
	}
	wait, err := s.throttler.Take(ctx, keys)
	if err != nil {
		// Unable to count (Redis away): refuse rather than let attempts
		// through uncounted, as the API's limits do.
		s.logger.WarnContext(ctx, "console throttle unavailable", "error", err)
		return &payment.Error{Code: payment.CodeServiceUnavailable, Message: "try again in a moment", RetryAfter: time.Second}
	}
	if wait > 0 {
		return s.tooManyAttempts(wait)
	}
	return nil
}

func invalidCredentials() error {
	return payment.Errorf(payment.CodeInvalidCredentials, "the e-mail address or the password is wrong")
}

// checkPassword compares a password with a user's hash, or with a dummy
// hash when there is no user.
func (s *Console) checkPassword(u *payment.User, password string) bool {
	s.dummyHash.once.Do(func() {
		s.dummyHash.hash, _ = bcrypt.GenerateFromPassword([]byte("kessai: no such user"), s.passwordCost)
	})
	hash := s.dummyHash.hash
	if u != nil {
		hash = u.PasswordHash
	}
	ok := bcrypt.CompareHashAndPassword(hash, []byte(password)) == nil
	return ok && u != nil
}

// SignIn checks an e-mail address and password and starts a session: a
// new token every time, so that a token planted in a browser before
// sign-in (session fixation) is never the one that is signed in. Wrong
// addresses and wrong passwords get the same INVALID_CREDENTIALS after the
// same bcrypt work; repeated attempts get TOO_MANY_REQUESTS (signInKeys),
// the right password included.
func (s *Console) SignIn(ctx context.Context, r payment.SignInRequest) (token string, sess *payment.ConsoleSession, err error) {
	email := payment.NormalizeEmail(r.Email)
	// No user has an address made of a card number; the throttle's keys,
	// which hold the address, would keep it.
	if email == "" || r.Password == "" || len(email) > payment.MaxSignInInput || len(r.Password) > payment.MaxSignInInput || payment.ContainsCardNumber(email) {
		return "", nil, invalidCredentials()
	}
	if err := s.throttle(ctx, signInKeys(email, r.ClientIP)); err != nil {
		return "", nil, err
	}
	var u *payment.User
	err = s.db.View(ctx, func(tx payment.Tx) error {
		u, err = tx.UserByEmail(ctx, email)
		if payment.IsNotFound(err) {
			u, err = nil, nil
		}
		return err
	})
	if err != nil {
		return "", nil, err
	}
	if !s.checkPassword(u, r.Password) {
		return "", nil, invalidCredentials()
	}
	return s.startSession(ctx, u, payment.ModeTest, func(payment.Tx) error { return nil })
}

// startSession makes a new session for u in the same transaction as
// also, and sweeps u's sessions that timed out.
func (s *Console) startSession(ctx context.Context, u *payment.User, mode payment.Mode, also func(payment.Tx) error) (string, *payment.ConsoleSession, error) {
	token := rand.Text() + rand.Text()
	var sess *payment.ConsoleSession
	err := s.db.Update(ctx, func(tx *outbox.Tx) error {
		now := s.clock.Now()
		// The password was checked before this transaction: if it
		// changed since, the session would outlive the change that
		// should have ended it.
		cur, err := tx.User(ctx, u.ID)
		if err != nil {
			return err
		}
		if !bytes.Equal(cur.PasswordHash, u.PasswordHash) {
			return invalidCredentials()
		}
		if err := also(tx); err != nil {
			return err
		}
		if err := tx.DeleteConsoleSessions(ctx, u.ID, now.Add(-payment.ConsoleAbsoluteTimeout), now.Add(-payment.ConsoleIdleTimeout)); err != nil {
			return err
		}
		sess = &payment.ConsoleSession{TokenHash: s.consoleHash("session", token), UserID: u.ID, MerchantID: u.MerchantID,
			Mode: mode, CreatedOn: now, LastSeenOn: now}
		return tx.CreateConsoleSession(ctx, sess)
	})
	if err != nil {
		return "", nil, err
	}
	return token, sess, nil
}

// consoleHash is the stored form of a session or reset token.
func (s *Console) consoleHash(kind, token string) []byte {
	m := hmac.New(sha256.New, s.secretKey)
	m.Write([]byte("kessai console " + kind + "\x00"))
	m.Write([]byte(token))
	return m.Sum(nil)
}

// ConsoleCSRFToken is the anti-forgery token of the forms of a session:
// derived from the session's token, so that it needs no storage and dies
// with the session, and useless to anyone who does not have the cookie.
func (s *Console) ConsoleCSRFToken(sessionToken string) string {
	return base64.RawURLEncoding.EncodeToString(s.consoleHash("csrf", sessionToken))
}

// validConsoleToken reports whether a token could have come from
// startSession or RequestPasswordReset, before any hashing or reading.
func validConsoleToken(token string) bool {
	if len(token) < 16 || len(token) > 128 {
		return false
	}
	for i := 0; i < len(token); i++ {
		c := token[i]
		if !(c >= 'A' && c <= 'Z' || c >= '2' && c <= '7' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// ConsoleSession returns the session of a cookie's token, and counts the
// request as activity. A token that is unknown, signed out, idle for
// ConsoleIdleTimeout or older than ConsoleAbsoluteTimeout is
// EXPIRED_LOGIN_TOKEN.
func (s *Console) ConsoleSession(ctx context.Context, token string) (*payment.ConsoleSession, error) {
	expired := payment.Errorf(payment.CodeExpiredLoginToken, "the console session has ended; sign in again")
	if !validConsoleToken(token) {
		return nil, expired
	}
	hash := s.consoleHash("session", token)
	var sess *payment.ConsoleSession
	err := s.db.View(ctx, func(tx payment.Tx) error {
		var err error
		sess, err = tx.ConsoleSession(ctx, hash)
		return err
	})
	if payment.IsNotFound(err) {
		return nil, expired
	}
	if err != nil {
		return nil, err
	}
	now := s.clock.Now()
	if sessionEnded(sess, now) {
		return nil, expired
	}
	if now.Sub(sess.LastSeenOn) < payment.ConsoleTouchEvery {
		return sess, nil
	}
	err = s.db.Update(ctx, func(tx *outbox.Tx) error {
		cur, err := tx.ConsoleSession(ctx, hash)
		if err != nil {
			return err
		}
		if sessionEnded(cur, now) {
			return expired
		}
		cur.LastSeenOn = now
		sess = cur
		return tx.UpdateConsoleSession(ctx, cur)
	})
	if payment.IsNotFound(err) {
		return nil, expired
	}
	return sess, err
}

func sessionEnded(sess *payment.ConsoleSession, now time.Time) bool {
	return !now.Before(sess.LastSeenOn.Add(payment.ConsoleIdleTimeout)) || !now.Before(sess.CreatedOn.Add(payment.ConsoleAbsoluteTimeout))
}

// SignOut ends the session of a token; an unknown one is already ended.
func (s *Console) SignOut(ctx context.Context, token string) error {
	if !validConsoleToken(token) {
		return nil
	}
	return s.db.Update(ctx, func(tx *outbox.Tx) error {
		return tx.DeleteConsoleSession(ctx, s.consoleHash("session", token))
	})
}

// SetConsoleMode switches what a session shows and acts on between test
// and live objects.
func (s *Console) SetConsoleMode(ctx context.Context, token string, mode payment.Mode) error {
	if mode != payment.ModeTest && mode != payment.ModeLive {
		return payment.Invalid("mode", payment.ReasonInvalidFormat)
	}
	sess, err := s.ConsoleSession(ctx, token)
	if err != nil {
		return err
	}
	return s.db.Update(ctx, func(tx *outbox.Tx) error {
		cur, err := tx.ConsoleSession(ctx, sess.TokenHash)
		if err != nil {
			return err
		}
		cur.Mode = mode
		return tx.UpdateConsoleSession(ctx, cur)
	})
}

// checkNewPassword is the rule for a password a user chooses.
func checkNewPassword(field, password string) error {
	switch {
	case !utf8.ValidString(password) || strings.TrimSpace(password) == "":
		return payment.Invalid(field, payment.ReasonInvalidFormat)
	case len(password) < payment.MinPasswordLength:
		return payment.Invalid(field, payment.ReasonNumberMin)
	case len(password) > payment.MaxPasswordLength:
		return payment.Invalid(field, payment.ReasonNumberMax)
	}
	return nil
}

// hashNewPassword checks and hashes a chosen password.
func (s *Console) hashNewPassword(field, password string) ([]byte, error) {
	if err := checkNewPassword(field, password); err != nil {
		return nil, err
	}
	return s.hashPassword(password)
}

// ChangePassword sets a signed-in user's password after checking the
// current one (throttled as sign-ins are: a stolen session must not be a
// way to guess it). Every session of the user ends, and every reset link
// dies; the browser that changed it gets a new session, whose token it
// returns.
func (s *Console) ChangePassword(ctx context.Context, sessionToken, current, next, clientIP string) (string, *payment.ConsoleSession, error) {
	sess, err := s.ConsoleSession(ctx, sessionToken)
	if err != nil {
		return "", nil, err
	}
	var u *payment.User
	if err := s.db.View(ctx, func(tx payment.Tx) error {
		u, err = tx.User(ctx, sess.UserID)
		return err
	}); err != nil {
		return "", nil, err
	}
	if err := checkNewPassword("new_password", next); err != nil {
		return "", nil, err
	}
	if err := s.throttle(ctx, signInKeys(payment.NormalizeEmail(u.Email), clientIP)); err != nil {
		return "", nil, err
	}
	if len(current) > payment.MaxSignInInput || !s.checkPassword(u, current) {
		return "", nil, payment.Errorf(payment.CodeIncorrectPassword, "the current password is wrong")
	}
	hash, err := s.hashPassword(next)
	if err != nil {
		return "", nil, err
	}
	return s.startSession(ctx, u, sess.Mode, func(tx payment.Tx) error {
		return s.replacePassword(ctx, tx, u.ID, hash)
	})
}

// replacePassword sets a user's password hash, ends every session of the
// user and uses up every reset link: whoever knew the old password, or
// held a link sent before, is out.
func (s *Console) replacePassword(ctx context.Context, tx payment.Tx, userID uuid.UUID, hash []byte) error {
	now := s.clock.Now()
	if err := tx.SetUserPassword(ctx, userID, hash); err != nil {
		return err
	}
	forever := now.Add(time.Hour * 24 * 365 * 100)
	if err := tx.DeleteConsoleSessions(ctx, userID, forever, forever); err != nil {
		return err
	}
	return tx.UsePasswordResets(ctx, userID, now)
}

// RequestPasswordReset issues a reset link for the user with the address,
// if there is one, and mails it. The answer is the same either way, and so
// is the limit: PasswordResetsPerDay requests per address and UTC day, the
// next answered RESOURCE_LIMIT_REACHED, whether or not the address belongs
// to anyone. Requests from one client address are throttled as well.
func (s *Console) RequestPasswordReset(ctx context.Context, r payment.PasswordResetRequest) error {
	email := payment.NormalizeEmail(r.Email)
	if email == "" {
		return payment.Invalid("email", payment.ReasonRequired)
	}
	// The address is the daily quota's key, which is stored.
	var v payment.Validation
	if payment.CheckEmail(&v, "email", email); v.Err() != nil {
		return v.Err()
	}
	if err := s.throttle(ctx, resetRequestKeys(r.ClientIP)); err != nil {
		return err
	}
	token := rand.Text() + rand.Text()
	var mail *payment.PasswordResetMail
	err := s.db.Update(ctx, func(tx *outbox.Tx) error {
		mail = nil
		now := s.clock.Now()
		if err := payment.PasswordResetQuota().Take(ctx, tx, email, now); err != nil {
			return err
		}
		u, err := tx.UserByEmail(ctx, email)
		if payment.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		reset := &payment.PasswordReset{TokenHash: s.consoleHash("reset", token), UserID: u.ID, CreatedOn: now, ExpiresOn: now.Add(payment.PasswordResetTTL)}
		if err := tx.CreatePasswordReset(ctx, reset); err != nil {
			return err
		}
		mail = &payment.PasswordResetMail{To: u.Email, Link: s.publicOrigin + payment.PasswordResetPath + token, Locale: r.Locale, ExpiresOn: reset.ExpiresOn}
		return nil
	})
	if err != nil || mail == nil {
		return err
	}
	s.sendResetMail(*mail)
	return nil
}

// sendResetMail mails a link in the background: the request that asked
// for it answers at once, as it does for an address without a user.
func (s *Console) sendResetMail(m payment.PasswordResetMail) {
	if s.resetMailer == nil {
		return
	}
	s.mailing.Add(1)
	go func() {
		defer s.mailing.Done()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := s.resetMailer.SendPasswordReset(ctx, m); err != nil {
			s.logger.Error("password reset mail not sent", "err", err)
		}
	}()
}

// WaitForMail waits until the reset mails under way are sent (tests, and
// shutdown).
func (s *Console) WaitForMail() { s.mailing.Wait() }

// usableReset reads the reset of a token, or NOT_FOUND when it is
// unknown, used or expired: the page tells the user only that the link no
// longer works.
func (s *Console) usableReset(ctx context.Context, tx payment.Tx, token string) (*payment.PasswordReset, error) {
	gone := payment.NotFound("password reset link")
	if !validConsoleToken(token) {
		return nil, gone
	}
	r, err := tx.PasswordReset(ctx, s.consoleHash("reset", token))
	if payment.IsNotFound(err) {
		return nil, gone
	}
	if err != nil {
		return nil, err
	}
	if r.UsedOn != nil || !s.clock.Now().Before(r.ExpiresOn) {
		return nil, gone
	}
	return r, nil
}

// CheckPasswordReset reports whether a reset link still works, for the
// page that asks for the new password.
func (s *Console) CheckPasswordReset(ctx context.Context, token string) error {
	return s.db.View(ctx, func(tx payment.Tx) error {
		_, err := s.usableReset(ctx, tx, token)
		return err
	})
}

// ResetPassword sets a new password through a reset link. The link works
// once: using it uses up every link of the user, and ends every session.
func (s *Console) ResetPassword(ctx context.Context, token, password string) error {
	hash, err := s.hashNewPassword("password", password)
	if err != nil {
		return err
	}
	return s.db.Update(ctx, func(tx *outbox.Tx) error {
		r, err := s.usableReset(ctx, tx, token)
		if err != nil {
			return err
		}
		return s.replacePassword(ctx, tx, r.UserID, hash)
	})
}

// ConsoleUser is who a console session belongs to.
func (s *Console) ConsoleUser(ctx context.Context, sess *payment.ConsoleSession) (*payment.User, *payment.Merchant, error) {
	var u *payment.User
	var m *payment.Merchant
	err := s.db.View(ctx, func(tx payment.Tx) error {
		var err error
		if u, err = tx.User(ctx, sess.UserID); err != nil {
			return err
		}
		m, err = tx.Merchant(ctx, sess.MerchantID)
		return err
	})
	return u, m, err
}

// ConsoleCaller is the caller the console acts as for a session: the
// session's merchant, in the session's mode, with a server's rights (the
// console is the merchant at their own desk), for all its stores
// (storeID uuid.Nil) or for one of them, as a store token would. Another
// merchant's store is NOT_FOUND.
func (s *Console) ConsoleCaller(ctx context.Context, sess *payment.ConsoleSession, storeID uuid.UUID) (*payment.Caller, error) {
	if sess == nil || sess.UserID == uuid.Nil {
		return nil, errors.New("payment: ConsoleCaller without a session")
	}
	tok := &payment.AppToken{ID: sess.UserID, MerchantID: sess.MerchantID, StoreID: storeID, CreatorID: sess.UserID,
		Mode: sess.Mode, CreatedOn: sess.CreatedOn}
	c := payment.NewConsoleCaller(tok, s.publicOrigin)
	if storeID != uuid.Nil {
		err := s.db.View(ctx, func(tx payment.Tx) error {
			_, err := payment.VisibleStore(ctx, tx, c, storeID)
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	return c, nil
}
