// Package web holds Kessai's browser-facing pages that are not the JSON API:
// for now the demo storefront, which runs on its own origin so that
// everything it does with the gateway is really cross-origin.
package web

import (
	"bytes"
	"html/template"
	"log/slog"
	"net/http"

	"github.com/kessai/kessai/static"
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
	// DataDir is where the storefront keeps its orders.
	DataDir string
	Logger  *slog.Logger
}

// NewDemo returns the demo storefront's handler.
func NewDemo(cfg DemoConfig) (http.Handler, error) {
	tmpl, err := template.ParseFS(templates.FS, "demo.html")
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		var buf bytes.Buffer
		if err := tmpl.Execute(&buf, cfg); err != nil {
			http.Error(w, "template error", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", "default-src 'self'; connect-src 'self' "+cfg.GatewayURL)
		_, _ = w.Write(buf.Bytes())
	})
	mux.Handle("GET /demo.css", http.FileServerFS(static.FS))
	mux.Handle("GET /demo.js", http.FileServerFS(static.FS))
	return mux, nil
}
