package prometheus_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/kessai/kessai/server/kessaitest"
	"github.com/kessai/kessai/server/kessaitest/servicetest"
	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/prometheus"
)

// BenchmarkScrape is what one scrape of /metrics costs once every series a
// busy gateway can have exists (84 routes, each with a handful of
// statuses, both classes, every payment outcome and kind of work), beside
// a scrape of a gateway that has served nothing yet (the Go runtime's and
// the process's metrics and the queue's gauges alone), in the same run:
//
//	go test -run '^$' -bench BenchmarkScrape -benchmem ./server/prometheus/
func BenchmarkScrape(b *testing.B) {
	queue := func(context.Context) ([]payment.WorkQueueStats, error) {
		return []payment.WorkQueueStats{{Kind: payment.WorkAuthorize, Due: 3, OldestDue: time.Now().Add(-time.Second)}}, nil
	}
	newMetrics := func() *prometheus.Metrics {
		return prometheus.New(prometheus.Config{WorkQueue: queue, Clock: kessaitest.NewClock(time.Now())})
	}
	scrape := func(b *testing.B, m *prometheus.Metrics) {
		h := m.Handler(prometheus.Access{Local: func(*http.Request) bool { return true }})
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		b.ReportAllocs()
		var size int
		for b.Loop() {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK {
				b.Fatalf("status %d", rec.Code)
			}
			size = rec.Body.Len()
		}
		b.ReportMetric(float64(size), "bytes/scrape")
	}
	b.Run("fresh", func(b *testing.B) { scrape(b, newMetrics()) })
	b.Run("busy", func(b *testing.B) {
		m := newMetrics()
		for route := range 84 {
			for _, status := range []int{200, 201, 400, 401, 404, 429} {
				for _, class := range []string{"standard", "charge"} {
					m.Request(fmt.Sprintf("/route/%d/{id}", route), "GET", class, status, time.Millisecond)
				}
			}
		}
		for _, status := range []string{"successful", "authorized", "failed", "error", "canceled", "awaiting"} {
			for _, name := range []string{"", "CARD_REJECTED", "CARD_EXPIRED", "PROCESSING_ERROR"} {
				m.Settled(payment.SettledCharge, status, name)
			}
		}
		for _, kind := range servicetest.New(b, servicetest.Options{}).Service.Work.Kinds() {
			m.WorkAttempted(kind, false)
			m.WorkAttempted(kind, true)
		}
		scrape(b, m)
	})
}
