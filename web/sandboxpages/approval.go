package sandboxpages

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"image"
	"image/color"
	"image/png"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/boombuler/barcode/qr"
	"github.com/gorilla/mux"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/templates"
	"github.com/kessai/kessai/web/message"
	"github.com/kessai/kessai/web/site"
)

// The sandbox acquirer's approval pages, on the gateway's origin: the
// 3-D Secure challenge a card issuer's access control server would show
// (payment.ThreeDSPagePath + key), and the payment screen of an online or
// merchant-presented QR wallet (payment.WalletPagePath + key). The key in
// the address is the approval's, and holding it is the authority: the
// shopper's browser has it from the merchant's issuer token, a phone from
// the QR code on the wallet page.
//
//	GET|POST {page}/{key}        the page; POST is how a merchant's page
//	                             sends the shopper with the issuer token's
//	                             payload, and changes nothing
//	POST     {page}/{key}/act    the page's buttons (a form with a CSRF
//	                             token), or a JSON body from tests and
//	                             scripts
//	GET      {page}/{key}/status {"status": …}, polled by the page's script
//	GET      /sandbox/wallet/{key}/qr.png  the QR code of the wallet page
//
// Once an approval has ended, its page sends the shopper to the merchant's
// redirect endpoint with resource_id, resource_type and redirect_id, or,
// without one, shows the outcome; a widget frame that framed the page
// learns it by polling the charge through the API.

const (
	// sandboxRoot is the prefix of every sandbox page (Paths).
	sandboxRoot = "/sandbox/"
	// maxSandboxBody bounds an action's body: a form with two short
	// fields and a CSRF token, or a small JSON object.
	maxSandboxBody = 16 << 10
	// maxReturnURL bounds the merchant's redirect endpoint, as the API
	// does when it takes one.
	maxReturnURL = 2048
	// qrModulePixels and qrQuietModules make the QR image: 8 pixels a
	// module, and the quiet zone of four modules readers need.
	qrModulePixels = 8
	qrQuietModules = 4
)

// sandboxKinds are the two approval pages, by the word in their path.
var sandboxKinds = []struct {
	kind payment.ApprovalKind
	path string // payment.ThreeDSPagePath or payment.WalletPagePath
	name string // in templates and CSS: "3ds" or "wallet"
}{
	{payment.ApprovalThreeDS, payment.ThreeDSPagePath, "3ds"},
	{payment.ApprovalWallet, payment.WalletPagePath, "wallet"},
}

// sandboxPages serves the approval pages.
type sandboxPages struct {
	svc    Service
	log    *slog.Logger
	tmpl   *template.Template
	origin string // the gateway's public origin, lower case
	// csrfKey authenticates the pages' CSRF tokens.
	csrfKey []byte
	now     func() time.Time
}

// newSandboxPages makes the approval pages; key is the pages' session
// key, which their CSRF key is derived from.
func newSandboxPages(cfg Config, log *slog.Logger, key []byte) (*sandboxPages, error) {
	if cfg.Service == nil {
		return nil, errors.New("sandboxpages: the sandbox pages need the payment service")
	}
	tmpl, err := template.New("").Funcs(site.Funcs()).ParseFS(templates.FS, "sandbox*.html")
	if err != nil {
		return nil, err
	}
	origin := site.Origin(cfg.PublicURL)
	if origin == "" {
		return nil, fmt.Errorf("sandboxpages: bad public URL %q", cfg.PublicURL)
	}
	return &sandboxPages{
		svc: cfg.Service, log: log, tmpl: tmpl, origin: origin,
		csrfKey: sandboxCSRFKey(key), now: cfg.Service.Clock().Now,
	}, nil
}

// routes serves the approval pages on r.
func (sp *sandboxPages) routes(r *mux.Router) {
	for _, k := range sandboxKinds {
		r.HandleFunc(k.path+"{key}", sp.show(k.kind)).Methods(site.Read...)
		r.HandleFunc(k.path+"{key}", sp.show(k.kind)).Methods(http.MethodPost)
		r.HandleFunc(k.path+"{key}/act", sp.act(k.kind)).Methods(http.MethodPost)
		r.HandleFunc(k.path+"{key}/status", sp.status(k.kind)).Methods(site.Read...)
	}
	r.HandleFunc(payment.WalletPagePath+"{key}"+payment.WalletQRSuffix, sp.qrImage).Methods(site.Read...)
	// The instructions page of a konbini payment or a bank transfer
	// (slip.go): one path for both kinds.
	r.HandleFunc(payment.SlipPagePath+"{key}", sp.showSlip).Methods(append([]string{http.MethodPost}, site.Read...)...)
	r.HandleFunc(payment.SlipPagePath+"{key}/act", sp.actSlip).Methods(http.MethodPost)
	r.HandleFunc(payment.SlipPagePath+"{key}/status", sp.slipStatus).Methods(site.Read...)
}

// sandboxCSRFKey is the key of the pages' CSRF tokens: one of their own,
// so that a token of these pages means nothing to the link form's
// sessions and the other way round.
func sandboxCSRFKey(sessionKey []byte) []byte {
	k := sha256.Sum256(append([]byte("kessai sandbox approval pages\x00"), sessionKey...))
	return k[:]
}

// kindName is the word of an approval kind in paths and templates; the
// instructions page's two kinds are "konbini" and "bank".
func kindName(kind payment.ApprovalKind) string {
	for _, k := range sandboxKinds {
		if k.kind == kind {
			return k.name
		}
	}
	switch kind {
	case payment.ApprovalKonbini:
		return "konbini"
	case payment.ApprovalBankTransfer:
		return "bank"
	}
	return ""
}

func pagePath(kind payment.ApprovalKind) string {
	for _, k := range sandboxKinds {
		if k.kind == kind {
			return k.path
		}
	}
	if isSlip(kind) {
		return payment.SlipPagePath
	}
	return sandboxRoot
}

// locale is the page's language: the locale parameter (of the query, or
// the form the page posted), else the browser's.
func (sp *sandboxPages) locale(r *http.Request, posted string) message.Locale {
	explicit := r.URL.Query().Get("locale")
	if explicit == "" {
		explicit = posted
	}
	return message.Negotiate(explicit, r.Header.Get("Accept-Language"))
}

// localeParam is the locale parameter the page's links and forms carry
// on: the one it was asked for in, or none, so that the browser's
// languages keep deciding.
func localeParam(r *http.Request, posted string) string {
	explicit := r.URL.Query().Get("locale")
	if explicit == "" {
		explicit = posted
	}
	if l, ok := message.Parse(explicit); ok {
		return string(l)
	}
	return ""
}

// approval reads the approval of the request's key, for a page of kind:
// an approval of the other kind is not there, as an unknown key.
func (sp *sandboxPages) approval(r *http.Request, kind payment.ApprovalKind) (*payment.ApprovalPage, error) {
	page, err := sp.svc.Approval(r.Context(), site.PathValue(r, "key"))
	if err != nil {
		return nil, err
	}
	if page.Kind != kind {
		return nil, payment.NotFound("approval")
	}
	return page, nil
}

// show renders an approval's page: GET, or POST with the issuer token's
// payload, which the page does not need (the key says which approval).
func (sp *sandboxPages) show(kind payment.ApprovalKind) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		loc := sp.locale(r, "")
		page, err := sp.approval(r, kind)
		if err != nil {
			sp.failErr(w, r, loc, err)
			return
		}
		if page.Status != payment.ApprovalAwaiting {
			sp.finish(w, r, loc, localeParam(r, ""), page)
			return
		}
		sp.renderApproval(w, loc, localeParam(r, ""), page)
	}
}

// sbView is what the sandbox's templates get.
type sbView struct {
	Lang  message.Locale
	T     map[string]string
	Title string
	// Kind is "3ds" or "wallet"; Look the wallet's CSS class ("paypay").
	Kind      string
	Look      string
	Mark      string
	BrandName string
	StoreName string
	// AmountText is empty for a token's challenge, which charges nothing.
	AmountText string
	LastFour   string
	Lead       string

	// The page's addresses, with its locale parameter; CSRF and Locale
	// are its forms' hidden fields.
	ActURL    string
	StatusURL string
	PageURL   string
	QRURL     string
	CSRF      string
	Locale    string
	Status    string
	// TriesLeft is shown once a wrong code was given (Wrong).
	Wrong     bool
	TriesLeft string
	// ExpiresIn is the seconds left, for the script's countdown; TimeLeft
	// the same as text.
	ExpiresIn int64
	TimeLeft  string
	CodeNote  string

	Result     string
	ResultText string
	ReturnURL  string

	ErrorText  string
	HTTPStatus int

	// ancestors and formAction go into the Content-Security-Policy.
	ancestors  string
	formAction string
}

// walletLook is how a wallet's page looks: a CSS class (static/sandbox.css
// has its colours), the letter of its mark, and its name's catalogue key.
type walletLook struct{ class, mark, name string }

// walletLooks are the looks by brand; a merchant-presented QR brand looks
// as its wallet.
var walletLooks = map[string]walletLook{
	"pay_pay_online":       {"paypay", "P", "brand_pay_pay"},
	"pay_pay_merchant":     {"paypay", "P", "brand_pay_pay"},
	"alipay_online":        {"alipay", "A", "brand_alipay"},
	"alipay_merchant_qr":   {"alipay", "A", "brand_alipay"},
	"alipay_plus_online":   {"alipay-plus", "A+", "brand_alipay_plus"},
	"we_chat_online":       {"wechat", "W", "brand_we_chat"},
	"we_chat_mpm":          {"wechat", "W", "brand_we_chat"},
	"d_barai_online":       {"dbarai", "d", "brand_d_barai"},
	"d_barai_merchant":     {"dbarai", "d", "brand_d_barai"},
	"rakuten_pay_merchant": {"rakuten", "R", "brand_rakuten"},
}

// lookOf is a brand's look; a brand without one gets a plain wallet's.
func lookOf(brand string) walletLook {
	if l, ok := walletLooks[brand]; ok {
		return l
	}
	return walletLook{"wallet", "W", "brand_wallet"}
}

// baseView fills what every page of an approval shows.
func (sp *sandboxPages) baseView(loc message.Locale, locParam string, page *payment.ApprovalPage) *sbView {
	t := message.Sandbox.In(loc)
	v := &sbView{
		Lang: loc, T: t, Kind: kindName(page.Kind), StoreName: page.StoreName, LastFour: page.LastFour,
		Locale: locParam, Status: string(page.Status),
		ancestors: site.FrameAncestors(page.FrameDomains), formAction: returnOrigin(page),
	}
	if page.Amount > 0 && page.Currency != "" {
		v.AmountText = site.Amount(page.Amount, page.Currency)
	}
	if page.Kind == payment.ApprovalWallet {
		look := lookOf(page.Brand)
		v.Look, v.Mark, v.BrandName = look.class, look.mark, t[look.name]
	}
	base := pagePath(page.Kind) + page.Key
	q := ""
	if locParam != "" {
		q = "?locale=" + locParam
	}
	v.PageURL, v.ActURL, v.StatusURL = base+q, base+"/act", base+"/status"
	if page.Kind == payment.ApprovalWallet {
		v.QRURL = base + payment.WalletQRSuffix
	}
	return v
}

// renderApproval renders the page of an approval that awaits the shopper.
func (sp *sandboxPages) renderApproval(w http.ResponseWriter, loc message.Locale, locParam string, page *payment.ApprovalPage) {
	v := sp.baseView(loc, locParam, page)
	v.CSRF = sp.csrfToken(page.Kind, page.Key)
	left := max(0, page.ExpiresOn.Sub(sp.now()))
	v.ExpiresIn = int64(left.Round(time.Second) / time.Second)
	v.TimeLeft = fmt.Sprintf("%d:%02d", v.ExpiresIn/60, v.ExpiresIn%60)
	name := "sandbox_wallet.html"
	if page.Kind == payment.ApprovalThreeDS {
		name = "sandbox_3ds.html"
		v.Title = v.T["acs_title"]
		v.Lead = v.T["acs_lead"]
		if page.ResourceType == payment.ResourceToken {
			v.Lead = fmt.Sprintf(v.T["acs_token_lead"], page.StoreName)
		}
		v.CodeNote = fmt.Sprintf(v.T["acs_sandbox_code"], payment.ChallengeCode)
		if page.Tries > 0 {
			v.Wrong = true
			v.TriesLeft = fmt.Sprintf(v.T["acs_wrong"], page.TriesLeft())
		}
	} else {
		v.Title = fmt.Sprintf(v.T["wallet_title"], v.BrandName)
		v.Lead = fmt.Sprintf(v.T["wallet_lead"], v.BrandName)
	}
	sp.render(w, http.StatusOK, name, v)
}

// finish is where an ended approval leaves the shopper: the merchant's
// redirect endpoint with the ids added to its query, or the outcome.
func (sp *sandboxPages) finish(w http.ResponseWriter, r *http.Request, loc message.Locale, locParam string, page *payment.ApprovalPage) {
	if target, ok := returnURL(page); ok {
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Referrer-Policy", "no-referrer")
		http.Redirect(w, r, target, http.StatusSeeOther)
		return
	}
	v := sp.baseView(loc, locParam, page)
	kind := v.Kind
	if page.ResourceType == payment.ResourceToken {
		kind += "_token"
	}
	v.Result = string(page.Status)
	v.Title = v.T["r_"+kind+"_"+v.Result+"_title"]
	v.ResultText = v.T["r_"+kind+"_"+v.Result+"_text"]
	if page.Kind == payment.ApprovalWallet && page.Status == payment.ApprovalSuccessful {
		v.ResultText = fmt.Sprintf(v.ResultText, v.AmountText, page.StoreName)
	}
	sp.render(w, http.StatusOK, "sandbox_result.html", v)
}

// returnURL is the merchant's redirect endpoint for an ended approval,
// with resource_id, resource_type and, when the merchant set one,
// redirect_id added to its own query.
func returnURL(page *payment.ApprovalPage) (string, bool) {
	if page.RedirectEndpoint == "" {
		return "", false
	}
	u, ok := payment.ParseWebURL(page.RedirectEndpoint, maxReturnURL)
	if !ok {
		return "", false
	}
	q := u.Query()
	q.Set("resource_id", page.ResourceID.String())
	q.Set("resource_type", page.ResourceType)
	if page.RedirectID != "" {
		q.Set("redirect_id", page.RedirectID)
	}
	u.RawQuery = q.Encode()
	return u.String(), true
}

// returnOrigin is the origin of the merchant's redirect endpoint, which
// the page's form-action must allow: Chromium applies form-action to the
// redirect that follows a form's submission.
func returnOrigin(page *payment.ApprovalPage) string {
	if page.RedirectEndpoint == "" {
		return ""
	}
	u, ok := payment.ParseWebURL(page.RedirectEndpoint, maxReturnURL)
	if !ok {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// actRequest is an action as the JSON endpoint takes it.
type actRequest struct {
	Action string `json:"action"`
	Code   string `json:"code"`
}

// parseForm reads a page's posted form, answering the page's own error
// (413 for a body over maxSandboxBody, 400 otherwise) when it cannot.
func (sp *sandboxPages) parseForm(w http.ResponseWriter, r *http.Request) bool {
	err := r.ParseForm()
	if err == nil {
		return true
	}
	status := http.StatusBadRequest
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		status = http.StatusRequestEntityTooLarge
	}
	sp.fail(w, sp.locale(r, ""), status, "invalid")
	return false
}

// act carries out an action on the approval: POST {page}/{key}/act.
func (sp *sandboxPages) act(kind payment.ApprovalKind) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, maxSandboxBody)
		if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "application/json" {
			sp.actJSON(w, r, kind)
			return
		}
		if !sp.parseForm(w, r) {
			return
		}
		posted := r.PostForm.Get("locale")
		loc, locParam := sp.locale(r, posted), localeParam(r, posted)
		key := site.PathValue(r, "key")
		// The page's own forms come from the gateway's origin, with the
		// token the page was rendered with; anything else is another
		// site making the shopper's browser act.
		if !sp.sameOrigin(r) || !sp.validToken(kind, key, r.PostForm.Get("csrf")) {
			sp.fail(w, loc, http.StatusForbidden, "forbidden")
			return
		}
		if _, err := sp.approval(r, kind); err != nil {
			sp.failErr(w, r, loc, err)
			return
		}
		// A code pasted with a space around it is still the code.
		code := strings.TrimSpace(r.PostForm.Get("code"))
		page, err := sp.svc.ActOnApproval(r.Context(), key, payment.ApprovalAction(r.PostForm.Get("action")), code)
		if err != nil {
			sp.failErr(w, r, loc, err)
			return
		}
		if page.Status == payment.ApprovalAwaiting {
			// A wrong code with tries left: the challenge again, saying
			// how many.
			sp.renderApproval(w, loc, locParam, page)
			return
		}
		sp.finish(w, r, loc, locParam, page)
	}
}

// actJSON is the sandbox's endpoint for tests and scripts: {"action":
// "pay"}, {"action": "answer", "code": "123456"}. It takes no CSRF token:
// a browser sends a JSON body to another origin only after a CORS
// preflight, which the gateway's pages never grant, so no other site can
// make a shopper's browser send one. A foreign Origin is still refused.
func (sp *sandboxPages) actJSON(w http.ResponseWriter, r *http.Request, kind payment.ApprovalKind) {
	if !sp.sameOrigin(r) {
		writeSandboxJSON(w, http.StatusForbidden, errorBody(payment.CodeInvalidDomain))
		return
	}
	body, err := io.ReadAll(r.Body)
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		writeSandboxJSON(w, http.StatusRequestEntityTooLarge, errorBody(payment.CodeBodyTooLarge))
		return
	}
	var req actRequest
	if err == nil {
		// One JSON value and nothing after it, as the API reads a body.
		err = json.Unmarshal(body, &req)
	}
	if err != nil {
		var typeErr *json.UnmarshalTypeError
		switch {
		case errors.As(err, &typeErr) && typeErr.Field != "":
			writeSandboxJSON(w, http.StatusBadRequest, errorBody(payment.CodeValidation, typeErr.Field, payment.ReasonInvalidType))
		default:
			writeSandboxJSON(w, http.StatusBadRequest, errorBody(payment.CodeValidation, "body", payment.ReasonInvalidFormat))
		}
		return
	}
	if _, err := sp.approval(r, kind); err != nil {
		sp.failJSON(w, r, err)
		return
	}
	page, err := sp.svc.ActOnApproval(r.Context(), site.PathValue(r, "key"), payment.ApprovalAction(req.Action), req.Code)
	if err != nil {
		sp.failJSON(w, r, err)
		return
	}
	writeSandboxJSON(w, http.StatusOK, map[string]string{
		"status": string(page.Status), "resource_id": page.ResourceID.String(), "resource_type": page.ResourceType,
	})
}

// status answers the approval's status: GET {page}/{key}/status, which
// the page's script polls so that a page left open follows what the
// shopper did elsewhere (paid on the phone that scanned the QR code).
func (sp *sandboxPages) status(kind payment.ApprovalKind) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		page, err := sp.approval(r, kind)
		if err != nil {
			sp.failJSON(w, r, err)
			return
		}
		writeSandboxJSON(w, http.StatusOK, map[string]string{"status": string(page.Status)})
	}
}

// qrImage is the PNG of the QR code of a wallet page: the page's absolute
// address, for a phone to open.
func (sp *sandboxPages) qrImage(w http.ResponseWriter, r *http.Request) {
	page, err := sp.approval(r, payment.ApprovalWallet)
	if err != nil {
		if !payment.IsNotFound(err) {
			sp.log.Error("sandbox: QR code", "error", err)
			http.Error(w, "Internal Server Error", http.StatusInternalServerError)
			return
		}
		http.NotFound(w, r)
		return
	}
	body, err := qrPNG(sp.walletPageURL(page.Key))
	if err != nil {
		sp.log.Error("sandbox: QR code", "error", err)
		http.Error(w, "Internal Server Error", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "image/png")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	_, _ = w.Write(body)
}

// walletPageURL is the absolute address of a wallet page.
func (sp *sandboxPages) walletPageURL(key string) string {
	return sp.origin + payment.WalletPagePath + key
}

// qrPNG draws the QR code of text as a two-colour PNG, each module a
// square of whole pixels inside the quiet zone.
func qrPNG(text string) ([]byte, error) {
	code, err := qr.Encode(text, qr.M, qr.Auto)
	if err != nil {
		return nil, err
	}
	n := code.Bounds().Dx()
	size := (n + 2*qrQuietModules) * qrModulePixels
	img := image.NewPaletted(image.Rect(0, 0, size, size), color.Palette{color.White, color.Black})
	for y := range n {
		for x := range n {
			if c := color.GrayModel.Convert(code.At(x, y)).(color.Gray); c.Y >= 128 {
				continue
			}
			x0, y0 := (x+qrQuietModules)*qrModulePixels, (y+qrQuietModules)*qrModulePixels
			for dy := range qrModulePixels {
				for dx := range qrModulePixels {
					img.SetColorIndex(x0+dx, y0+dy, 1)
				}
			}
		}
	}
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	if err := enc.Encode(&buf, img); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// csrfToken is the token of an approval's forms: a MAC of the kind and
// the key. It is not tied to a cookie, because the page must work where
// browsers withhold cookies: in a frame on a merchant's page (a third
// party there) and after a merchant's page posted the shopper to it.
func (sp *sandboxPages) csrfToken(kind payment.ApprovalKind, key string) string {
	m := hmac.New(sha256.New, sp.csrfKey)
	m.Write([]byte("act\x00" + string(kind) + "\x00" + key))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func (sp *sandboxPages) validToken(kind payment.ApprovalKind, key, token string) bool {
	return token != "" && hmac.Equal([]byte(token), []byte(sp.csrfToken(kind, key)))
}

// sameOrigin reports whether an action may come from the pages
// themselves. A browser names the page's origin in Origin, or "null":
// the pages' referrer policy is no-referrer, and under it browsers send
// "null" for a page's own form posts. Sec-Fetch-Site, where a browser
// sends it, says whether the page that posted is the gateway's. Without
// either (a script, an old browser) the CSRF token decides alone.
func (sp *sandboxPages) sameOrigin(r *http.Request) bool {
	switch o := r.Header.Get("Origin"); {
	case o == "", o == "null", strings.EqualFold(o, sp.origin):
	default:
		return false
	}
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none":
		return true
	}
	return false
}

// failErr shows the error page for a service error.
func (sp *sandboxPages) failErr(w http.ResponseWriter, r *http.Request, loc message.Locale, err error) {
	switch payment.ErrorCode(err) {
	case payment.CodeNotFound:
		sp.fail(w, loc, http.StatusNotFound, "not_found")
	case payment.CodeValidation:
		sp.fail(w, loc, http.StatusBadRequest, "invalid")
	default:
		sp.log.Error("sandbox page", "path", r.URL.Path, "error", err)
		sp.fail(w, loc, http.StatusInternalServerError, "internal")
	}
}

// fail shows an error page.
func (sp *sandboxPages) fail(w http.ResponseWriter, loc message.Locale, status int, key string) {
	t := message.Sandbox.In(loc)
	v := &sbView{
		Lang: loc, T: t, Title: t["e_"+key+"_title"], ErrorText: t["e_"+key+"_text"],
		HTTPStatus: status, ancestors: "'self'",
	}
	sp.render(w, status, "sandbox_error.html", v)
}

// render writes a page with the sandbox pages' headers: nothing inline,
// framed only by the gateway and the store's domains, and no Referer
// leaving the page, whose address holds the approval's key.
func (sp *sandboxPages) render(w http.ResponseWriter, status int, name string, v *sbView) {
	sp.renderPage(w, status, name, v, v)
}

// renderPage is render with data of the template's own, which holds v
// (the instructions page's view).
func (sp *sandboxPages) renderPage(w http.ResponseWriter, status int, name string, data any, v *sbView) {
	var buf bytes.Buffer
	if err := sp.tmpl.ExecuteTemplate(&buf, name, data); err != nil {
		sp.log.Error("sandbox page: template", "template", name, "error", err)
		http.Error(w, "Internal Server Error", http.StatusInternalServerError)
		return
	}
	ancestors := v.ancestors
	if ancestors == "" {
		ancestors = "'self'"
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", sandboxPolicy(ancestors, v.formAction))
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	if ancestors == "'self'" {
		// For browsers that ignore frame-ancestors.
		h.Set("X-Frame-Options", "SAMEORIGIN")
	}
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// sandboxPolicy is the pages' Content-Security-Policy. formAction is the
// merchant's redirect origin, or "".
func sandboxPolicy(ancestors, formAction string) string {
	action := "'self'"
	if formAction != "" {
		action += " " + formAction
	}
	return "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
		"form-action " + action + "; base-uri 'none'; object-src 'none'; frame-ancestors " + ancestors
}

// failJSON answers a service error to the JSON endpoints in the API's
// envelope.
func (sp *sandboxPages) failJSON(w http.ResponseWriter, r *http.Request, err error) {
	var pe *payment.Error
	switch {
	case payment.IsNotFound(err):
		writeSandboxJSON(w, http.StatusNotFound, errorBody(payment.CodeNotFound))
	case errors.As(err, &pe) && pe.Code == payment.CodeValidation:
		body := errorBody(payment.CodeValidation)
		for _, f := range pe.Fields {
			body.Errors = append(body.Errors, sandboxFieldError{Field: f.Field, Reason: f.Reason})
		}
		writeSandboxJSON(w, http.StatusBadRequest, body)
	default:
		sp.log.Error("sandbox endpoint", "path", r.URL.Path, "error", err)
		writeSandboxJSON(w, http.StatusInternalServerError, errorBody(payment.CodeInternal))
	}
}

// sandboxError is the API's error envelope.
type sandboxError struct {
	Status string              `json:"status"`
	Code   payment.Code        `json:"code"`
	Errors []sandboxFieldError `json:"errors"`
}

type sandboxFieldError struct {
	Field  string `json:"field"`
	Reason string `json:"reason"`
}

// errorBody is an error envelope with code and, given a field and a
// reason, that field.
func errorBody(code payment.Code, fieldReason ...string) sandboxError {
	e := sandboxError{Status: "error", Code: code, Errors: []sandboxFieldError{}}
	if len(fieldReason) == 2 {
		e.Errors = append(e.Errors, sandboxFieldError{Field: fieldReason[0], Reason: fieldReason[1]})
	}
	return e
}

func writeSandboxJSON(w http.ResponseWriter, status int, v any) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
