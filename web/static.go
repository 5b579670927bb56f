package web

import "net/http"

// staticRoutes serves the embedded static files.
func (p *pages) staticRoutes(mux *http.ServeMux) error {
	return nil
}
