package hosted

import "net/http"

// paymentRoutes serves the dashboard and the payment pages.
func (c *console) paymentRoutes(mux *http.ServeMux) {
	c.handle(mux, "GET /console/{$}", c.signedIn(c.dashboard))
}

func (c *console) dashboard(cr *consoleRequest) error {
	c.render(cr, http.StatusOK, "console_dashboard", "dashboard", nil)
	return nil
}
