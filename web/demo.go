// Package web holds Kessai's browser-facing pages that are not the JSON
// API: the widget frame, the hosted link form and the demo storefront,
// which runs on its own origin so that everything it does with the gateway
// is really cross-origin.
package web

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/sessions"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/templates"
)

// DemoConfig is what the storefront needs to reach its gateway.
type DemoConfig struct {
	GatewayURL string
	// JWT is the store's app token without its secret: what a merchant
	// page may hold.
	JWT string
	// Secret lets the storefront's server verify payments with the
	// gateway before it shows an order as paid.
	Secret  string
	StoreID string
	// DataDir is where the storefront keeps its orders
	// (demo-orders.json).
	DataDir string
	Logger  *slog.Logger
	// PublicURL is the storefront's own external base URL, used for the
	// link form's return addresses; empty means the request's host over
	// http.
	PublicURL string
	// SessionKey authenticates the storefront's cart cookie; empty derives
	// one from Secret, so carts survive a restart with the same
	// credentials.
	SessionKey []byte
	// HTTPClient talks to the gateway; nil means a client with a timeout.
	HTTPClient *http.Client
}

// DemoOrdersFile is where the storefront keeps its orders, in DataDir.
const DemoOrdersFile = "demo-orders.json"

const (
	demoCookie   = "kessai_demo"
	demoCurrency = "JPY"
)

// demoProduct is something the shop sells. Prices are in yen, tax
// included.
type demoProduct struct {
	ID             string
	Name, NameJA   string
	Notes, NotesJA string
	Price          int64
	Image          string
	Badge, BadgeJA string
}

var demoProducts = []demoProduct{
	{ID: "hokkaido-morning", Name: "Hokkaido Morning Blend", NameJA: "北海道モーニングブレンド",
		Notes:   "Medium roast · 200 g. Milk chocolate, roasted almond and a clean, bright finish.",
		NotesJA: "中煎り・200 g。ミルクチョコレートとローストアーモンド、すっきりとした後味。",
		Price:   1600, Image: "hokkaido-morning.svg", Badge: "Bestseller", BadgeJA: "一番人気"},
	{ID: "kyoto-dark", Name: "Kyoto Dark Roast", NameJA: "京都ダークロースト",
		Notes:   "Dark roast · 200 g. Cacao, gentle smoke and brown sugar. Lovely with milk.",
		NotesJA: "深煎り・200 g。カカオ、ほのかなスモーク、黒糖の甘み。ミルクとの相性も抜群。",
		Price:   1800, Image: "kyoto-dark.svg"},
	{ID: "yirgacheffe", Name: "Ethiopia Yirgacheffe", NameJA: "エチオピア イルガチェフェ",
		Notes:   "Light roast · 200 g. Jasmine, bergamot and ripe peach. A single origin to savour.",
		NotesJA: "浅煎り・200 g。ジャスミン、ベルガモット、完熟した桃の香り。",
		Price:   2200, Image: "ethiopia-yirgacheffe.svg", Badge: "New", BadgeJA: "新入荷"},
	{ID: "drip-bags", Name: "Drip Bag Sampler ×10", NameJA: "ドリップバッグ 10袋セット",
		Notes:   "Ten single-cup drip bags, three roasts. Hot water is all you need.",
		NotesJA: "3種の焙煎を楽しめる1杯用ドリップバッグ10袋。お湯を注ぐだけ。",
		Price:   1200, Image: "drip-bags.svg"},
	{ID: "hasami-mug", Name: "Hasami Porcelain Mug", NameJA: "波佐見焼マグカップ",
		Notes:   "Hand-painted indigo waves, 300 ml. Dishwasher and microwave safe.",
		NotesJA: "藍色の波を手描きした 300 ml のマグ。食洗機・電子レンジ対応。",
		Price:   2400, Image: "hasami-mug.svg"},
	{ID: "ceramic-dripper", Name: "Arita Ceramic Dripper", NameJA: "有田焼ドリッパー",
		Notes:   "Terracotta glaze, 1–4 cups. Ribbed walls for an even, steady pour-over.",
		NotesJA: "テラコッタ釉の1〜4杯用。リブ構造で安定した抽出に。",
		Price:   3200, Image: "ceramic-dripper.svg"},
}

func demoProductByID(id string) (demoProduct, bool) {
	for _, p := range demoProducts {
		if p.ID == id {
			return p, true
		}
	}
	return demoProduct{}, false
}

// demo is the storefront.
type demo struct {
	cfg     DemoConfig
	log     *slog.Logger
	tmpl    *template.Template
	store   *sessions.CookieStore
	orders  *demoOrders
	client  *http.Client
	gateway string // the gateway's origin
	now     func() time.Time
}

// NewDemo returns the demo storefront's handler.
func NewDemo(cfg DemoConfig) (http.Handler, error) {
	d, err := newDemo(cfg)
	if err != nil {
		return nil, err
	}
	return d.routes(), nil
}

func newDemo(cfg DemoConfig) (*demo, error) {
	cfg.GatewayURL = strings.TrimRight(cfg.GatewayURL, "/")
	gw, err := url.Parse(cfg.GatewayURL)
	if err != nil || gw.Host == "" || (gw.Scheme != "http" && gw.Scheme != "https") {
		return nil, fmt.Errorf("web: bad gateway URL %q", cfg.GatewayURL)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	key := cfg.SessionKey
	if len(key) == 0 {
		k := sha256.Sum256([]byte("kessai demo storefront session\x00" + cfg.Secret + "\x00" + cfg.StoreID))
		key = k[:]
	}
	store := sessions.NewCookieStore(key)
	secure := strings.HasPrefix(cfg.PublicURL, "https://")
	store.Options = &sessions.Options{Path: "/", HttpOnly: true, Secure: secure, SameSite: http.SameSiteLaxMode}
	store.MaxAge(7 * 24 * 3600)

	d := &demo{
		cfg: cfg, log: cfg.Logger, store: store, client: cfg.HTTPClient,
		gateway: gw.Scheme + "://" + gw.Host, now: time.Now,
	}
	if d.client == nil {
		d.client = &http.Client{Timeout: 20 * time.Second}
	}
	if _, err := loadAssets(); err != nil {
		return nil, err
	}
	d.tmpl, err = template.New("").Funcs(template.FuncMap{
		"asset": d.assetURL,
		"yen":   func(n int64) string { return amountText(n, payment.Currency{Code: demoCurrency}) },
	}).ParseFS(templates.FS, "demo*.html")
	if err != nil {
		return nil, err
	}
	if cfg.DataDir == "" {
		return nil, errors.New("web: the demo storefront needs a data directory")
	}
	if d.orders, err = loadDemoOrders(filepath.Join(cfg.DataDir, DemoOrdersFile), d.log); err != nil {
		return nil, err
	}
	return d, nil
}

func (d *demo) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", d.home)
	mux.HandleFunc("GET /cart", d.cart)
	mux.HandleFunc("POST /cart", d.updateCart)
	mux.HandleFunc("GET /checkout", d.checkout)
	mux.HandleFunc("POST /orders", d.placeOrder)
	mux.HandleFunc("GET /orders", d.listOrders)
	mux.HandleFunc("GET /orders/return", d.linkReturn)
	mux.HandleFunc("GET /orders/{ref}", d.showOrder)
	mux.HandleFunc("GET /lang/{lang}", d.setLang)
	mux.HandleFunc("GET /static/{file...}", d.static)
	mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, d.assetURL("demo/favicon.svg"), http.StatusMovedPermanently)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		d.problem(w, r, http.StatusNotFound, "not_found", "")
	})
	return mux
}

// ---- assets ----

// isDemoAsset reports whether a static file is the storefront's: it serves
// only those, from the gateway's asset table (hashed, compressed).
func isDemoAsset(name string) bool {
	return name == "demo.css" || name == "demo.js" || (strings.HasPrefix(name, "demo/") && path.Ext(name) == ".svg")
}

// assetURL names a static file with its content hash, so that it can be
// cached for good.
func (d *demo) assetURL(name string) string { return StaticURL(name) }

func (d *demo) static(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("file")
	t, err := loadAssets()
	if err != nil || !isDemoAsset(name) || t.lookup(name) == nil {
		http.NotFound(w, r)
		return
	}
	if path.Ext(name) == ".svg" {
		w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	}
	t.lookup(name).serve(w, r)
}

// ---- session ----

// demoState is the shopper's session: the cart, the order reference the
// next payment is for, a CSRF token and the language.
type demoState struct {
	CSRF  string         `json:"c"`
	Cart  map[string]int `json:"k,omitempty"`
	Order string         `json:"o,omitempty"`
	Lang  string         `json:"l,omitempty"`
}

type demoSession struct {
	sess  *sessions.Session
	state demoState
}

func (d *demo) session(r *http.Request) *demoSession {
	sess, err := d.store.New(r, demoCookie)
	s := &demoSession{sess: sess}
	if err == nil {
		if raw, ok := sess.Values["s"].(string); ok {
			_ = json.Unmarshal([]byte(raw), &s.state)
		}
	}
	if s.state.CSRF == "" {
		s.state.CSRF = randomString(24)
	}
	if s.state.Cart == nil {
		s.state.Cart = map[string]int{}
	}
	return s
}

func (d *demo) save(w http.ResponseWriter, r *http.Request, s *demoSession) {
	b, _ := json.Marshal(s.state)
	s.sess.Values = map[any]any{"s": string(b)}
	if err := d.store.Save(r, w, s.sess); err != nil {
		d.log.Error("demo: saving the session", "error", err)
	}
}

// orderRef returns the reference of the order being paid for, making one
// up when there is none.
func (d *demo) orderRef(s *demoSession) string {
	if s.state.Order == "" {
		const alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789" // no 0/O, 1/I
		b := make([]byte, 5)
		if _, err := rand.Read(b); err != nil {
			panic(err)
		}
		for i := range b {
			b[i] = alphabet[int(b[i])%len(alphabet)]
		}
		s.state.Order = "KC-" + d.now().Format("060102") + "-" + string(b)
	}
	return s.state.Order
}

// checkCSRF reports whether a POST came from one of the shop's own pages.
func (d *demo) checkCSRF(r *http.Request, s *demoSession) bool {
	if o := r.Header.Get("Origin"); o != "" && o != "null" {
		u, err := url.Parse(o)
		if err != nil || u.Host != r.Host {
			return false
		}
	}
	got := r.PostForm.Get("csrf")
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(s.state.CSRF)) == 1
}

// ---- cart ----

type cartLine struct {
	Product demoProduct
	Name    string
	Qty     int
	Total   int64
}

type cartView struct {
	Lines []cartLine
	Count int
	Total int64
}

func (d *demo) cartView(s *demoSession, loc locale) cartView {
	var v cartView
	for _, p := range demoProducts {
		n := s.state.Cart[p.ID]
		if n <= 0 {
			continue
		}
		line := cartLine{Product: p, Name: p.name(loc), Qty: n, Total: p.Price * int64(n)}
		v.Lines = append(v.Lines, line)
		v.Count += n
		v.Total += line.Total
	}
	return v
}

func (p demoProduct) name(loc locale) string {
	if loc == localeJA {
		return p.NameJA
	}
	return p.Name
}

const demoMaxQty = 20

func (d *demo) updateCart(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 8<<10)
	s := d.session(r)
	if r.ParseForm() != nil || !d.checkCSRF(r, s) {
		d.problem(w, r, http.StatusForbidden, "csrf", "")
		return
	}
	id := r.PostForm.Get("product")
	if _, ok := demoProductByID(id); !ok {
		d.problem(w, r, http.StatusBadRequest, "not_found", "")
		return
	}
	n := s.state.Cart[id]
	switch r.PostForm.Get("op") {
	case "add":
		n++
	case "remove":
		n = 0
	case "set":
		v, err := strconv.Atoi(r.PostForm.Get("qty"))
		if err != nil {
			v = n
		}
		n = v
	case "inc":
		n++
	case "dec":
		n--
	}
	n = min(max(n, 0), demoMaxQty)
	if n == 0 {
		delete(s.state.Cart, id)
	} else {
		s.state.Cart[id] = n
	}
	d.save(w, r, s)
	back := "/cart"
	if r.PostForm.Get("back") == "home" {
		back = "/?added=" + url.QueryEscape(id) + "#shop"
	}
	http.Redirect(w, r, back, http.StatusSeeOther)
}

// ---- pages ----

// demoPage is what every storefront template gets.
type demoPage struct {
	Lang    locale
	T       map[string]string
	Title   string
	Path    string
	CSRF    string
	Cart    cartView
	Gateway string

	Products []demoProductView
	Added    string
	Flash    string

	OrderRef   string
	AppID      string
	Hosted     string
	FailedBack bool

	Order  *demoOrder
	Orders []demoOrderView

	ProblemTitle string
	ProblemText  string
	Detail       string
	Retry        *demoRetry
}

type demoProductView struct {
	demoProduct
	DisplayName  string
	DisplayNotes string
	DisplayBadge string
	InCart       int
}

type demoRetry struct {
	Order, ChargeID, Method string
}

func (d *demo) page(r *http.Request, s *demoSession, title string) demoPage {
	loc := d.locale(r, s)
	t := demoMessages[loc]
	return demoPage{Lang: loc, T: t, Title: t[title], Path: r.URL.Path, CSRF: s.state.CSRF,
		Cart: d.cartView(s, loc), Gateway: d.cfg.GatewayURL}
}

func (d *demo) locale(r *http.Request, s *demoSession) locale {
	if s.state.Lang != "" {
		return pickLocale(s.state.Lang, "")
	}
	return pickLocale("", r.Header.Get("Accept-Language"))
}

func (d *demo) setLang(w http.ResponseWriter, r *http.Request) {
	s := d.session(r)
	switch r.PathValue("lang") {
	case "ja":
		s.state.Lang = "ja"
	default:
		s.state.Lang = "en"
	}
	d.save(w, r, s)
	back := r.URL.Query().Get("back")
	// Only paths on this site: "/x", never "//host" or "/\host".
	if !strings.HasPrefix(back, "/") || strings.HasPrefix(back, "//") || strings.ContainsAny(back, "\\\r\n") {
		back = "/"
	}
	http.Redirect(w, r, back, http.StatusSeeOther)
}

func (d *demo) home(w http.ResponseWriter, r *http.Request) {
	s := d.session(r)
	p := d.page(r, s, "home_title")
	for _, pr := range demoProducts {
		v := demoProductView{demoProduct: pr, DisplayName: pr.name(p.Lang), InCart: s.state.Cart[pr.ID]}
		v.DisplayNotes, v.DisplayBadge = pr.Notes, pr.Badge
		if p.Lang == localeJA {
			v.DisplayNotes, v.DisplayBadge = pr.NotesJA, pr.BadgeJA
		}
		p.Products = append(p.Products, v)
	}
	if pr, ok := demoProductByID(r.URL.Query().Get("added")); ok {
		p.Added = fmt.Sprintf(p.T["added"], pr.name(p.Lang))
	}
	d.save(w, r, s)
	d.render(w, http.StatusOK, "demo_home.html", p, false)
}

func (d *demo) cart(w http.ResponseWriter, r *http.Request) {
	s := d.session(r)
	p := d.page(r, s, "cart_title")
	d.save(w, r, s)
	d.render(w, http.StatusOK, "demo_cart.html", p, false)
}

func (d *demo) checkout(w http.ResponseWriter, r *http.Request) {
	s := d.session(r)
	p := d.page(r, s, "checkout_title")
	if p.Cart.Count == 0 {
		d.save(w, r, s)
		http.Redirect(w, r, "/cart", http.StatusSeeOther)
		return
	}
	p.OrderRef = d.orderRef(s)
	p.AppID = d.cfg.JWT
	p.FailedBack = r.URL.Query().Get("result") == "failed"
	self := d.selfURL(r)
	q := url.Values{}
	q.Set("appId", d.cfg.JWT)
	q.Set("amount", strconv.FormatInt(p.Cart.Total, 10))
	q.Set("currency", demoCurrency)
	q.Set("order_id", p.OrderRef)
	q.Set("locale", string(p.Lang))
	q.Set("successRedirectUrl", self+"/orders/return?order="+url.QueryEscape(p.OrderRef))
	q.Set("pendingRedirectUrl", self+"/orders/return?order="+url.QueryEscape(p.OrderRef))
	q.Set("failureRedirectUrl", self+"/checkout?result=failed")
	q.Set("autoRedirect", "true")
	p.Hosted = d.cfg.GatewayURL + "/forms/demo?" + q.Encode()
	d.save(w, r, s)
	d.render(w, http.StatusOK, "demo_checkout.html", p, true)
}

// selfURL is the storefront's own base URL.
func (d *demo) selfURL(r *http.Request) string {
	if d.cfg.PublicURL != "" {
		return strings.TrimRight(d.cfg.PublicURL, "/")
	}
	return "http://" + r.Host
}

func (d *demo) listOrders(w http.ResponseWriter, r *http.Request) {
	s := d.session(r)
	p := d.page(r, s, "orders_title")
	for _, o := range d.orders.list() {
		p.Orders = append(p.Orders, o.view(p.Lang))
	}
	d.save(w, r, s)
	d.render(w, http.StatusOK, "demo_orders.html", p, false)
}

func (d *demo) showOrder(w http.ResponseWriter, r *http.Request) {
	s := d.session(r)
	o, ok := d.orders.get(r.PathValue("ref"))
	if !ok {
		d.problem(w, r, http.StatusNotFound, "not_found", "")
		return
	}
	p := d.page(r, s, "order_title")
	p.Order = o
	p.Orders = []demoOrderView{o.view(p.Lang)}
	p.Flash = r.URL.Query().Get("thanks")
	d.save(w, r, s)
	d.render(w, http.StatusOK, "demo_order.html", p, false)
}

// problem shows an error page.
func (d *demo) problem(w http.ResponseWriter, r *http.Request, status int, key, detail string) {
	s := d.session(r)
	p := d.page(r, s, "e_"+key+"_title")
	p.ProblemTitle, p.ProblemText, p.Detail = p.Title, p.T["e_"+key+"_text"], detail
	d.render(w, status, "demo_problem.html", p, false)
}

func (d *demo) render(w http.ResponseWriter, status int, name string, p demoPage, checkout bool) {
	var buf bytes.Buffer
	if err := d.tmpl.ExecuteTemplate(&buf, name, p); err != nil {
		d.log.Error("demo: template", "template", name, "error", err)
		http.Error(w, "Internal Server Error", http.StatusInternalServerError)
		return
	}
	// The page runs only its own script and, on the checkout page, the
	// gateway's loader, whose frame is the only thing it may embed. It
	// never calls the gateway's API itself.
	csp := "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
		"frame-src 'none'; form-action 'self'; base-uri 'none'; object-src 'none'; frame-ancestors 'none'"
	if checkout {
		csp = "default-src 'self'; script-src 'self' " + d.gateway + "; style-src 'self'; img-src 'self' data:; " +
			"connect-src 'self'; frame-src " + d.gateway + "; form-action 'self' " + d.gateway +
			"; base-uri 'none'; object-src 'none'; frame-ancestors 'none'"
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", csp)
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "strict-origin-when-cross-origin")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// ---- orders ----

// placeOrder is POST /orders: the browser reports a charge id (from the
// widget's callback or the HTML mode's hidden input); the server checks it
// with the gateway before the order counts as paid.
func (d *demo) placeOrder(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	s := d.session(r)
	if r.ParseForm() != nil || !d.checkCSRF(r, s) {
		d.problem(w, r, http.StatusForbidden, "csrf", "")
		return
	}
	chargeID := r.PostForm.Get("chargeId")
	if chargeID == "" {
		chargeID = r.PostForm.Get("univapayChargeId")
	}
	method := r.PostForm.Get("method")
	if !slices.Contains([]string{"modal", "inline", "html"}, method) {
		method = "widget"
	}
	d.settle(w, r, s, r.PostForm.Get("order"), chargeID, method)
}

// linkReturn is where the hosted link form sends the shopper back:
// GET /orders/return?order=…&univapayChargeId=….
func (d *demo) linkReturn(w http.ResponseWriter, r *http.Request) {
	s := d.session(r)
	q := r.URL.Query()
	d.settle(w, r, s, q.Get("order"), q.Get("univapayChargeId"), "hosted")
}

// settle verifies a charge for the session's order and records the order.
func (d *demo) settle(w http.ResponseWriter, r *http.Request, s *demoSession, ref, chargeID, method string) {
	id, err := uuid.Parse(chargeID)
	if err != nil {
		d.problem(w, r, http.StatusBadRequest, "unverified", "missing or malformed charge id")
		return
	}
	// A charge already recorded shows its order again (a reload, a double
	// submit) and is never used for a second order.
	if o, ok := d.orders.byCharge(id.String()); ok {
		if o.Ref != ref {
			d.problem(w, r, http.StatusConflict, "unverified", "this charge already paid another order")
			return
		}
		http.Redirect(w, r, "/orders/"+url.PathEscape(o.Ref), http.StatusSeeOther)
		return
	}
	loc := d.locale(r, s)
	cart := d.cartView(s, loc)
	if ref == "" || ref != s.state.Order || cart.Count == 0 {
		d.problem(w, r, http.StatusBadRequest, "unverified", "this payment is not for the order in your cart")
		return
	}
	ch, err := d.fetchCharge(r.Context(), id.String())
	if errors.Is(err, errChargeUnknown) {
		d.problem(w, r, http.StatusBadRequest, "unverified", err.Error())
		return
	}
	if err != nil {
		d.log.Warn("demo: verifying a charge", "charge", id, "error", err)
		d.problem(w, r, http.StatusBadGateway, "unverified", err.Error())
		return
	}
	if problem := ch.mismatch(d.cfg.StoreID, cart.Total, demoCurrency, ref); problem != "" {
		d.problem(w, r, http.StatusBadRequest, "unverified", problem)
		return
	}
	switch ch.Status {
	case "successful", "authorized":
	case "pending", "awaiting":
		p := d.page(r, s, "e_pending_title")
		p.ProblemTitle, p.ProblemText = p.Title, p.T["e_pending_text"]
		p.Retry = &demoRetry{Order: ref, ChargeID: id.String(), Method: method}
		d.save(w, r, s)
		d.render(w, http.StatusAccepted, "demo_problem.html", p, false)
		return
	default:
		d.problem(w, r, http.StatusPaymentRequired, "declined", "charge status: "+ch.Status)
		return
	}
	o := &demoOrder{
		Ref: ref, ChargeID: ch.ID, TokenID: ch.TransactionTokenID, Status: ch.Status, Mode: ch.Mode,
		Amount: ch.RequestedAmount, Currency: strings.ToUpper(ch.RequestedCurrency), Method: method,
		CreatedAt: d.now().UTC(),
	}
	for _, l := range cart.Lines {
		o.Items = append(o.Items, demoOrderItem{Product: l.Product.ID, Name: l.Product.Name, NameJA: l.Product.NameJA,
			Qty: l.Qty, Price: l.Product.Price})
	}
	if err := d.orders.add(o); err != nil {
		if errors.Is(err, errDuplicateOrder) {
			http.Redirect(w, r, "/orders/"+url.PathEscape(ref), http.StatusSeeOther)
			return
		}
		d.log.Error("demo: saving the order", "error", err)
		d.problem(w, r, http.StatusInternalServerError, "internal", "")
		return
	}
	d.log.Info("demo: order paid", "order", ref, "charge", ch.ID, "method", method)
	s.state.Cart, s.state.Order = map[string]int{}, ""
	d.save(w, r, s)
	http.Redirect(w, r, "/orders/"+url.PathEscape(ref)+"?thanks=1", http.StatusSeeOther)
}

// gatewayCharge is the part of the gateway's charge the shop checks.
type gatewayCharge struct {
	ID                 string         `json:"id"`
	StoreID            string         `json:"store_id"`
	TransactionTokenID string         `json:"transaction_token_id"`
	RequestedAmount    int64          `json:"requested_amount"`
	RequestedCurrency  string         `json:"requested_currency"`
	Status             string         `json:"status"`
	Mode               string         `json:"mode"`
	Metadata           map[string]any `json:"metadata"`
}

func (c *gatewayCharge) mismatch(storeID string, amount int64, currency, ref string) string {
	switch {
	case !strings.EqualFold(c.StoreID, storeID):
		return "the charge belongs to another store"
	case c.RequestedAmount != amount:
		return fmt.Sprintf("the charge is for %d, the cart totals %d", c.RequestedAmount, amount)
	case !strings.EqualFold(c.RequestedCurrency, currency):
		return "the charge's currency is " + c.RequestedCurrency
	case metaString(c.Metadata, metaOrderID) != ref:
		return "the charge is for another order"
	}
	return ""
}

// errChargeUnknown is the gateway's 404: no such charge in the shop's store.
var errChargeUnknown = errors.New("the gateway knows no such charge in this store")

// fetchCharge asks the gateway about a charge, as a merchant's server
// does: with the secret-bearing token, waiting a little while it is still
// being processed.
func (d *demo) fetchCharge(ctx context.Context, id string) (*gatewayCharge, error) {
	u := d.cfg.GatewayURL + "/stores/" + url.PathEscape(d.cfg.StoreID) + "/charges/" + url.PathEscape(id) + "?polling=true"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+d.cfg.Secret+"."+d.cfg.JWT)
	req.Header.Set("Accept", "application/json")
	res, err := d.client.Do(req)
	if err != nil {
		return nil, errors.New("the gateway could not be reached")
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		return nil, errors.New("the gateway's answer was cut short")
	}
	if res.StatusCode == http.StatusNotFound {
		return nil, errChargeUnknown
	}
	if res.StatusCode != http.StatusOK {
		var e struct {
			Code string `json:"code"`
		}
		_ = json.Unmarshal(body, &e)
		return nil, fmt.Errorf("the gateway answered %d %s", res.StatusCode, e.Code)
	}
	var ch gatewayCharge
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&ch); err != nil {
		return nil, errors.New("the gateway's answer is not a charge")
	}
	if !strings.EqualFold(ch.ID, id) {
		return nil, errors.New("the gateway answered with another charge")
	}
	return &ch, nil
}

// demoOrder is a paid order.
type demoOrder struct {
	Ref       string          `json:"ref"`
	ChargeID  string          `json:"charge_id"`
	TokenID   string          `json:"token_id,omitempty"`
	Status    string          `json:"status"`
	Mode      string          `json:"mode,omitempty"`
	Amount    int64           `json:"amount"`
	Currency  string          `json:"currency"`
	Method    string          `json:"method"`
	Items     []demoOrderItem `json:"items"`
	CreatedAt time.Time       `json:"created_at"`
}

type demoOrderItem struct {
	Product string `json:"product"`
	Name    string `json:"name"`
	NameJA  string `json:"name_ja,omitempty"`
	Qty     int    `json:"qty"`
	Price   int64  `json:"price"`
}

type demoOrderView struct {
	*demoOrder
	When        string
	AmountText  string
	StatusText  string
	MethodText  string
	ItemSummary string
	Lines       []cartLine
}

func (o *demoOrder) view(loc locale) demoOrderView {
	t := demoMessages[loc]
	v := demoOrderView{demoOrder: o, StatusText: t["status_"+o.Status], MethodText: t["method_"+o.Method]}
	jst := time.FixedZone("JST", 9*3600)
	if loc == localeJA {
		v.When = o.CreatedAt.In(jst).Format("2006/01/02 15:04")
	} else {
		v.When = o.CreatedAt.In(jst).Format("2 Jan 2006, 15:04 MST")
	}
	cur, ok := payment.LookupCurrency(o.Currency)
	if !ok {
		cur = payment.Currency{Code: o.Currency}
	}
	v.AmountText = amountText(o.Amount, cur)
	var names []string
	for _, it := range o.Items {
		name := it.Name
		if loc == localeJA && it.NameJA != "" {
			name = it.NameJA
		}
		p, _ := demoProductByID(it.Product)
		v.Lines = append(v.Lines, cartLine{Product: p, Name: name, Qty: it.Qty, Total: it.Price * int64(it.Qty)})
		names = append(names, fmt.Sprintf("%s × %d", name, it.Qty))
	}
	v.ItemSummary = strings.Join(names, ", ")
	if v.StatusText == "" {
		v.StatusText = o.Status
	}
	return v
}

// demoOrders are the shop's orders, kept in a JSON file.
type demoOrders struct {
	mu     sync.Mutex
	path   string
	orders []*demoOrder // oldest first
}

var errDuplicateOrder = errors.New("order already recorded")

func loadDemoOrders(path string, log *slog.Logger) (*demoOrders, error) {
	o := &demoOrders{path: path}
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return o, nil
	case err != nil:
		return nil, err
	}
	var file struct {
		Orders []*demoOrder `json:"orders"`
	}
	if err := json.Unmarshal(b, &file); err != nil {
		// Keep the unreadable file for a human and start afresh.
		aside := path + ".corrupt-" + time.Now().UTC().Format("20060102T150405")
		log.Warn("demo: orders file unreadable; moved aside", "path", path, "to", aside, "error", err)
		if err := os.Rename(path, aside); err != nil {
			return nil, err
		}
		return o, nil
	}
	o.orders = file.Orders
	return o, nil
}

func (o *demoOrders) list() []*demoOrder {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := slices.Clone(o.orders)
	slices.Reverse(out)
	return out
}

func (o *demoOrders) get(ref string) (*demoOrder, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, x := range o.orders {
		if x.Ref == ref {
			return x, true
		}
	}
	return nil, false
}

func (o *demoOrders) byCharge(id string) (*demoOrder, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, x := range o.orders {
		if strings.EqualFold(x.ChargeID, id) {
			return x, true
		}
	}
	return nil, false
}

func (o *demoOrders) add(n *demoOrder) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, x := range o.orders {
		if x.Ref == n.Ref || strings.EqualFold(x.ChargeID, n.ChargeID) {
			return errDuplicateOrder
		}
	}
	next := append(slices.Clone(o.orders), n)
	b, err := json.MarshalIndent(struct {
		Orders []*demoOrder `json:"orders"`
	}{next}, "", "  ")
	if err != nil {
		return err
	}
	if err := writeFileAtomic(o.path, append(b, '\n')); err != nil {
		return err
	}
	o.orders = next
	return nil
}

// writeFileAtomic replaces a file so that readers see the old content or
// the new, never a part: a temporary file in the same directory, synced,
// then renamed over the old one.
func writeFileAtomic(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err = f.Chmod(0o600); err != nil {
		return err
	}
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return err
	}
	// Make the rename itself durable.
	if dh, derr := os.Open(dir); derr == nil {
		_ = dh.Sync()
		dh.Close()
	}
	return nil
}

// demoMessages are the storefront's words.
var demoMessages = map[locale]map[string]string{
	localeEN: {
		"meta_description": "Kessai Coffee: a demo shop for the Kessai payment gateway.",
		"skip":             "Skip to content",
		"banner_pill":      "Demo",
		"banner":           "A test-mode shop for the Kessai payment gateway: no real money moves.",
		"banner_link":      "Test cards",
		"nav_label":        "Main",
		"nav_shop":         "Shop",
		"nav_orders":       "Orders",
		"nav_cart":         "Cart",
		"cart_count":       "%d items",
		"lang_label":       "Language",
		"footer":           "Small-batch coffee from an imaginary roastery in Tokyo.",
		"footer_gateway":   "Payments are taken by the Kessai gateway at",

		"home_title":       "Small-batch coffee",
		"hero_kicker":      "Kessai demo storefront",
		"hero_title":       "Small-batch coffee, roasted in Tokyo.",
		"hero_text":        "A real little shop wired to the Kessai gateway. Add something to your cart and pay with a test card — in a pop-up, inside the page, with a plain HTML form or on Kessai's hosted page. Every payment is checked by this shop's server before the order counts.",
		"hero_cta":         "Browse the coffee",
		"test_cards_title": "Test cards",
		"test_ok":          "succeeds",
		"test_ng":          "declined",
		"test_any":         "Any future expiry date, any 3-digit CVC and any name.",
		"shop_title":       "Our coffee",
		"shop_sub":         "Roasted every Monday and Thursday. Prices include tax; shipping is free.",
		"add_to_cart":      "Add to cart",
		"add_named":        "Add %s to cart",
		"in_cart":          "%d in your cart",
		"added":            "%s is in your cart.",
		"view_cart":        "View cart",
		"how_title":        "What happens when you pay",
		"how_1_title":      "The card form comes from the gateway",
		"how_1":            "This page loads one script from Kessai. Card fields live in a frame on the gateway's origin, so this shop never sees a card number.",
		"how_2_title":      "The shop gets only an id",
		"how_2":            "When the payment succeeds, the widget hands this page the charge id and nothing else.",
		"how_3_title":      "The shop's server checks it",
		"how_3":            "Before an order counts as paid, the shop's server asks the gateway — with its secret — whether that charge really is for this cart's amount.",

		"cart_title":        "Your cart",
		"cart_empty":        "Your cart is empty. The beans are waiting.",
		"continue_shopping": "Continue shopping",
		"remove":            "Remove",
		"remove_named":      "Remove %s",
		"dec_named":         "One fewer %s",
		"inc_named":         "One more %s",
		"qty":               "Quantity",
		"summary":           "Order summary",
		"subtotal":          "Subtotal",
		"shipping":          "Shipping",
		"free":              "Free",
		"total":             "Total (tax incl.)",
		"checkout_btn":      "Proceed to checkout",

		"checkout_title":     "Checkout",
		"crumbs":             "Breadcrumb",
		"pay_how":            "Choose how to pay",
		"order_ref":          "Order",
		"pay_amount":         "Pay %s",
		"processing":         "Confirming your payment…",
		"widget_unavailable": "The payment form could not be loaded from the gateway. Is it running?",
		"widget_error":       "The payment did not go through. Please check the card details and try again.",
		"failed_back":        "The payment on the hosted page did not go through. You can try again with any method.",
		"m_modal":            "Pop-up",
		"m_modal_short":      "Widget in a dialog",
		"m_modal_text":       "Opens Kessai's card form in a dialog over this page. This is what most shops use.",
		"m_inline":           "Embedded",
		"m_inline_short":     "Form in the page",
		"m_inline_text":      "The card form sits right here, in a frame served by the gateway; this page's own button submits it.",
		"m_html":             "HTML form",
		"m_html_short":       "No JavaScript to write",
		"m_html_text":        "A <span data-app-id> inside a plain form. The loader turns it into a button, adds univapayChargeId to the form and submits it.",
		"m_hosted":           "Hosted page",
		"m_hosted_short":     "Pay on Kessai",
		"m_hosted_text":      "Leave this site and pay on Kessai's hosted payment page; it sends you back here, and this shop checks the payment.",
		"hosted_btn":         "Continue to the secure payment page",
		"code_label":         "How this is embedded",
		"secure_note":        "Card details are typed into a frame served by the gateway — this shop never sees them — and the shop's server verifies every payment with the gateway before confirming your order.",

		"orders_title":  "Orders",
		"orders_sub":    "Every order below was verified by the shop's server with the gateway's API before it was recorded.",
		"orders_empty":  "No orders yet. Buy some coffee with a test card and it will show up here.",
		"col_order":     "Order",
		"col_date":      "Date",
		"col_items":     "Items",
		"col_amount":    "Amount",
		"col_method":    "Paid with",
		"col_status":    "Status",
		"col_charge":    "Charge ID",
		"mode":          "Mode",
		"order_title":   "Order",
		"order_heading": "Order %s",
		"thanks_title":  "Thank you for your order!",
		"thanks_text":   "The shop's server confirmed your payment with the gateway. Your coffee is on its way (in spirit).",
		"all_orders":    "All orders",

		"status_successful": "Paid",
		"status_authorized": "Authorised",
		"method_modal":      "Pop-up widget",
		"method_inline":     "Embedded widget",
		"method_html":       "HTML form",
		"method_hosted":     "Hosted page",
		"method_widget":     "Widget",

		"reason":           "Reason:",
		"check_again":      "Check again",
		"back_to_checkout": "Back to checkout",
		"back_home":        "Back to the shop",

		"e_not_found_title":  "Page not found",
		"e_not_found_text":   "There is nothing at this address.",
		"e_csrf_title":       "Please try that again",
		"e_csrf_text":        "The form you sent had expired or came from another site. Reload the page and try again.",
		"e_unverified_title": "We could not confirm your payment",
		"e_unverified_text":  "The shop checks every payment with the gateway before accepting an order, and this one did not pass. Your order has not been placed.",
		"e_declined_title":   "Payment not completed",
		"e_declined_text":    "The gateway reports that this payment did not succeed, so no order was placed. You can try again with another card.",
		"e_pending_title":    "Your payment is still processing",
		"e_pending_text":     "The gateway has not finished with this payment yet. Check again in a moment.",
		"e_internal_title":   "Something went wrong",
		"e_internal_text":    "The shop had a problem saving your order. Please try again.",
	},
	localeJA: {
		"meta_description": "Kessai Coffee — Kessai 決済ゲートウェイのデモショップ",
		"skip":             "本文へ移動",
		"banner_pill":      "デモ",
		"banner":           "Kessai 決済ゲートウェイのテストモードのショップです。実際の請求は発生しません。",
		"banner_link":      "テストカード",
		"nav_label":        "メイン",
		"nav_shop":         "ショップ",
		"nav_orders":       "注文履歴",
		"nav_cart":         "カート",
		"cart_count":       "%d 点",
		"lang_label":       "言語",
		"footer":           "東京の架空の小さな焙煎所のコーヒー。",
		"footer_gateway":   "決済は Kessai ゲートウェイで行われます：",

		"home_title":       "小さな焙煎所のコーヒー",
		"hero_kicker":      "Kessai デモストア",
		"hero_title":       "東京の小さな焙煎所から、焙きたてのコーヒーを。",
		"hero_text":        "Kessai ゲートウェイにつながった、本物の小さなショップです。商品をカートに入れて、テストカードでお支払いください。ポップアップ、ページ内フォーム、HTML フォーム、Kessai のホスト型決済ページの4通りを試せます。注文は必ずショップのサーバーが決済を確認してから確定します。",
		"hero_cta":         "コーヒーを見る",
		"test_cards_title": "テストカード",
		"test_ok":          "成功",
		"test_ng":          "拒否",
		"test_any":         "有効期限は未来の日付、セキュリティコードは任意の3桁、名義は自由です。",
		"shop_title":       "コーヒー豆と道具",
		"shop_sub":         "毎週月曜・木曜に焙煎。価格は税込、送料無料です。",
		"add_to_cart":      "カートに入れる",
		"add_named":        "%s をカートに入れる",
		"in_cart":          "カートに %d 点",
		"added":            "%s をカートに入れました。",
		"view_cart":        "カートを見る",
		"how_title":        "お支払いの仕組み",
		"how_1_title":      "カード入力欄はゲートウェイから",
		"how_1":            "このページは Kessai のスクリプトを1つ読み込むだけ。カード入力欄はゲートウェイのオリジンのフレーム内にあり、ショップはカード番号に触れません。",
		"how_2_title":      "ショップが受け取るのは ID だけ",
		"how_2":            "決済が成功すると、ウィジェットはこのページに決済 ID だけを渡します。",
		"how_3_title":      "ショップのサーバーが確認",
		"how_3":            "注文を確定する前に、ショップのサーバーがシークレット付きでゲートウェイに問い合わせ、その決済がカートの金額と一致するかを確かめます。",

		"cart_title":        "カート",
		"cart_empty":        "カートは空です。コーヒー豆がお待ちしています。",
		"continue_shopping": "買い物を続ける",
		"remove":            "削除",
		"remove_named":      "%s を削除",
		"dec_named":         "%s を1つ減らす",
		"inc_named":         "%s を1つ増やす",
		"qty":               "数量",
		"summary":           "ご注文内容",
		"subtotal":          "小計",
		"shipping":          "送料",
		"free":              "無料",
		"total":             "合計（税込）",
		"checkout_btn":      "レジに進む",

		"checkout_title":     "お支払い",
		"crumbs":             "パンくずリスト",
		"pay_how":            "お支払い方法を選択",
		"order_ref":          "注文番号",
		"pay_amount":         "%s を支払う",
		"processing":         "お支払いを確認しています…",
		"widget_unavailable": "ゲートウェイから決済フォームを読み込めませんでした。ゲートウェイは起動していますか？",
		"widget_error":       "お支払いが完了しませんでした。カード情報を確認して、もう一度お試しください。",
		"failed_back":        "ホスト型決済ページでのお支払いは完了しませんでした。どの方法でも再度お試しいただけます。",
		"m_modal":            "ポップアップ",
		"m_modal_short":      "ダイアログで入力",
		"m_modal_text":       "Kessai のカード入力フォームをこのページの上にダイアログで開きます。最も一般的な組み込み方です。",
		"m_inline":           "埋め込み",
		"m_inline_short":     "ページ内で入力",
		"m_inline_text":      "ゲートウェイが配信するフレームで、カード入力フォームをこのページ内に表示します。送信はこのページのボタンから行います。",
		"m_html":             "HTML フォーム",
		"m_html_short":       "JavaScript 不要",
		"m_html_text":        "通常のフォームに <span data-app-id> を置くだけ。ローダーがボタンを表示し、フォームに univapayChargeId を追加して送信します。",
		"m_hosted":           "決済ページ",
		"m_hosted_short":     "Kessai で支払う",
		"m_hosted_text":      "Kessai のホスト型決済ページでお支払いいただきます。完了後このショップに戻り、ショップが決済を確認します。",
		"hosted_btn":         "安全な決済ページへ進む",
		"code_label":         "組み込みコード",
		"secure_note":        "カード情報はゲートウェイが配信するフレームに入力され、ショップには渡りません。ショップのサーバーはゲートウェイで決済を確認してから注文を確定します。",

		"orders_title":  "注文履歴",
		"orders_sub":    "以下の注文はすべて、ショップのサーバーがゲートウェイの API で決済を確認してから記録したものです。",
		"orders_empty":  "まだ注文はありません。テストカードでコーヒーを購入すると、ここに表示されます。",
		"col_order":     "注文番号",
		"col_date":      "日時",
		"col_items":     "商品",
		"col_amount":    "金額",
		"col_method":    "支払い方法",
		"col_status":    "状態",
		"col_charge":    "決済 ID",
		"mode":          "モード",
		"order_title":   "ご注文",
		"order_heading": "ご注文 %s",
		"thanks_title":  "ご注文ありがとうございます！",
		"thanks_text":   "ショップのサーバーがゲートウェイでお支払いを確認しました。コーヒーは（気持ちの上で）発送済みです。",
		"all_orders":    "注文履歴を見る",

		"status_successful": "支払い済み",
		"status_authorized": "与信済み",
		"method_modal":      "ポップアップ",
		"method_inline":     "埋め込みフォーム",
		"method_html":       "HTML フォーム",
		"method_hosted":     "決済ページ",
		"method_widget":     "ウィジェット",

		"reason":           "理由：",
		"check_again":      "もう一度確認する",
		"back_to_checkout": "お支払いに戻る",
		"back_home":        "ショップに戻る",

		"e_not_found_title":  "ページが見つかりません",
		"e_not_found_text":   "このアドレスには何もありません。",
		"e_csrf_title":       "もう一度お試しください",
		"e_csrf_text":        "送信されたフォームの有効期限が切れているか、別のサイトから送信されました。ページを再読み込みしてもう一度お試しください。",
		"e_unverified_title": "お支払いを確認できませんでした",
		"e_unverified_text":  "ショップは注文を受け付ける前に必ずゲートウェイで決済を確認しますが、このお支払いは確認できませんでした。注文は確定していません。",
		"e_declined_title":   "お支払いが完了しませんでした",
		"e_declined_text":    "ゲートウェイによると、このお支払いは成功しなかったため注文は確定していません。別のカードでもう一度お試しください。",
		"e_pending_title":    "お支払いを処理中です",
		"e_pending_text":     "ゲートウェイでの処理がまだ完了していません。少し待ってからもう一度確認してください。",
		"e_internal_title":   "エラーが発生しました",
		"e_internal_text":    "ご注文の保存中に問題が発生しました。もう一度お試しください。",
	},
}
