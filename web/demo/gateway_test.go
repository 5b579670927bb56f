package demo

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/kessai/kessai/server/api"
	"github.com/kessai/kessai/server/kessaitest/servicetest"
	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/payment/services"
	"github.com/kessai/kessai/server/univapay"
)

// gatewayFixture is a real gateway for the shop to talk to: the payment
// service over a fresh SQLite file and its JSON API on an httptest server,
// with two stores of two merchants. Only the tests reach into the service,
// to make the payments a shopper would make in the widget; the shop itself
// sees nothing but the API's URL and store A's credentials.
type gatewayFixture struct {
	svc            *services.Set
	srv            *httptest.Server
	storeA, storeB payment.Store
	tokA, tokB     *payment.IssuedAppToken

	mu    sync.Mutex
	calls int
}

func newGatewayFixture(t *testing.T) *gatewayFixture {
	t.Helper()
	return newGatewayFixtureOn(t, nil)
}

// newGatewayFixtureOn is a gateway on clock (nil: the system's), for
// payments whose deadlines are days away.
func newGatewayFixtureOn(t *testing.T, clock payment.Clock) *gatewayFixture {
	t.Helper()
	ctx := context.Background()
	f := &gatewayFixture{}
	f.srv = httptest.NewUnstartedServer(nil)
	publicURL := "http://" + f.srv.Listener.Addr().String()
	// Events are written as the API shows them and delivered over HTTP,
	// so that the storefront's webhook hears of what is paid.
	stack := servicetest.New(t, servicetest.Options{Clock: clock, PublicOrigin: publicURL, Configure: func(c *payment.Config) {
		c.EncodeEvent, c.WebhookSender = univapay.EncodeEvent, postSender{}
	}})
	db := stack.DB
	f.svc = stack.Service
	now := time.Now()
	for i, st := range []*payment.Store{&f.storeA, &f.storeB} {
		m := &payment.Merchant{ID: payment.NewID(), Name: "Merchant", Email: "m" + string(rune('a'+i)) + "@kessai.test", Verified: true, CreatedOn: now}
		*st = payment.Store{ID: payment.NewID(), MerchantID: m.ID, Name: "Kessai Coffee", PCICompliant: true,
			Settings: payment.DefaultStoreSettings(), CreatedOn: now}
		if err := db.Update(ctx, func(tx payment.Tx) error {
			if err := tx.CreateMerchant(ctx, m); err != nil {
				return err
			}
			return tx.CreateStore(ctx, st)
		}); err != nil {
			t.Fatal(err)
		}
	}
	var err error
	if f.tokA, err = f.svc.Access.IssueStoreAppToken(ctx, f.storeA.ID, payment.NewAppToken{Domains: []string{"127.0.0.1"}}); err != nil {
		t.Fatal(err)
	}
	if f.tokB, err = f.svc.Access.IssueStoreAppToken(ctx, f.storeB.ID, payment.NewAppToken{}); err != nil {
		t.Fatal(err)
	}
	apiSrv := api.New(api.Config{Service: f.svc, Logger: slog.New(slog.DiscardHandler), PublicOrigin: publicURL})
	f.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.calls++
		f.mu.Unlock()
		apiSrv.ServeHTTP(w, r)
	})
	f.srv.Start()
	t.Cleanup(f.srv.Close)
	return f
}

// postSender delivers webhooks as the gateway's sender does: one POST of
// the body with the headers, its status the receiver's answer.
type postSender struct{}

func (postSender) Send(ctx context.Context, req payment.WebhookRequest) (int, error) {
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, req.URL, bytes.NewReader(req.Body))
	if err != nil {
		return 0, err
	}
	for k, v := range req.Headers {
		r.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		return 0, err
	}
	res.Body.Close()
	return res.StatusCode, nil
}

// CheckURL takes every URL: the storefront's receiver is on loopback.
func (postSender) CheckURL(context.Context, string, bool) error { return nil }

// apiCalls is how many requests the gateway's API has had.
func (f *gatewayFixture) apiCalls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

// pay makes a card token and a charge on it, as the widget would, and lets
// the sandbox acquirer answer.
func (f *gatewayFixture) pay(t testing.TB, tok *payment.IssuedAppToken, cardNumber string, amount int64, currency string, meta payment.Metadata) *payment.Charge {
	t.Helper()
	ctx := context.Background()
	c, err := f.svc.Access.Authenticate(ctx, "Bearer "+tok.Secret+"."+tok.JWT, "")
	if err != nil {
		t.Fatal(err)
	}
	return servicetest.Pay(t, f.svc, c, cardNumber, amount, currency, meta)
}
