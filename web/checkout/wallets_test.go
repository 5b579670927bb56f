package checkout

import (
	"context"
	"encoding/json"
	"html"
	"log/slog"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kessai/kessai/server/kessaitest/servicetest"
	"github.com/kessai/kessai/server/payment"
)

// frameConfig is the frame's configuration block, as widget.js reads it.
type frameConfig struct {
	Card    bool `json:"card"`
	Wallets []struct {
		Brand string `json:"brand"`
		Name  string `json:"name"`
	} `json:"wallets"`
	ThreeDS   string `json:"threeDS"`
	ReturnURL string `json:"returnUrl"`
}

var configBlock = regexp.MustCompile(`<script type="application/json" id="kw-config">([^<]*)</script>`)

func readFrameConfig(t *testing.T, body string) frameConfig {
	t.Helper()
	m := configBlock.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no configuration in\n%s", body)
	}
	var cfg frameConfig
	if err := json.Unmarshal([]byte(m[1]), &cfg); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func (c frameConfig) brands() []string {
	var out []string
	for _, w := range c.Wallets {
		out = append(out, w.Brand)
	}
	return out
}

func TestParsePaymentTypes(t *testing.T) {
	all := []string{"pay_pay_online", "alipay_online", "alipay_plus_online", "d_barai_online"}
	for _, tt := range []struct {
		raw  string
		want offer
		ok   bool
	}{
		{"", offer{Card: true}, true},
		{"card", offer{Card: true}, true},
		{"online", offer{Wallets: all}, true},
		{"ONLINE, Card", offer{Card: true, Wallets: all}, true},
		{"pay_pay_online", offer{Wallets: []string{"pay_pay_online"}}, true},
		// The buttons keep walletBrands' order, and a brand named twice
		// is one button.
		{"d_barai_online,pay_pay_online,pay_pay_online", offer{Wallets: []string{"pay_pay_online", "d_barai_online"}}, true},
		// Card brands are the card form, as UnivaPay's filter list has them.
		{"visa,jcb", offer{Card: true}, true},
		// konbini is every store, bank_transfer every bank; the stores
		// and banks named alone are those, in the API's order.
		{"konbini", offer{Stores: payment.ConvenienceStores}, true},
		{"bank_transfer", offer{Banks: payment.BankTransferBrands}, true},
		{"card,Konbini,bank_transfer", offer{Card: true, Stores: payment.ConvenienceStores, Banks: payment.BankTransferBrands}, true},
		{"lawson,seven_eleven,lawson", offer{Stores: []string{"seven_eleven", "lawson"}}, true},
		{"bank_test_brand", offer{Banks: []string{"bank_test_brand"}}, true},
		// What the widget cannot take is left out: WeChat Pay (it needs
		// the shopper's IP address), paidy, merchant QR codes.
		{"we_chat_online", offer{}, true},
		{"konbini_store,paidy,pay_pay_merchant,we_chat_online,alipay_online", offer{Wallets: []string{"alipay_online"}}, true},
		{",,card,", offer{Card: true}, true},
		{"card;drop table", offer{}, false},
		{"<script>", offer{}, false},
		{strings.Repeat("card,", maxPaymentTypes), offer{}, false},
		{strings.Repeat("x", 41), offer{}, false},
	} {
		got, ok := parsePaymentTypes(tt.raw)
		if got.Card != tt.want.Card || !slices.Equal(got.Wallets, tt.want.Wallets) || !slices.Equal(got.Stores, tt.want.Stores) ||
			!slices.Equal(got.Banks, tt.want.Banks) || ok != tt.ok {
			t.Errorf("parsePaymentTypes(%q) = %+v %v, want %+v %v", tt.raw, got, ok, tt.want, tt.ok)
		}
	}
}

// TestWidgetFrameWallets: what the frame offers for a paymentTypes, as
// buttons and in its configuration; wallets only where they can pay (a
// one-time payment, captured at once); the card form only when asked for
// or nothing else is left.
func TestWidgetFrameWallets(t *testing.T) {
	f := newWidgetFixture(t)
	for _, tt := range []struct {
		name    string
		kv      []string
		card    bool
		wallets []string
	}{
		{"default", nil, true, nil},
		{"card", []string{"paymentTypes", "card"}, true, nil},
		{"paypay", []string{"paymentTypes", "pay_pay_online"}, false, []string{"pay_pay_online"}},
		{"both", []string{"paymentTypes", "card,pay_pay_online,alipay_online"}, true, []string{"pay_pay_online", "alipay_online"}},
		{"online", []string{"paymentTypes", "online"}, false, []string{"pay_pay_online", "alipay_online", "alipay_plus_online", "d_barai_online"}},
		{"unknown only", []string{"paymentTypes", "paidy"}, true, nil},
		{"wechat only", []string{"paymentTypes", "we_chat_online"}, true, nil},
		{"token checkout", []string{"paymentTypes", "pay_pay_online", "checkout", "token"}, true, nil},
		{"recurring", []string{"paymentTypes", "card,pay_pay_online", "checkout", "token", "tokenType", "recurring"}, true, nil},
		{"authorise only", []string{"paymentTypes", "card,pay_pay_online", "capture", "false"}, true, nil},
		{"inline", []string{"paymentTypes", "card,pay_pay_online", "inline", "true"}, true, []string{"pay_pay_online"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec, body := f.frame(t, nil, tt.kv...)
			if rec.Code != http.StatusOK {
				t.Fatalf("status %d\n%s", rec.Code, body)
			}
			checkNoInline(t, body)
			cfg := readFrameConfig(t, body)
			if cfg.Card != tt.card || !slices.Equal(cfg.brands(), tt.wallets) {
				t.Errorf("card %v, wallets %v; want %v, %v", cfg.Card, cfg.brands(), tt.card, tt.wallets)
			}
			for _, b := range tt.wallets {
				if !strings.Contains(body, `data-brand="`+b+`"`) || !strings.Contains(html.UnescapeString(body), ">"+walletName(b)+"</button>") {
					t.Errorf("no %s button", b)
				}
			}
			if got := strings.Count(body, `class="kw-wallet `); got != len(tt.wallets) {
				t.Errorf("%d wallet buttons, want %d", got, len(tt.wallets))
			}
			formHidden := strings.Contains(body, `id="kw-form" method="post" action="/widget/frame" novalidate autocomplete="on" hidden>`)
			if formHidden == tt.card {
				t.Errorf("card form hidden = %v with card %v", formHidden, tt.card)
			}
			// The challenge's inner frame comes with the card form, the
			// wallet's step with the wallets.
			if strings.Contains(body, `id="kw-acs"`) != tt.card || strings.Contains(body, `id="kw-wallet"`) != (len(tt.wallets) > 0) {
				t.Errorf("steps: challenge %v, wallet %v", strings.Contains(body, `id="kw-acs"`), strings.Contains(body, `id="kw-wallet"`))
			}
			if tt.card && len(tt.wallets) > 0 && !strings.Contains(body, "Or pay by card") {
				t.Error("no divider between the wallets and the card form")
			}
			if cfg.ThreeDS != "normal" || cfg.ReturnURL != "" {
				t.Errorf("threeDS %q, returnUrl %q on a merchant's page", cfg.ThreeDS, cfg.ReturnURL)
			}
		})
	}
	// A list no loader sends is the shop's mistake.
	if rec, _ := f.frame(t, nil, "paymentTypes", "card;x"); rec.Code != http.StatusBadRequest {
		t.Errorf("a malformed paymentTypes: %d", rec.Code)
	}
	// The frame's policy lets the challenge's page (the gateway's) into
	// the inner frame.
	rec, _ := f.frame(t, nil)
	if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "frame-src 'self';") || !strings.Contains(csp, "form-action 'self';") {
		t.Errorf("CSP %q", csp)
	}
}

// TestWidgetFrameWithoutCards: a store that takes no cards can still be
// paid with a wallet; with nothing else it shows the error it always did.
func TestWidgetFrameWithoutCards(t *testing.T) {
	f := storeFixture(t, func(s *payment.StoreSettings) { s.CardEnabled = false })
	rec, body := f.frame(t, nil, "paymentTypes", "card,pay_pay_online")
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d\n%s", rec.Code, body)
	}
	if cfg := readFrameConfig(t, body); cfg.Card || !slices.Equal(cfg.brands(), []string{"pay_pay_online"}) {
		t.Errorf("card %v, wallets %v", cfg.Card, cfg.brands())
	}
	if strings.Contains(body, `id="kw-email"`) || strings.Contains(body, `id="kw-acs"`) {
		t.Error("the card form's parts are there")
	}
	if rec, body := f.frame(t, nil, "paymentTypes", "card"); rec.Code != errNoCards.status || !strings.Contains(body, errNoCards.code) {
		t.Errorf("cards only, none taken: %d", rec.Code)
	}
}

// TestWidgetFrameThreeDSMode: card charges ask for 3-D Secure where the
// issuer wants it, or on every card when the store requires it.
func TestWidgetFrameThreeDSMode(t *testing.T) {
	f := newWidgetFixture(t)
	_, body := f.frame(t, nil)
	if got := readFrameConfig(t, body).ThreeDS; got != "normal" {
		t.Errorf("threeDS %q", got)
	}
	f = storeFixture(t, func(s *payment.StoreSettings) { s.ThreeDSRequired = true })
	_, body = f.frame(t, nil)
	if got := readFrameConfig(t, body).ThreeDS; got != "require" {
		t.Errorf("a store requiring 3-D Secure: threeDS %q", got)
	}
}

// TestWidgetFrameReturnURL: only the gateway's own link form, which names
// itself in the metadata, gets a return address for a challenge in the
// whole tab.
func TestWidgetFrameReturnURL(t *testing.T) {
	f := newWidgetFixture(t)
	for _, tt := range []struct {
		name, origin, metadata, want string
	}{
		{"link form", widgetGateway, `{"univapay-form-id":"wc-1","order_id":"7"}`, widgetGateway + "/forms/wc-1/return"},
		{"merchant page", "https://shop.example", `{"univapay-form-id":"wc-1"}`, ""},
		{"no form id", widgetGateway, `{"order_id":"7"}`, ""},
		{"bad form id", widgetGateway, `{"univapay-form-id":"../x"}`, ""},
		{"number", widgetGateway, `{"univapay-form-id":5}`, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec, body := f.frame(t, nil, "origin", tt.origin, "metadata", tt.metadata)
			if rec.Code != http.StatusOK {
				t.Fatalf("status %d\n%s", rec.Code, body)
			}
			if got := readFrameConfig(t, body).ReturnURL; got != tt.want {
				t.Errorf("returnUrl %q, want %q", got, tt.want)
			}
		})
	}
}

// storeFixture is a widget fixture whose token is for a store of its own,
// with settings changed by change, on the domain shop.example.
func storeFixture(t *testing.T, change func(*payment.StoreSettings)) *widgetFixture {
	t.Helper()
	return storeFixtureIn(t, payment.ModeTest, change)
}

// storeFixtureIn is storeFixture with an app token of mode.
func storeFixtureIn(t *testing.T, mode payment.Mode, change func(*payment.StoreSettings)) *widgetFixture {
	t.Helper()
	ctx := context.Background()
	st := servicetest.New(t, servicetest.Options{PublicOrigin: widgetGateway})
	now := time.Now()
	m := &payment.Merchant{ID: payment.NewID(), Name: "Merchant", Email: "m@kessai.test", Verified: true, CreatedOn: now}
	store := &payment.Store{ID: payment.NewID(), MerchantID: m.ID, Name: "Roasters", PCICompliant: true,
		Settings: payment.DefaultStoreSettings(), CreatedOn: now}
	change(&store.Settings)
	if err := st.DB.Update(ctx, func(tx payment.Tx) error {
		if err := tx.CreateMerchant(ctx, m); err != nil {
			return err
		}
		return tx.CreateStore(ctx, store)
	}); err != nil {
		t.Fatal(err)
	}
	tok, err := st.Service.Access.IssueStoreAppToken(ctx, store.ID, payment.NewAppToken{Mode: mode, Domains: []string{"shop.example"}})
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(Config{Service: st.Service.Pages(), PublicURL: widgetGateway, Logger: slog.New(slog.DiscardHandler),
		SessionKey: []byte("widget-test-session-key-0123456789abcdef")})
	if err != nil {
		t.Fatal(err)
	}
	return &widgetFixture{svc: st.Service, demo: &payment.DemoAccount{StoreID: store.ID, Token: tok}, handler: h}
}
