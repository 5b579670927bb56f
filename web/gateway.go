package web

import (
	"log/slog"
	"net/http"

	"github.com/kessai/kessai/server/payment"
)

// GatewayConfig is what the gateway's own pages need.
type GatewayConfig struct {
	Service *payment.Service
	// PublicURL is the gateway's external base URL (scheme://host[:port]).
	PublicURL string
	Logger    *slog.Logger
	// SessionKey authenticates the hosted pages' session cookies (at
	// least 32 bytes).
	SessionKey []byte
}

// pages serves everything on the gateway's origin that is not the JSON
// API: static files, the widget frame, the hosted link form.
type pages struct {
	cfg GatewayConfig
	log *slog.Logger
}

// GatewayPaths are the path prefixes NewGateway serves; the gateway's main
// routes them here and everything else to the API.
// "/client/" mirrors UnivaPay's widget host layout (/client/checkout.js), so
// a shop switching over only changes the host.
var GatewayPaths = []string{"/static/", "/client/", "/widget/", "/forms/", "/forms"}

// NewGateway returns the handler of the gateway's pages.
func NewGateway(cfg GatewayConfig) (http.Handler, error) {
	p := &pages{cfg: cfg, log: cfg.Logger}
	if p.log == nil {
		p.log = slog.Default()
	}
	mux := http.NewServeMux()
	if err := p.staticRoutes(mux); err != nil {
		return nil, err
	}
	if err := p.widgetRoutes(mux); err != nil {
		return nil, err
	}
	if err := p.formRoutes(mux); err != nil {
		return nil, err
	}
	return mux, nil
}
