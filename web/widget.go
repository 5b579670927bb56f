package web

import "net/http"

// widgetRoutes serves the widget frame.
func (p *pages) widgetRoutes(mux *http.ServeMux) error {
	return nil
}
