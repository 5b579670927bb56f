// Package checkout serves the shopper's side of a merchant's checkout, on
// the gateway's origin beside its JSON API: the loader merchants' pages
// include (at UnivaPay's address, /client/checkout.js) and the static files
// it and the frame load (/static/), the widget frame the loader puts in an
// iframe (/widget/), and the hosted link form, a page of the gateway's own
// that embeds the same frame (/forms/).
//
// Every text comes from the message catalogue (web/message) in the language
// message.Negotiate picks, and the scripts get theirs from the pages and
// files served here: the frame embeds its scripts' table, and the loader is
// served with its table written in (web/site).
package checkout

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/web/site"
)

// Service is what the checkout's pages ask of the payment service: the
// frame and the form check the app token and read the store
// (BrowserCaller, CheckoutInfo); the form reads back, as the token's
// browser may, what its frame made (the rest), and an awaiting konbini
// payment's or bank transfer's instructions (ChargeIssuerToken).
type Service interface {
	Clock() payment.Clock
	BrowserCaller(ctx context.Context, jwt, origin string) (*payment.Caller, error)
	CheckoutInfo(ctx context.Context, c *payment.Caller) (*payment.CheckoutInfo, error)
	Charge(ctx context.Context, c *payment.Caller, storeID, id uuid.UUID, wait time.Duration) (*payment.Charge, error)
	ChargeIssuerToken(ctx context.Context, c *payment.Caller, storeID, id uuid.UUID) (*payment.IssuerToken, error)
	TokenReceipt(ctx context.Context, c *payment.Caller, id uuid.UUID) (*payment.TokenReceipt, error)
	Subscription(ctx context.Context, c *payment.Caller, storeID, id uuid.UUID, wait time.Duration) (*payment.Subscription, error)
	LatestSubscriptionCharge(ctx context.Context, c *payment.Caller, storeID, id uuid.UUID) (*payment.Charge, error)
}

// Config is what the checkout's pages need.
type Config struct {
	Service Service
	// PublicURL is the gateway's external base URL (scheme://host[:port]).
	PublicURL string
	Logger    *slog.Logger
	// SessionKey authenticates the link form's session cookie (at least 32
	// bytes); without one, a random key lasts as long as the process.
	SessionKey []byte
}

// Paths are the path prefixes New serves; the gateway routes them here.
// "/client/" mirrors UnivaPay's widget host layout (/client/checkout.js),
// so a shop switching over only changes the host.
var Paths = []string{"/static/", "/client/", "/widget/", "/forms/", "/forms"}

// New returns the handler of the checkout's pages.
func New(cfg Config) (http.Handler, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	key, err := site.SessionKey(cfg.SessionKey, log)
	if err != nil {
		return nil, err
	}
	cfg.SessionKey = key
	files, err := site.Assets()
	if err != nil {
		return nil, err
	}
	wp, err := newWidgetPage(cfg, log)
	if err != nil {
		return nil, err
	}
	lf, err := newLinkform(cfg, log)
	if err != nil {
		return nil, err
	}
	r := site.NewRouter()
	// The static files, and the loader under UnivaPay's path too.
	r.HandleFunc("/client/checkout.js", func(w http.ResponseWriter, r *http.Request) {
		files.Serve(w, r, "checkout.js")
	}).Methods(site.Read...)
	r.HandleFunc("/static/{file:.*}", func(w http.ResponseWriter, r *http.Request) {
		files.Serve(w, r, site.PathValue(r, "file"))
	}).Methods(site.Read...)
	r.HandleFunc("/widget/frame", wp.frame).Methods(site.Read...)
	r.HandleFunc("/widget/theme.css", wp.theme).Methods(site.Read...)
	r.HandleFunc("/forms/{id}", lf.show).Methods(site.Read...)
	r.HandleFunc("/forms/{id}/complete", lf.complete).Methods(http.MethodPost)
	r.HandleFunc("/forms/{id}/return", lf.returned).Methods(site.Read...)
	// Anything else under /forms is the form's own "no such page", in any
	// method.
	r.HandleFunc("/forms", lf.notFound)
	r.PathPrefix("/forms/").HandlerFunc(lf.notFound)
	return r, nil
}
