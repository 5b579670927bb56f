package web

import "net/http"

// formRoutes serves the hosted link form.
func (p *pages) formRoutes(mux *http.ServeMux) error {
	return nil
}
