package gateway

import (
	"context"
	"net/http"

	"github.com/kessai/kessai/server/payment/services"
	"github.com/kessai/kessai/server/sqlite"
)

// What the tests of package gateway_test, which start the gateway through
// gatewaytest as the binary does, look at inside it.

// SQLite is the embedded store; nil on PostgreSQL.
func (g *gateway) SQLite() *sqlite.DB { return g.sqlite() }

// DB is the store the gateway opened.
func (g *gateway) DB() store { return g.db }

// Service is the payment service the gateway serves.
func (g *gateway) Service() *services.Set { return g.service }

// Servers are the HTTP servers, the API's first.
func (r *Running) Servers() []*http.Server { return r.servers }

// Background runs f as the gateway's background work, which shutdown
// waits for.
func (r *Running) Background(f func(ctx context.Context)) { r.background.run(f) }

// Shutdown stops a gateway that Start started and Run never ran.
func (r *Running) Shutdown() error { return r.shutdown() }

var MetricsWhere = metricsWhere

const (
	LogText = logText
	LogJSON = logJSON
)
