package demo

import (
	"encoding/json"
	"errors"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
)

// shopFixture is the storefront talking over HTTP to a real gateway API,
// as in a running Kessai.
type shopFixture struct {
	*gatewayFixture
	shop    *httptest.Server
	dataDir string
}

func newShopFixture(t *testing.T) *shopFixture {
	t.Helper()
	f := &shopFixture{gatewayFixture: newGatewayFixture(t), dataDir: t.TempDir()}
	h, err := New(Config{GatewayURL: f.srv.URL, JWT: f.tokA.JWT, Secret: f.tokA.Secret,
		StoreID: f.storeA.ID.String(), DataDir: f.dataDir, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	f.shop = httptest.NewServer(h)
	t.Cleanup(f.shop.Close)
	return f
}

// shopper is a browser on the storefront: it keeps cookies and does not
// follow redirects by itself.
type shopper struct {
	t    *testing.T
	c    *http.Client
	base string
	csrf string
}

func (f *shopFixture) shopper(t *testing.T) *shopper {
	jar, _ := cookiejar.New(nil)
	return &shopper{t: t, base: f.shop.URL, c: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

var demoCSRF = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// inlineScript is a script tag; one without src= is inline.
var inlineScript = regexp.MustCompile(`<script(\s[^>]*)?>`)

func (s *shopper) do(req *http.Request) (*http.Response, string) {
	s.t.Helper()
	res, err := s.c.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	body := string(b)
	if m := demoCSRF.FindStringSubmatch(body); m != nil {
		s.csrf = html.UnescapeString(m[1])
	}
	return res, body
}

func (s *shopper) get(path string) (*http.Response, string) {
	s.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, s.base+path, nil)
	return s.do(req)
}

func (s *shopper) post(path string, v url.Values) (*http.Response, string) {
	s.t.Helper()
	if !v.Has("csrf") {
		v.Set("csrf", s.csrf)
	}
	req, _ := http.NewRequest(http.MethodPost, s.base+path, strings.NewReader(v.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", s.base)
	return s.do(req)
}

var demoOrderAttr = regexp.MustCompile(`data-order="([^"]+)"`)

// fillCart puts products in the cart and opens the checkout; it returns
// the order reference and the total.
func (s *shopper) fillCart(products ...string) (string, int64) {
	s.t.Helper()
	s.get("/")
	var total int64
	for _, id := range products {
		res, _ := s.post("/cart", url.Values{"product": {id}, "op": {"add"}})
		if res.StatusCode != http.StatusSeeOther {
			s.t.Fatalf("add %s: %d", id, res.StatusCode)
		}
		p, _ := productByID(id)
		total += p.Price
	}
	res, body := s.get("/checkout")
	if res.StatusCode != http.StatusOK {
		s.t.Fatalf("checkout: %d\n%s", res.StatusCode, body)
	}
	m := demoOrderAttr.FindStringSubmatch(body)
	if m == nil {
		s.t.Fatalf("no order reference on the checkout page")
	}
	if !strings.Contains(body, `data-amount="`+strconv.FormatInt(total, 10)+`"`) {
		s.t.Fatalf("the checkout page does not charge %d", total)
	}
	return m[1], total
}

func TestDemoPagesRender(t *testing.T) {
	f := newShopFixture(t)
	s := f.shopper(t)
	res, body := s.get("/")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("home: %d", res.StatusCode)
	}
	for _, want := range []string{"Kessai Coffee", "4000 0200 0000 0000", "4111 1111 1111 1111", "Hokkaido Morning Blend",
		"¥1,600", "/static/demo/hokkaido-morning.svg?v=", "/static/demo.css?v="} {
		if !strings.Contains(body, want) {
			t.Errorf("home page lacks %q", want)
		}
	}
	if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self';") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("home CSP %q", csp)
	}
	// Pictures and styles are served from the shop's own origin.
	for _, p := range []string{"/static/demo/hokkaido-morning.svg", "/static/demo.css", "/static/demo.js", "/static/demo/logo.svg"} {
		if res, _ := s.get(p); res.StatusCode != http.StatusOK {
			t.Errorf("%s: %d", p, res.StatusCode)
		}
	}
	// Only the shop's own files: not the gateway's widget files.
	for _, p := range []string{"/static/linkform.js", "/static/static.go", "/static/../go.mod", "/static/build/widget.wasm"} {
		if res, _ := s.get(p); res.StatusCode == http.StatusOK {
			t.Errorf("%s is served by the shop", p)
		}
	}

	res, body = s.get("/cart")
	if res.StatusCode != http.StatusOK || !strings.Contains(body, "Your cart is empty") {
		t.Errorf("empty cart: %d", res.StatusCode)
	}
	if res, _ := s.get("/checkout"); res.StatusCode != http.StatusSeeOther {
		t.Errorf("checkout with an empty cart: %d, want a redirect to the cart", res.StatusCode)
	}

	ref, total := s.fillCart("kyoto-dark", "kyoto-dark", "hasami-mug")
	res, body = s.get("/checkout")
	csp := res.Header.Get("Content-Security-Policy")
	for _, want := range []string{"script-src 'self' " + f.srv.URL + ";", "frame-src " + f.srv.URL + ";", "connect-src 'self';"} {
		if !strings.Contains(csp, want) {
			t.Errorf("checkout CSP %q lacks %q", csp, want)
		}
	}
	for _, want := range []string{
		`<script src="` + f.srv.URL + `/static/checkout.js"></script>`,
		`data-app-id="` + f.tokA.JWT + `"`, `data-checkout="payment"`, `data-auto-submit="true"`,
		`data-metadata="order_id:` + ref + `"`, "¥6,000", ref,
		f.srv.URL + "/forms/demo?",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("checkout page lacks %q", want)
		}
	}
	if total != 6000 {
		t.Errorf("total %d", total)
	}
	// The hosted link's return addresses are on the shop, with the order.
	hosted := regexp.MustCompile(`href="(` + regexp.QuoteMeta(f.srv.URL) + `/forms/demo\?[^"]+)"`).FindStringSubmatch(body)
	if hosted == nil {
		t.Fatal("no hosted-page link")
	}
	u, _ := url.Parse(html.UnescapeString(hosted[1]))
	q := u.Query()
	if q.Get("amount") != "6000" || q.Get("currency") != "JPY" || q.Get("order_id") != ref || q.Get("appId") != f.tokA.JWT ||
		q.Get("successRedirectUrl") != f.shop.URL+"/orders/return?order="+ref || q.Get("autoRedirect") != "true" {
		t.Errorf("hosted link %s", u)
	}
	// No secret ever reaches a page.
	for _, p := range []string{"/", "/cart", "/checkout", "/orders"} {
		if _, body := s.get(p); strings.Contains(body, f.tokA.Secret) {
			t.Errorf("%s shows the secret", p)
		}
	}
	for _, m := range inlineScript.FindAllStringSubmatch(body, -1) {
		if !strings.Contains(m[1], "src=") {
			t.Errorf("inline script on the checkout page: %s", m[0])
		}
	}

	res, body = s.get("/orders")
	if res.StatusCode != http.StatusOK || !strings.Contains(body, "No orders yet") {
		t.Errorf("orders: %d", res.StatusCode)
	}
	if res, _ := s.get("/orders/KC-000000-NOPE"); res.StatusCode != http.StatusNotFound {
		t.Errorf("unknown order: %d", res.StatusCode)
	}
	// Japanese.
	if res, _ := s.get("/lang/ja?back=/cart"); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/cart" {
		t.Errorf("language switch: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	if _, body := s.get("/"); !strings.Contains(body, `lang="ja"`) || !strings.Contains(body, "カートに入れる") {
		t.Errorf("no Japanese after switching")
	}
	if res, _ := s.get("/lang/en?back=//evil.example/"); res.Header.Get("Location") != "/" {
		t.Errorf("language switch redirects off-site: %s", res.Header.Get("Location"))
	}
}

func TestDemoOrderVerifiedWithGateway(t *testing.T) {
	f := newShopFixture(t)
	s := f.shopper(t)
	ref, total := s.fillCart("hokkaido-morning", "drip-bags")
	ch := f.pay(t, f.tokA, "4000020000000000", total, "JPY", payment.Metadata{"order_id": ref})

	before := f.apiCalls()
	res, body := s.post("/orders", url.Values{"order": {ref}, "chargeId": {ch.ID.String()}, "method": {"modal"}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/orders/"+ref+"?thanks=1" {
		t.Fatalf("order: %d %s\n%s", res.StatusCode, res.Header.Get("Location"), body)
	}
	if f.apiCalls() == before {
		t.Error("the shop did not ask the gateway")
	}
	_, body = s.get("/orders/" + ref + "?thanks=1")
	for _, want := range []string{"Thank you for your order", ch.ID.String(), "¥2,800", "Paid", "Pop-up widget"} {
		if !strings.Contains(body, want) {
			t.Errorf("order page lacks %q", want)
		}
	}
	_, body = s.get("/orders")
	if !strings.Contains(body, ref) || !strings.Contains(body, ch.ID.String()) {
		t.Errorf("the order is not listed")
	}
	// The cart is empty again and the next order has a new reference.
	if _, body := s.get("/cart"); !strings.Contains(body, "Your cart is empty") {
		t.Error("the cart was not emptied")
	}

	// The orders file holds it.
	b, err := os.ReadFile(filepath.Join(f.dataDir, OrdersFile))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Orders []order `json:"orders"`
	}
	if err := json.Unmarshal(b, &file); err != nil {
		t.Fatal(err)
	}
	if len(file.Orders) != 1 || file.Orders[0].ChargeID != ch.ID.String() || file.Orders[0].Amount != 2800 ||
		file.Orders[0].Status != "successful" || len(file.Orders[0].Items) != 2 {
		t.Errorf("orders file: %s", b)
	}

	// Posting the same charge again shows the order; using it for another
	// order is refused.
	if res, _ := s.post("/orders", url.Values{"order": {ref}, "chargeId": {ch.ID.String()}}); res.StatusCode != http.StatusSeeOther {
		t.Errorf("repeat: %d", res.StatusCode)
	}
	ref2, _ := s.fillCart("hokkaido-morning", "drip-bags")
	if ref2 == ref {
		t.Error("the order reference was reused")
	}
	if res, _ := s.post("/orders", url.Values{"order": {ref2}, "chargeId": {ch.ID.String()}}); res.StatusCode != http.StatusConflict {
		t.Errorf("a charge reused for another order: %d", res.StatusCode)
	}

	// A new storefront over the same data directory sees the order.
	h, err := New(Config{GatewayURL: f.srv.URL, JWT: f.tokA.JWT, Secret: f.tokA.Secret,
		StoreID: f.storeA.ID.String(), DataDir: f.dataDir})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/orders", nil))
	if !strings.Contains(rec.Body.String(), ref) {
		t.Error("the order did not survive a restart")
	}
}

func TestDemoRefusesUnverifiedCharges(t *testing.T) {
	f := newShopFixture(t)
	s := f.shopper(t)
	ref, total := s.fillCart("yirgacheffe")
	cases := []struct {
		name   string
		charge func() string
		status int
	}{
		{"unknown charge", func() string { return uuid.NewString() }, http.StatusBadRequest},
		{"not an id", func() string { return "1 OR 1=1" }, http.StatusBadRequest},
		{"too little", func() string {
			return f.pay(t, f.tokA, "4000020000000000", total-1, "JPY", payment.Metadata{"order_id": ref}).ID.String()
		}, http.StatusBadRequest},
		{"another currency", func() string {
			return f.pay(t, f.tokA, "4000020000000000", total, "USD", payment.Metadata{"order_id": ref}).ID.String()
		}, http.StatusBadRequest},
		{"another order", func() string {
			return f.pay(t, f.tokA, "4000020000000000", total, "JPY", payment.Metadata{"order_id": "KC-OTHER"}).ID.String()
		}, http.StatusBadRequest},
		{"another store", func() string {
			return f.pay(t, f.tokB, "4000020000000000", total, "JPY", payment.Metadata{"order_id": ref}).ID.String()
		}, http.StatusBadRequest},
		{"declined", func() string {
			return f.pay(t, f.tokA, "4111111111111111", total, "JPY", payment.Metadata{"order_id": ref}).ID.String()
		}, http.StatusPaymentRequired},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, body := s.post("/orders", url.Values{"order": {ref}, "chargeId": {tc.charge()}, "method": {"inline"}})
			if res.StatusCode != tc.status {
				t.Errorf("status %d, want %d\n%s", res.StatusCode, tc.status, body)
			}
			if !strings.Contains(body, "not") {
				t.Errorf("no explanation")
			}
		})
	}
	good := f.pay(t, f.tokA, "4000020000000000", total, "JPY", payment.Metadata{"order_id": ref}).ID.String()
	// Without the CSRF token, or from another site, nothing is checked.
	if res, _ := s.post("/orders", url.Values{"order": {ref}, "chargeId": {good}, "csrf": {"forged"}}); res.StatusCode != http.StatusForbidden {
		t.Errorf("forged CSRF: %d", res.StatusCode)
	}
	req, _ := http.NewRequest(http.MethodPost, s.base+"/orders", strings.NewReader(url.Values{"order": {ref}, "chargeId": {good}, "csrf": {s.csrf}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "https://evil.example")
	if res, _ := s.do(req); res.StatusCode != http.StatusForbidden {
		t.Errorf("cross-site POST: %d", res.StatusCode)
	}
	// Another shopper (another session, another cart) cannot claim it.
	other := f.shopper(t)
	other.fillCart("yirgacheffe")
	if res, _ := other.post("/orders", url.Values{"order": {ref}, "chargeId": {good}}); res.StatusCode != http.StatusBadRequest {
		t.Errorf("another session's order: %d", res.StatusCode)
	}
	if _, err := os.Stat(filepath.Join(f.dataDir, OrdersFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("an unverified order was written: %v", err)
	}
	// The real one goes through, here by the hosted page's return.
	res, body := s.get("/orders/return?order=" + url.QueryEscape(ref) + "&univapayChargeId=" + good + "&univapayTokenId=x")
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("return: %d\n%s", res.StatusCode, body)
	}
	if _, body := s.get("/orders"); !strings.Contains(body, "Hosted page") {
		t.Error("the hosted-page order is not listed as such")
	}
}

func TestDemoHTMLModeField(t *testing.T) {
	// The HTML mode's form posts the loader's hidden input, univapayChargeId.
	f := newShopFixture(t)
	s := f.shopper(t)
	ref, total := s.fillCart("ceramic-dripper")
	ch := f.pay(t, f.tokA, "4000020000000000", total, "JPY", payment.Metadata{"order_id": ref})
	res, _ := s.post("/orders", url.Values{"order": {ref}, "method": {"html"},
		"univapayChargeId": {ch.ID.String()}, "univapayTokenId": {ch.TokenID.String()}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("status %d", res.StatusCode)
	}
	o, ok := ordersFromDir(t, f.dataDir).get(ref)
	if !ok || o.Method != "html" {
		t.Errorf("order %+v", o)
	}
}

func ordersFromDir(t *testing.T, dir string) *orderBook {
	t.Helper()
	o, err := loadOrders(filepath.Join(dir, OrdersFile), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func TestDemoOrdersFileIsWrittenAtomically(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, OrdersFile)
	orders := ordersFromDir(t, dir)

	// Readers running beside the writer always find a whole file.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var bad error
	var badMu sync.Mutex
	for i := 0; i < 3; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				b, err := os.ReadFile(path)
				if errors.Is(err, os.ErrNotExist) {
					continue
				}
				var v struct {
					Orders []order `json:"orders"`
				}
				if err == nil {
					err = json.Unmarshal(b, &v)
				}
				if err != nil {
					badMu.Lock()
					bad = err
					badMu.Unlock()
				}
			}
		}()
	}
	long := strings.Repeat("Ethiopia Yirgacheffe ", 200)
	for i := 0; i < 25; i++ {
		err := orders.add(&order{Ref: "KC-" + strconv.Itoa(i), ChargeID: uuid.NewString(), Status: "successful",
			Amount: 1000, Currency: "JPY", Items: []orderItem{{Product: "x", Name: long, Qty: 1, Price: 1000}}})
		if err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	if bad != nil {
		t.Errorf("a reader saw a partial file: %v", bad)
	}
	// No temporary files are left behind, and the file is private.
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("files left: %v", names)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, %v", st.Mode(), err)
	}
	if got := len(ordersFromDir(t, dir).list()); got != 25 {
		t.Errorf("%d orders after reload", got)
	}

	// A failed write leaves the old file as it was, and the orders as they
	// were. The write fails for real, as root too: the file's name leaves
	// no room (NAME_MAX) for the name of its temporary file beside it, so
	// the temporary file cannot be made, while the file itself can be
	// written. A write straight into the file would succeed and replace it.
	longPath := filepath.Join(dir, strings.Repeat("o", 250)+".json") // 255 bytes, the most a name may have
	old := `{"orders":[{"ref":"KC-OLD","charge_id":"` + uuid.NewString() + `","status":"successful","amount":1000,"currency":"JPY"}]}` + "\n"
	if err := os.WriteFile(longPath, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	kept, err := loadOrders(longPath, slog.New(slog.DiscardHandler))
	if err != nil || len(kept.list()) != 1 {
		t.Fatalf("loading %d orders: %v", len(kept.list()), err)
	}
	if err := kept.add(&order{Ref: "KC-NEW", ChargeID: uuid.NewString(), Status: "successful", Amount: 500, Currency: "JPY"}); err == nil {
		t.Error("a write whose temporary file cannot be made succeeded")
	}
	if after, _ := os.ReadFile(longPath); string(after) != old {
		t.Errorf("the orders file changed on a failed write:\n%s", after)
	}
	if got := kept.list(); len(got) != 1 || got[0].Ref != "KC-OLD" {
		t.Errorf("orders after a failed write: %d, want only KC-OLD", len(got))
	}
	os.Remove(longPath)

	// A corrupt file is moved aside, not overwritten.
	if err := os.WriteFile(path, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	fresh := ordersFromDir(t, dir)
	if len(fresh.list()) != 0 {
		t.Error("orders from a corrupt file")
	}
	matches, _ := filepath.Glob(path + ".corrupt-*")
	if len(matches) != 1 {
		t.Errorf("corrupt file not kept: %v", matches)
	}
}

func TestDemoGatewayUnreachable(t *testing.T) {
	f := newShopFixture(t)
	s := f.shopper(t)
	ref, total := s.fillCart("drip-bags")
	ch := f.pay(t, f.tokA, "4000020000000000", total, "JPY", payment.Metadata{"order_id": ref})
	f.srv.Close() // the gateway goes away before the shop can check
	res, body := s.post("/orders", url.Values{"order": {ref}, "chargeId": {ch.ID.String()}})
	if res.StatusCode != http.StatusBadGateway || !strings.Contains(body, "could not be reached") {
		t.Errorf("status %d\n%s", res.StatusCode, body)
	}
	if _, err := os.Stat(filepath.Join(f.dataDir, OrdersFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("an unverified order was written: %v", err)
	}
	// The cart is kept for another try.
	if _, body := s.get("/cart"); !strings.Contains(body, "Drip Bag Sampler") {
		t.Error("the cart was lost")
	}
}
