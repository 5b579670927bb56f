package hosted

import "net/http"

// keyRoutes serves a store's app tokens, webhooks, settings and test
// charges.
func (c *console) keyRoutes(mux *http.ServeMux) {
}
