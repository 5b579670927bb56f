// Package demo is Kessai Coffee, the demo storefront: a reference merchant
// that runs on its own origin, so that everything it does with the gateway
// is really cross-origin, and reaches the gateway only as any merchant
// does — its pages load the loader from the gateway's URL with the store's
// app token, and its server checks every payment over HTTP with the
// token's secret before an order counts. It imports no package of the
// gateway (a test keeps it so); what it shares with the gateway's pages is
// the embedded static files and templates and the message catalogue.
package demo

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/sessions"

	"github.com/kessai/kessai/static"
	"github.com/kessai/kessai/templates"
	"github.com/kessai/kessai/web/asset"
	"github.com/kessai/kessai/web/message"
)

// Config is what the storefront needs to reach its gateway.
type Config struct {
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
	// WebhookURL is the storefront's receiver (WebhookPath) as the gateway
	// reaches it; the storefront registers its webhook there when it
	// starts. Empty registers none: orders are then paid only when the
	// shopper comes back.
	WebhookURL string
	// Background runs the storefront's background work (registering its
	// webhook), which returns soon after its ctx ends; nil runs it on a
	// goroutine of its own.
	Background func(func(ctx context.Context))
}

// shopPaymentTypes are what the shop's pop-up and hosted page offer (the
// widget's paymentTypes): a card, PayPay, a convenience store's counter
// and a bank transfer, the last two paid after the order (slip.go).
var shopPaymentTypes = []string{"card", "pay_pay_online", paymentKonbini, paymentBankTransfer}

// OrdersFile is where the storefront keeps its orders, in DataDir.
const OrdersFile = "demo-orders.json"

const (
	cookieName   = "kessai_demo"
	shopCurrency = "JPY"
	// metaOrderID is the charge's metadata key the shop puts its order
	// reference under, on every way of paying; the shop checks it.
	metaOrderID = "order_id"
)

// yen writes a price of the shop's, in its currency (which has no minor
// unit).
func yen(n int64) string { return message.Amount(n, shopCurrency, 0) }

// orderAmount writes an order's amount. Orders are only ever recorded in
// the shop's currency (settle refuses a charge in another); the shop knows
// no other currency's minor unit, so it would write one as a bare number.
func orderAmount(n int64, currency string) string {
	if currency == shopCurrency {
		return yen(n)
	}
	return strconv.FormatInt(n, 10) + " " + currency
}

func randomString(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// product is something the shop sells. Prices are in yen, tax
// included.
type product struct {
	ID             string
	Name, NameJA   string
	Notes, NotesJA string
	Price          int64
	Image          string
	Badge, BadgeJA string
}

var products = []product{
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

func productByID(id string) (product, bool) {
	for _, p := range products {
		if p.ID == id {
			return p, true
		}
	}
	return product{}, false
}

// shop is the storefront.
type shop struct {
	cfg    Config
	log    *slog.Logger
	assets *asset.Table
	tmpl   *template.Template
	store  *sessions.CookieStore
	orders *orderBook
	// checkouts are the orders being paid for, which the gateway's
	// notifications can pay.
	checkouts *checkoutBook
	// hook is the storefront's webhook, once known: the receiver checks
	// deliveries with it.
	hook    atomic.Pointer[webhookState]
	client  *http.Client
	gateway string // the gateway's origin
	now     func() time.Time
}

// New returns the demo storefront's handler.
func New(cfg Config) (http.Handler, error) {
	d, err := newShop(cfg)
	if err != nil {
		return nil, err
	}
	if cfg.WebhookURL != "" {
		run := cfg.Background
		if run == nil {
			run = func(f func(context.Context)) { go f(context.Background()) }
		}
		run(d.keepRegistering)
	}
	return d.routes(), nil
}

func newShop(cfg Config) (*shop, error) {
	cfg.GatewayURL = strings.TrimRight(cfg.GatewayURL, "/")
	gw, err := url.Parse(cfg.GatewayURL)
	if err != nil || gw.Host == "" || (gw.Scheme != "http" && gw.Scheme != "https") {
		return nil, fmt.Errorf("demo: bad gateway URL %q", cfg.GatewayURL)
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

	d := &shop{
		cfg: cfg, log: cfg.Logger, store: store, client: cfg.HTTPClient,
		gateway: gw.Scheme + "://" + gw.Host, now: time.Now,
	}
	if d.client == nil {
		d.client = &http.Client{Timeout: 20 * time.Second}
	}
	if d.assets, err = shopAssets(); err != nil {
		return nil, err
	}
	d.tmpl, err = template.New("").Funcs(template.FuncMap{
		"asset": d.assets.URL,
		"yen":   yen,
	}).ParseFS(templates.FS, "demo*.html")
	if err != nil {
		return nil, err
	}
	if cfg.DataDir == "" {
		return nil, errors.New("demo: the storefront needs a data directory")
	}
	if d.orders, err = loadOrders(filepath.Join(cfg.DataDir, OrdersFile), d.log); err != nil {
		return nil, err
	}
	if d.checkouts, err = loadCheckouts(filepath.Join(cfg.DataDir, CheckoutsFile), d.log, func() time.Time { return d.now() }); err != nil {
		return nil, err
	}
	// The webhook kept from the last start verifies deliveries at once,
	// while it is checked again with the gateway.
	if cfg.WebhookURL != "" {
		saved, err := loadWebhookState(d.webhookFile())
		if err != nil {
			return nil, err
		}
		if saved != nil && saved.URL == cfg.WebhookURL {
			d.hook.Store(saved)
		}
	}
	return d, nil
}

func (d *shop) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", d.home)
	mux.HandleFunc("GET /cart", d.cart)
	mux.HandleFunc("POST /cart", d.updateCart)
	mux.HandleFunc("GET /checkout", d.checkout)
	mux.HandleFunc("GET /subscribe", d.subscribe)
	mux.HandleFunc("POST /orders", d.placeOrder)
	mux.HandleFunc("GET /orders", d.listOrders)
	mux.HandleFunc("GET /orders/return", d.linkReturn)
	mux.HandleFunc("GET /orders/{ref}", d.showOrder)
	mux.HandleFunc("GET /lang/{lang}", d.setLang)
	mux.HandleFunc("GET /static/{file...}", d.static)
	mux.HandleFunc("POST "+WebhookPath, d.receiveWebhook)
	mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, d.assets.URL("demo/favicon.svg"), http.StatusMovedPermanently)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		d.problem(w, r, http.StatusNotFound, "not_found", "")
	})
	return mux
}

// ---- assets ----

// isShopAsset reports whether a static file is the storefront's: its
// styles, its script and its pictures, of the files static.FS embeds.
func isShopAsset(name string) bool {
	return name == "demo.css" || name == "demo.js" || (strings.HasPrefix(name, "demo/") && path.Ext(name) == ".svg")
}

// shopAssets are the storefront's static files, read once per process.
// Their links carry a content hash ({{asset "demo.css"}}), so that they
// can be cached for good.
var shopAssets = sync.OnceValues(func() (*asset.Table, error) {
	return asset.Load(static.FS, asset.Options{Include: isShopAsset})
})

func (d *shop) static(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("file")
	if !d.assets.Has(name) {
		http.NotFound(w, r)
		return
	}
	if path.Ext(name) == ".svg" {
		w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	}
	d.assets.Serve(w, r, name)
}

// ---- session ----

// sessionState is the shopper's session: the cart, the order reference the
// next payment is for, the one the next subscription is for, a CSRF token
// and the language.
type sessionState struct {
	CSRF  string         `json:"c"`
	Cart  map[string]int `json:"k,omitempty"`
	Order string         `json:"o,omitempty"`
	Sub   string         `json:"s,omitempty"`
	Lang  string         `json:"l,omitempty"`
}

type shopperSession struct {
	sess  *sessions.Session
	state sessionState
	// paid is the order the session was paying for, found paid (by the
	// gateway's notification) and taken out of the session.
	paid string
}

func (d *shop) session(r *http.Request) *shopperSession {
	sess, err := d.store.New(r, cookieName)
	s := &shopperSession{sess: sess}
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
	// The order was paid while the shopper was away: the cart is done.
	if s.state.Order != "" {
		if _, ok := d.orders.get(s.state.Order); ok {
			s.paid, s.state.Cart, s.state.Order = s.state.Order, map[string]int{}, ""
		}
	}
	// So was the subscription: the next one needs a new reference.
	if s.state.Sub != "" {
		if _, ok := d.orders.get(s.state.Sub); ok {
			s.state.Sub = ""
		}
	}
	return s
}

func (d *shop) save(w http.ResponseWriter, r *http.Request, s *shopperSession) {
	b, _ := json.Marshal(s.state)
	s.sess.Values = map[any]any{"s": string(b)}
	if err := d.store.Save(r, w, s.sess); err != nil {
		d.log.Error("demo: saving the session", "error", err)
	}
}

// orderRef returns the reference of the order being paid for, making one
// up when there is none.
func (d *shop) orderRef(s *shopperSession) string {
	if s.state.Order == "" {
		s.state.Order = d.newRef("KC")
	}
	return s.state.Order
}

// newRef makes up an order reference: prefix, today, five letters.
func (d *shop) newRef(prefix string) string {
	const alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789" // no 0/O, 1/I
	b := make([]byte, 5)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return prefix + "-" + d.now().Format("060102") + "-" + string(b)
}

// checkCSRF reports whether a POST came from one of the shop's own pages.
func (d *shop) checkCSRF(r *http.Request, s *shopperSession) bool {
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
	Product product
	Name    string
	Qty     int
	Total   int64
}

type cartView struct {
	Lines []cartLine
	Count int
	Total int64
}

func (d *shop) cartView(s *shopperSession, loc message.Locale) cartView {
	var v cartView
	for _, p := range products {
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

func (p product) name(loc message.Locale) string {
	if loc == message.Japanese {
		return p.NameJA
	}
	return p.Name
}

const maxQty = 20

func (d *shop) updateCart(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 8<<10)
	s := d.session(r)
	if r.ParseForm() != nil || !d.checkCSRF(r, s) {
		d.problem(w, r, http.StatusForbidden, "csrf", "")
		return
	}
	id := r.PostForm.Get("product")
	if _, ok := productByID(id); !ok {
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
	n = min(max(n, 0), maxQty)
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

// pageData is what every storefront template gets.
type pageData struct {
	Lang    message.Locale
	T       map[string]string
	Title   string
	Path    string
	CSRF    string
	Cart    cartView
	Gateway string

	Products []productView
	Added    string
	Flash    string

	OrderRef string
	AppID    string
	// PaymentTypes are what the pop-up offers (comma-separated).
	PaymentTypes string
	Hosted       string
	FailedBack   bool

	Order  *order
	Orders []orderView
	// Unavailable: the gateway could not be asked about the order just
	// now; the page shows what was last heard.
	Unavailable bool
	// Plan is the subscription on sale (the home and subscribe pages);
	// Sub an order's subscription as the gateway has it now.
	Plan *planView
	Sub  *subscriptionView

	ProblemTitle string
	ProblemText  string
	Detail       string
	Retry        *retry
}

type productView struct {
	product
	DisplayName  string
	DisplayNotes string
	DisplayBadge string
	InCart       int
}

type retry struct {
	Order, ChargeID, SubscriptionID, Method string
}

func (d *shop) page(r *http.Request, s *shopperSession, title string) pageData {
	loc := d.locale(r, s)
	t := message.Demo.In(loc)
	return pageData{Lang: loc, T: t, Title: t[title], Path: r.URL.Path, CSRF: s.state.CSRF,
		Cart: d.cartView(s, loc), Gateway: d.cfg.GatewayURL}
}

func (d *shop) locale(r *http.Request, s *shopperSession) message.Locale {
	if s.state.Lang != "" {
		return message.Negotiate(s.state.Lang, "")
	}
	return message.Negotiate("", r.Header.Get("Accept-Language"))
}

func (d *shop) setLang(w http.ResponseWriter, r *http.Request) {
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

func (d *shop) home(w http.ResponseWriter, r *http.Request) {
	s := d.session(r)
	p := d.page(r, s, "home_title")
	for _, pr := range products {
		v := productView{product: pr, DisplayName: pr.name(p.Lang), InCart: s.state.Cart[pr.ID]}
		v.DisplayNotes, v.DisplayBadge = pr.Notes, pr.Badge
		if p.Lang == message.Japanese {
			v.DisplayNotes, v.DisplayBadge = pr.NotesJA, pr.BadgeJA
		}
		p.Products = append(p.Products, v)
	}
	p.Plan = coffeePlan.view(p.Lang)
	if pr, ok := productByID(r.URL.Query().Get("added")); ok {
		p.Added = fmt.Sprintf(p.T["added"], pr.name(p.Lang))
	}
	d.save(w, r, s)
	d.render(w, http.StatusOK, "demo_home.html", p, false)
}

func (d *shop) cart(w http.ResponseWriter, r *http.Request) {
	s := d.session(r)
	p := d.page(r, s, "cart_title")
	d.save(w, r, s)
	d.render(w, http.StatusOK, "demo_cart.html", p, false)
}

func (d *shop) checkout(w http.ResponseWriter, r *http.Request) {
	s := d.session(r)
	if s.paid != "" {
		d.save(w, r, s)
		http.Redirect(w, r, "/orders/"+url.PathEscape(s.paid)+"?thanks=1", http.StatusSeeOther)
		return
	}
	p := d.page(r, s, "checkout_title")
	if p.Cart.Count == 0 {
		d.save(w, r, s)
		http.Redirect(w, r, "/cart", http.StatusSeeOther)
		return
	}
	p.OrderRef = d.orderRef(s)
	p.AppID = d.cfg.JWT
	p.PaymentTypes = strings.Join(shopPaymentTypes, ",")
	p.FailedBack = r.URL.Query().Get("result") == "failed"
	self := d.selfURL(r)
	q := url.Values{}
	q.Set("appId", d.cfg.JWT)
	q.Set("amount", strconv.FormatInt(p.Cart.Total, 10))
	q.Set("currency", shopCurrency)
	q.Set("order_id", p.OrderRef)
	q.Set("locale", string(p.Lang))
	q.Set("successRedirectUrl", self+"/orders/return?order="+url.QueryEscape(p.OrderRef))
	q.Set("pendingRedirectUrl", self+"/orders/return?order="+url.QueryEscape(p.OrderRef))
	q.Set("failureRedirectUrl", self+"/checkout?result=failed")
	q.Set("autoRedirect", "true")
	q.Set("paymentTypes", strings.Join(shopPaymentTypes, ","))
	p.Hosted = d.cfg.GatewayURL + "/forms/demo?" + q.Encode()
	// What this order is to be paid, for the gateway's notification of
	// its payment to be checked against.
	co := &checkout{Ref: p.OrderRef, Amount: p.Cart.Total, Currency: shopCurrency}
	for _, l := range p.Cart.Lines {
		co.Items = append(co.Items, orderItem{Product: l.Product.ID, Name: l.Product.Name, NameJA: l.Product.NameJA,
			Qty: l.Qty, Price: l.Product.Price})
	}
	if err := d.checkouts.put(co); err != nil {
		d.log.Warn("demo: saving the checkout", "order", p.OrderRef, "error", err)
	}
	d.save(w, r, s)
	d.render(w, http.StatusOK, "demo_checkout.html", p, true)
}

// selfURL is the storefront's own base URL.
func (d *shop) selfURL(r *http.Request) string {
	if d.cfg.PublicURL != "" {
		return strings.TrimRight(d.cfg.PublicURL, "/")
	}
	return "http://" + r.Host
}

func (d *shop) listOrders(w http.ResponseWriter, r *http.Request) {
	s := d.session(r)
	p := d.page(r, s, "orders_title")
	for _, o := range d.orders.list() {
		p.Orders = append(p.Orders, o.view(p.Lang))
	}
	d.save(w, r, s)
	d.render(w, http.StatusOK, "demo_orders.html", p, false)
}

func (d *shop) showOrder(w http.ResponseWriter, r *http.Request) {
	s := d.session(r)
	o, ok := d.orders.get(r.PathValue("ref"))
	if !ok {
		d.problem(w, r, http.StatusNotFound, "not_found", "")
		return
	}
	p := d.page(r, s, "order_title")
	if o.Status == orderAwaiting {
		// Paid (or not) away from the shop: what the gateway says now,
		// whether or not its notifications reach the shop.
		p.Unavailable = !d.refreshSlipOrder(r.Context(), o)
		o, _ = d.orders.get(o.Ref)
	}
	p.Order = o
	if o.SubscriptionID != "" {
		p.Sub = d.subscriptionOf(r.Context(), o, p.Lang)
	}
	p.Orders = []orderView{o.view(p.Lang)}
	p.Flash = r.URL.Query().Get("thanks")
	d.save(w, r, s)
	d.render(w, http.StatusOK, "demo_order.html", p, false)
}

// problem shows an error page.
func (d *shop) problem(w http.ResponseWriter, r *http.Request, status int, key, detail string) {
	s := d.session(r)
	p := d.page(r, s, "e_"+key+"_title")
	p.ProblemTitle, p.ProblemText, p.Detail = p.Title, p.T["e_"+key+"_text"], detail
	d.render(w, status, "demo_problem.html", p, false)
}

func (d *shop) render(w http.ResponseWriter, status int, name string, p pageData, checkout bool) {
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
