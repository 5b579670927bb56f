package console

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/kessai/kessai/server/forwarded"
	"github.com/kessai/kessai/server/mail"
	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/web/message"
	"github.com/kessai/kessai/web/site"
)

// Accounts is what the pages of a console user's account ask: signing in
// and out, a forgotten password's reset, a new password, test or live.
type Accounts interface {
	SignIn(ctx context.Context, r payment.SignInRequest) (token string, sess *payment.ConsoleSession, err error)
	SignOut(ctx context.Context, token string) error
	RequestPasswordReset(ctx context.Context, r payment.PasswordResetRequest) error
	CheckPasswordReset(ctx context.Context, token string) error
	ResetPassword(ctx context.Context, token, password string) error
	ChangePassword(ctx context.Context, sessionToken, current, next, clientIP string) (string, *payment.ConsoleSession, error)
	SetConsoleMode(ctx context.Context, token string, mode payment.Mode) error
}

// addRoutes serves the console on r: the pages before sign-in here, the
// payments and the keys and settings in their own files.
func (c *console) addRoutes(r *mux.Router) {
	r.HandleFunc("/console", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, consoleRoot, http.StatusMovedPermanently)
	}).Methods(site.Read...)
	// Any other method goes on to the console's root with its query, as
	// to a folder's path without its slash: 307 keeps the method.
	r.HandleFunc("/console", func(w http.ResponseWriter, r *http.Request) {
		u := url.URL{Path: consoleRoot, RawQuery: r.URL.RawQuery}
		http.Redirect(w, r, u.String(), http.StatusTemporaryRedirect)
	})
	c.handle(r, http.MethodGet, "/console/signin", c.public(c.signInPage))
	c.handle(r, http.MethodPost, "/console/signin", c.public(c.signIn))
	c.handle(r, http.MethodPost, "/console/signout", c.signedIn(c.signOut))
	c.handle(r, http.MethodGet, "/console/reset", c.public(c.resetRequestPage))
	c.handle(r, http.MethodPost, "/console/reset", c.public(c.requestReset))
	c.handle(r, http.MethodGet, "/console/reset/{reset}", c.public(c.resetPage))
	c.handle(r, http.MethodPost, "/console/reset/{reset}", c.public(c.reset))
	c.handle(r, http.MethodGet, "/console/mailbox", c.public(c.mailboxPage))
	c.handle(r, http.MethodGet, "/console/account", c.signedIn(c.accountPage))
	c.handle(r, http.MethodPost, "/console/account/password", c.signedIn(c.changePassword))
	c.handle(r, http.MethodPost, "/console/mode", c.signedIn(c.switchMode))
	c.paymentRoutes(r)
	c.slipRoutes(r)
	c.keyRoutes(r)
	// Anything else under /console/, in any method, is the console's own
	// "no such page".
	r.PathPrefix(consoleRoot).Handler(c.public(func(cr *consoleRequest) error {
		return payment.NotFound("page")
	}))
}

// handle registers a console page, GET (and HEAD) or POST, and records it
// as "METHOD path": the handler tests walk every route (CSRF on every
// form, other tenants' and other modes' ids on every path), so none can
// be added and forgotten. Path parameters are named after what they hold:
// {store}, {charge}, {apptoken}, {webhook}, {event}, {reset}.
func (c *console) handle(r *mux.Router, method, path string, h http.HandlerFunc) {
	c.routes = append(c.routes, method+" "+path)
	methods := []string{method}
	if method == http.MethodGet {
		methods = site.Read
	}
	r.HandleFunc(path, h).Methods(methods...)
}

// signInView is the sign-in page's content.
type signInView struct {
	Email string
	Next  string
	// Wait is, after too many attempts, how many seconds to wait.
	Wait int
}

func (c *console) signInPage(cr *consoleRequest) error {
	if token, _ := cr.cookie.Values[cookieSession].(string); token != "" {
		if _, err := c.svc.ConsoleSession(cr.r.Context(), token); err == nil {
			c.redirect(cr, localPath(cr.r.URL.Query().Get("next")))
			return nil
		}
	}
	c.render(cr, http.StatusOK, "console_signin", "", signInView{Next: cr.r.URL.Query().Get("next")})
	return nil
}

// signIn checks the form and, when it passes, starts a session in a
// cookie written afresh: the session token is new, the pre-sign-in form
// token is dropped, so nothing planted before sign-in survives it.
func (c *console) signIn(cr *consoleRequest) error {
	form := cr.r.PostForm
	v := signInView{Email: form.Get("email"), Next: form.Get("next")}
	token, _, err := c.svc.SignIn(cr.r.Context(), payment.SignInRequest{
		Email: form.Get("email"), Password: form.Get("password"), ClientIP: c.clientIP(cr.r),
	})
	if err != nil {
		var pe *payment.Error
		if !errors.As(err, &pe) {
			return err
		}
		status := http.StatusUnauthorized
		switch pe.Code {
		case payment.CodeTooManyRequests:
			status = http.StatusTooManyRequests
			v.Wait = int((pe.RetryAfter + time.Second - 1) / time.Second)
			cr.w.Header().Set("Retry-After", strconv.Itoa(max(1, v.Wait)))
		case payment.CodeServiceUnavailable:
			status = http.StatusServiceUnavailable
			cr.w.Header().Set("Retry-After", "1")
		}
		view := c.view(cr, "title_signin", "", v)
		if v.Wait == 0 {
			// A throttled attempt's page says how long to wait instead.
			view.Errors = c.errorTexts(cr.loc, err)
		}
		c.renderView(cr, status, "console_signin", view)
		return nil
	}
	locale := cr.cookie.Values[cookieLocale]
	cr.cookie.Values = map[any]any{cookieSession: token}
	if locale != nil {
		cr.cookie.Values[cookieLocale] = locale
	}
	c.redirect(cr, localPath(v.Next))
	return nil
}

func (c *console) signOut(cr *consoleRequest) error {
	if err := c.svc.SignOut(cr.r.Context(), cr.token); err != nil {
		return err
	}
	delete(cr.cookie.Values, cookieSession)
	return c.notice(cr, consoleRoot+"signin", "n_signed_out")
}

// resetView is the content of the reset pages.
type resetView struct {
	Email string
	Token string
	// Mailbox says that mail goes to the local mailbox.
	Mailbox bool
}

func (c *console) resetRequestPage(cr *consoleRequest) error {
	c.render(cr, http.StatusOK, "console_reset_request", "", resetView{Mailbox: c.mailbox != nil})
	return nil
}

// requestReset asks for a link. The page says the same whether or not
// the address has a user; only the daily limit and bad input answer
// otherwise.
func (c *console) requestReset(cr *consoleRequest) error {
	email := cr.r.PostForm.Get("email")
	err := c.svc.RequestPasswordReset(cr.r.Context(), payment.PasswordResetRequest{
		Email: email, Locale: string(cr.loc), ClientIP: c.clientIP(cr.r),
	})
	if err != nil {
		var pe *payment.Error
		if !errors.As(err, &pe) {
			return err
		}
		status := http.StatusBadRequest
		switch pe.Code {
		case payment.CodeTooManyRequests:
			status = http.StatusTooManyRequests
		case payment.CodeServiceUnavailable:
			status = http.StatusServiceUnavailable
		}
		view := c.view(cr, "title_reset_request", "", resetView{Email: email, Mailbox: c.mailbox != nil})
		view.Errors = c.errorTexts(cr.loc, err)
		if pe.Code == payment.CodeResourceLimit {
			view.Errors = []string{view.T["e_reset_limit"]}
		}
		c.renderView(cr, status, "console_reset_request", view)
		return nil
	}
	c.render(cr, http.StatusOK, "console_reset_sent", "", resetView{Email: email, Mailbox: c.mailbox != nil})
	return nil
}

func (c *console) resetPage(cr *consoleRequest) error {
	token := site.PathValue(cr.r, "reset")
	if err := c.svc.CheckPasswordReset(cr.r.Context(), token); err != nil {
		return c.resetGone(cr, err)
	}
	c.render(cr, http.StatusOK, "console_reset", "", resetView{Token: token})
	return nil
}

// resetGone is the page of a link that no longer works.
func (c *console) resetGone(cr *consoleRequest, err error) error {
	if !payment.IsNotFound(err) {
		return err
	}
	c.fail(cr, http.StatusNotFound, "e_reset_gone")
	return nil
}

func (c *console) reset(cr *consoleRequest) error {
	token := site.PathValue(cr.r, "reset")
	form := cr.r.PostForm
	if form.Get("password") != form.Get("confirm") {
		view := c.view(cr, "title_reset", "", resetView{Token: token})
		view.Errors = []string{view.T["e_passwords_differ"]}
		c.renderView(cr, http.StatusBadRequest, "console_reset", view)
		return nil
	}
	err := c.svc.ResetPassword(cr.r.Context(), token, form.Get("password"))
	if payment.IsNotFound(err) {
		return c.resetGone(cr, err)
	}
	if payment.ErrorCode(err) == payment.CodeValidation {
		view := c.view(cr, "title_reset", "", resetView{Token: token})
		view.Errors = c.errorTexts(cr.loc, err)
		c.renderView(cr, http.StatusBadRequest, "console_reset", view)
		return nil
	}
	if err != nil {
		return err
	}
	delete(cr.cookie.Values, cookieSession)
	return c.notice(cr, consoleRoot+"signin", "n_password_reset")
}

// mailboxView is the local mailbox's content.
type mailboxView struct {
	Messages []mail.Message
}

// mailboxPage shows the local mailbox, when the operator turned it on for
// local development (and mail has no SMTP server to go to), to a browser
// on this machine only: the mails hold reset links.
func (c *console) mailboxPage(cr *consoleRequest) error {
	if c.mailbox == nil || !fromThisMachine(cr.r) {
		return payment.NotFound("mailbox")
	}
	c.render(cr, http.StatusOK, "console_mailbox", "mailbox", mailboxView{Messages: c.mailbox.Messages()})
	return nil
}

// fromThisMachine reports whether a request came straight from a browser
// on this machine. A proxy on the same machine makes every request's peer
// loopback; what it adds (any forwarding header, even empty), the public
// Host it may pass on, and the HTTP/1.0 that nginx's plain proxy_pass
// speaks to its upstream tell most proxies apart. One that shows none of
// them (a TCP tunnel) cannot be told apart, which is why the mailbox is
// only ever on when the operator turns it on.
func fromThisMachine(r *http.Request) bool {
	switch {
	case !loopback(r):
		return false
	case !loopbackHost(r.Host):
		return false
	case !r.ProtoAtLeast(1, 1):
		return false
	case forwarded.Proxied(r.Header):
		return false
	}
	return true
}

// loopbackHost reports whether a Host header names this machine: a
// loopback address or localhost (and its subdomains, which browsers
// resolve to loopback themselves, RFC 6761), with or without a port.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if a, err := netip.ParseAddr(host); err == nil {
		return a.Zone() == "" && a.Unmap().IsLoopback()
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	return host == "localhost" || strings.HasSuffix(host, ".localhost")
}

// accountView is the account page's content.
type accountView struct{}

func (c *console) accountPage(cr *consoleRequest) error {
	c.render(cr, http.StatusOK, "console_account", "account", accountView{})
	return nil
}

// changePassword sets a new password: every other session ends, and this
// browser goes on in a new one.
func (c *console) changePassword(cr *consoleRequest) error {
	form := cr.r.PostForm
	fail := func(status int, errs []string) error {
		view := c.view(cr, "title_account", "account", accountView{})
		view.Errors = errs
		c.renderView(cr, status, "console_account", view)
		return nil
	}
	if form.Get("new_password") != form.Get("confirm") {
		return fail(http.StatusBadRequest, []string{message.Console.Get("e_passwords_differ", cr.loc)})
	}
	token, _, err := c.svc.ChangePassword(cr.r.Context(), cr.token, form.Get("current_password"), form.Get("new_password"), c.clientIP(cr.r))
	var pe *payment.Error
	if errors.As(err, &pe) && pe.Code != payment.CodeExpiredLoginToken {
		status := http.StatusBadRequest
		if pe.Code == payment.CodeTooManyRequests {
			status = http.StatusTooManyRequests
		}
		return fail(status, c.errorTexts(cr.loc, err))
	}
	if err != nil {
		return err
	}
	cr.cookie.Values[cookieSession] = token
	return c.notice(cr, consoleRoot+"account", "n_password_changed")
}

// switchMode shows test or live objects from now on.
func (c *console) switchMode(cr *consoleRequest) error {
	if err := c.svc.SetConsoleMode(cr.r.Context(), cr.token, payment.Mode(cr.r.PostForm.Get("mode"))); err != nil {
		return err
	}
	c.redirect(cr, localPath(cr.r.PostForm.Get("next")))
	return nil
}
