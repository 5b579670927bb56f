package api

// The cost of the rate limiter in the whole middleware chain:
//
//	go test -run '^$' -bench 'Middleware|RouteKey' -benchmem ./server/api/
//
// BenchmarkMiddlewareStandard and BenchmarkMiddlewareStandardNoLimiter serve
// the same GET /charges/{id} through the full router, with and without the
// limiter; the ratio of their ns/op is the limiter's share of a read.
// Admission alone is benchmarked in server/limit.

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/kessai/kessai/server/kessaitest/servicetest"
	"github.com/kessai/kessai/server/limit"
	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/prometheus"
)

// benchGateway is one database with the demo account and one charge, and
// the API over it with and without rate limits.
type benchGateway struct {
	limited, unlimited *Server
	auth               string
	chargePath         string
}

// newBenchGateway builds the gateway once per benchmark function: with
// b.Loop the function body runs once, however many iterations it measures.
func newBenchGateway(b *testing.B) *benchGateway {
	b.Helper()
	gw, err := buildBenchGateway(b, nil)
	if err != nil {
		b.Fatal(err)
	}
	return gw
}

// meteredBenchMeter is a Meter of both the API and the service.
type meteredBenchMeter interface {
	Meter
	payment.Meter
}

// buildBenchGateway builds the gateway, its service and its API telling
// meter what they do (nil: nothing).
func buildBenchGateway(b *testing.B, meter meteredBenchMeter) (*benchGateway, error) {
	ctx := context.Background()
	st := servicetest.New(b, servicetest.Options{Configure: func(c *payment.Config) {
		if meter != nil {
			c.Meter = meter
		}
	}})
	svc, demo := st.Service, st.SeedDemo(b)
	auth, caller := demo.Auth, demo.Caller
	tok, err := svc.Tokens.CreateToken(ctx, caller, payment.NewToken{
		PaymentType: payment.PaymentTypeCard, Type: payment.OneTime, Email: "buyer@example.com",
		Card: &payment.CardInput{Cardholder: "TARO YAMADA", Number: "4000020000000000", ExpMonth: 12, ExpYear: time.Now().Year() + 3, CVV: "123"},
	})
	if err != nil {
		return nil, err
	}
	ch, err := svc.Charging.CreateCharge(ctx, caller, payment.NewCharge{TokenID: tok.ID, Amount: 1000, Currency: "JPY"})
	if err != nil {
		return nil, err
	}
	if _, err := svc.Work.ProcessPending(ctx, 10); err != nil {
		return nil, err
	}
	// Rules so generous that nothing is ever refused: every request runs
	// the whole admission and then the handler.
	huge := limit.Rule{Burst: limit.MaxRuleValue, BurstRefillPerMinute: limit.MaxRuleValue, PerMinute: limit.MaxRuleValue}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	return &benchGateway{
		limited: New(Config{Service: svc, Logger: log, RateLimits: RateLimits{
			Limiter: limit.NewMemory(limit.MemoryConfig{}),
			Rules:   limit.Rules{Charge: huge, Route: huge, Exact: huge},
		}, Meter: apiMeter(meter)}),
		unlimited:  New(Config{Service: svc, Logger: log}),
		auth:       auth,
		chargePath: "/charges/" + ch.ID.String(),
	}, nil
}

func benchGetCharge(b *testing.B, srv *Server, gw *benchGateway) {
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodGet, gw.chargePath, nil)
		req.Header.Set("Authorization", gw.auth)
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("GET %s: %d %s", gw.chargePath, rec.Code, rec.Body)
		}
	}
}

func BenchmarkMiddlewareStandard(b *testing.B) {
	gw := newBenchGateway(b)
	benchGetCharge(b, gw.limited, gw)
}

func BenchmarkMiddlewareStandardNoLimiter(b *testing.B) {
	gw := newBenchGateway(b)
	benchGetCharge(b, gw.unlimited, gw)
}

func BenchmarkRouteKey(b *testing.B) {
	gw := newBenchGateway(b)
	for _, c := range []struct{ name, path, want string }{
		{"charge", "/charges/0196c5a0-2a4f-7c1e-9d3b-5f6a7b8c9d0f", "/charges/{id}"},
		{"refunds", "/stores/0196c5a0-2a4f-7c1e-9d3b-5f6a7b8c9d0e/charges/0196c5a0-2a4f-7c1e-9d3b-5f6a7b8c9d0f/refunds", "/stores/{id}/charges/{id}/refunds"},
		{"unmatched", "/foo/abc1/bar/0196c5a0-2a4f-7c1e-9d3b-5f6a7b8c9d0e", "/foo/{id}/bar/{id}"},
	} {
		b.Run(c.name, func(b *testing.B) {
			req := httptest.NewRequest(http.MethodGet, c.path, nil)
			if got := gw.limited.routeKey(req); got != c.want {
				b.Fatalf("routeKey(%s) = %s, want %s", c.path, got, c.want)
			}
			b.ReportAllocs()
			for b.Loop() {
				_ = gw.limited.routeKey(req)
			}
		})
	}
}

// apiMeter is meter as the API's Meter: nil stays nil.
func apiMeter(meter meteredBenchMeter) Meter {
	if meter == nil {
		return nil
	}
	return meter
}

// BenchmarkMeteredGetCharge is what the metrics cost the hottest request,
// a GET of a charge through every layer, the router and SQLite, beside
// the same request with nothing metered, in the same run:
//
//	go test -run '^$' -bench 'BenchmarkMeteredGetCharge' -benchmem -count 5 ./server/api/
func BenchmarkMeteredGetCharge(b *testing.B) {
	b.Run("unmetered", func(b *testing.B) {
		gw, err := buildBenchGateway(b, nil)
		if err != nil {
			b.Fatal(err)
		}
		benchGetCharge(b, gw.limited, gw)
	})
	b.Run("prometheus", func(b *testing.B) {
		gw, err := buildBenchGateway(b, prometheus.New(prometheus.Config{}))
		if err != nil {
			b.Fatal(err)
		}
		benchGetCharge(b, gw.limited, gw)
	})
}
