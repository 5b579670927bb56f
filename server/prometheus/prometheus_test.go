package prometheus_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/kessai/kessai/server/kessaitest"
	"github.com/kessai/kessai/server/kessaitest/servicetest"
	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/prometheus"
)

func TestHandlerAccess(t *testing.T) {
	const token = "a-token-long-enough-0123456789"
	local := func(r *http.Request) bool { return strings.HasPrefix(r.RemoteAddr, "127.") }
	for _, c := range []struct {
		name   string
		access prometheus.Access
		method string
		remote string
		auth   string
		want   int
	}{
		{"local", prometheus.Access{Local: local}, "GET", "127.0.0.1:1", "", 200},
		{"local HEAD", prometheus.Access{Local: local}, "HEAD", "127.0.0.1:1", "", 200},
		{"local POST", prometheus.Access{Local: local}, "POST", "127.0.0.1:1", "", 405},
		{"remote without a token configured", prometheus.Access{Local: local}, "GET", "192.0.2.1:1", "", 403},
		{"remote, any bearer, no token configured", prometheus.Access{Local: local}, "GET", "192.0.2.1:1", "Bearer ", 403},
		{"remote with the token", prometheus.Access{Local: local, Token: token}, "GET", "192.0.2.1:1", "Bearer " + token, 200},
		{"remote with another token", prometheus.Access{Local: local, Token: token}, "GET", "192.0.2.1:1", "Bearer " + strings.ToUpper(token), 403},
		{"remote with the token twice", prometheus.Access{Local: local, Token: token}, "GET", "192.0.2.1:1", "Bearer " + token + token, 403},
		{"remote with an empty bearer", prometheus.Access{Local: local, Token: token}, "GET", "192.0.2.1:1", "Bearer ", 403},
		{"remote with the token as Basic", prometheus.Access{Local: local, Token: token}, "GET", "192.0.2.1:1", "Basic " + token, 403},
		{"nowhere is local", prometheus.Access{}, "GET", "127.0.0.1:1", "", 403},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := prometheus.New(prometheus.Config{})
			req := httptest.NewRequest(c.method, "/metrics", nil)
			req.RemoteAddr = c.remote
			if c.auth != "" {
				req.Header.Set("Authorization", c.auth)
			}
			rec := httptest.NewRecorder()
			m.Handler(c.access).ServeHTTP(rec, req)
			if rec.Code != c.want {
				t.Fatalf("status %d, want %d", rec.Code, c.want)
			}
			if c.want == 200 && c.method == "GET" && !strings.Contains(rec.Body.String(), "go_goroutines") {
				t.Errorf("no runtime metrics in:\n%.500s", rec.Body.String())
			}
			if c.want != 200 && strings.Contains(rec.Body.String(), "go_goroutines") {
				t.Errorf("a refused request got metrics")
			}
			if rec.Header().Get("Cache-Control") != "no-store" {
				t.Errorf("Cache-Control %q", rec.Header().Get("Cache-Control"))
			}
		})
	}
}

// TestMeterCounts: what the API and the service tell the metrics lands in
// the series their labels name, and nothing else does.
func TestMeterCounts(t *testing.T) {
	m := prometheus.New(prometheus.Config{})
	m.Request("/charges", "POST", "charge", 201, 30*time.Millisecond)
	m.Request("/charges", "POST", "charge", 429, time.Millisecond)
	m.RateLimit("charge", "refused")
	m.Settled(payment.SettledCharge, "failed", "CARD_REJECTED")
	m.Settled(payment.SettledRefund, "successful", "")
	m.Settled(payment.SettledCancel, "failed", "CANCEL_UNAVAILABLE")
	m.Settled("subscription", "successful", "") // not a kind it counts
	m.WorkAttempted(payment.WorkAuthorize, false)
	m.WorkAttempted(payment.WorkAuthorize, true)
	m.WebhookAttempted(payment.DeliverySuccessful, 3*time.Second)
	m.WebhookAttempted(payment.DeliveryRetrying, 0)
	m.Transaction(payment.TransactionUpdate, 2*time.Millisecond)

	want := `
# HELP kessai_cancels_total Cancels finished, by status and payment error name.
# TYPE kessai_cancels_total counter
kessai_cancels_total{error="CANCEL_UNAVAILABLE",status="failed"} 1
# HELP kessai_charges_total Charges reaching a status other than pending (a charge authorised then captured counts under both), by status and payment error name.
# TYPE kessai_charges_total counter
kessai_charges_total{error="CARD_REJECTED",status="failed"} 1
# HELP kessai_http_requests_total HTTP requests answered, by route template (a page prefix for the hosted pages, unmatched for a path no route matches), method, status and limit class.
# TYPE kessai_http_requests_total counter
kessai_http_requests_total{class="charge",method="POST",route="/charges",status="201"} 1
kessai_http_requests_total{class="charge",method="POST",route="/charges",status="429"} 1
# HELP kessai_rate_limit_decisions_total Rate-limit decisions by limit class: admitted, refused (429), unavailable (503: the limiter could not count).
# TYPE kessai_rate_limit_decisions_total counter
kessai_rate_limit_decisions_total{class="charge",decision="refused"} 1
# HELP kessai_refunds_total Refunds finished, by status and payment error name.
# TYPE kessai_refunds_total counter
kessai_refunds_total{error="",status="successful"} 1
# HELP kessai_webhook_delivery_attempts_total Webhook delivery attempts by result: successful, retrying (failed, to be tried again), failed (given up).
# TYPE kessai_webhook_delivery_attempts_total counter
kessai_webhook_delivery_attempts_total{result="retrying"} 1
kessai_webhook_delivery_attempts_total{result="successful"} 1
# HELP kessai_work_attempts_total Attempts at items of the work queue by this process, by kind and result (done, or failed and to be retried).
# TYPE kessai_work_attempts_total counter
kessai_work_attempts_total{kind="authorize",result="done"} 1
kessai_work_attempts_total{kind="authorize",result="failed"} 1
`
	names := []string{"kessai_cancels_total", "kessai_charges_total", "kessai_http_requests_total",
		"kessai_rate_limit_decisions_total", "kessai_refunds_total", "kessai_webhook_delivery_attempts_total", "kessai_work_attempts_total"}
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want), names...); err != nil {
		t.Error(err)
	}
	for name, n := range map[string]int{
		"kessai_http_request_duration_seconds":        1, // one series: status is not its label
		"kessai_storage_transaction_duration_seconds": 1,
		"kessai_webhook_delivery_lag_seconds":         1,
	} {
		if got, err := testutil.GatherAndCount(m.Registry(), name); err != nil || got != n {
			t.Errorf("%s: %d series (%v), want %d", name, got, err, n)
		}
	}
}

// TestQueueMetrics: the queue is read at each scrape, every known kind is
// reported (0 when none is queued), kinds only a newer version knows are
// summed under unknown, and the oldest due item's age is read off the
// service's clock.
func TestQueueMetrics(t *testing.T) {
	now := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	clock := kessaitest.NewClock(now)
	var stats []payment.WorkQueueStats
	var readErr error
	// The kinds a gateway of this version registers.
	kinds := servicetest.New(t, servicetest.Options{}).Service.Work.Kinds()
	m := prometheus.New(prometheus.Config{
		Clock:     clock,
		Logger:    slog.New(slog.DiscardHandler),
		WorkKinds: func() []payment.WorkKind { return kinds },
		WorkQueue: func(ctx context.Context) ([]payment.WorkQueueStats, error) {
			if _, ok := ctx.Deadline(); !ok {
				t.Error("the queue is read without a deadline")
			}
			return stats, readErr
		},
	})
	stats = []payment.WorkQueueStats{
		{Kind: payment.WorkAuthorize, Due: 3, Scheduled: 1, OldestDue: now.Add(-90 * time.Second), Retrying: 2, MaxAttempts: 4},
		{Kind: "from_the_future", Due: 1, OldestDue: now.Add(-10 * time.Second)},
		{Kind: "from_further_ahead", Due: 2, Scheduled: 5, OldestDue: now.Add(-20 * time.Second), MaxAttempts: 7},
	}
	want := `
# HELP kessai_work_queue_items Items in the work queue (shared by every process on the database), by kind and state: due (waiting or running) or scheduled (due later).
# TYPE kessai_work_queue_items gauge
`
	for _, kind := range kinds {
		due, scheduled := "0", "0"
		if kind == payment.WorkAuthorize {
			due, scheduled = "3", "1"
		}
		want += `kessai_work_queue_items{kind="` + string(kind) + `",state="due"} ` + due + "\n"
		want += `kessai_work_queue_items{kind="` + string(kind) + `",state="scheduled"} ` + scheduled + "\n"
	}
	want += `kessai_work_queue_items{kind="unknown",state="due"} 3
kessai_work_queue_items{kind="unknown",state="scheduled"} 5
`
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want), "kessai_work_queue_items"); err != nil {
		t.Error(err)
	}
	for _, c := range []struct {
		family, kind string
		want         float64
	}{
		{"kessai_work_queue_oldest_due_age_seconds", "authorize", 90},
		{"kessai_work_queue_oldest_due_age_seconds", "capture", 0},
		{"kessai_work_queue_oldest_due_age_seconds", "unknown", 20},
		{"kessai_work_queue_retrying_items", "authorize", 2},
		{"kessai_work_queue_max_attempts", "authorize", 4},
		{"kessai_work_queue_max_attempts", "unknown", 7},
	} {
		got, err := gauge(m, c.family, c.kind)
		if err != nil || got != c.want {
			t.Errorf("%s{kind=%s} = %v (%v), want %v", c.family, c.kind, got, err, c.want)
		}
	}

	// A queue that cannot be read leaves its series out; the rest of the
	// scrape is still served.
	readErr = errors.New("database away")
	if n, err := testutil.GatherAndCount(m.Registry(), "kessai_work_queue_items"); n != 0 {
		t.Errorf("kessai_work_queue_items: %d series (%v) while the queue cannot be read", n, err)
	}
	rec := httptest.NewRecorder()
	m.Handler(prometheus.Access{Local: func(*http.Request) bool { return true }}).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "go_goroutines") {
		t.Errorf("scrape while the queue cannot be read: %d\n%.300s", rec.Code, rec.Body.String())
	}
}

func gauge(m *prometheus.Metrics, family, kind string) (float64, error) {
	families, err := m.Registry().Gather()
	if err != nil {
		return 0, err
	}
	for _, f := range families {
		if f.GetName() != family {
			continue
		}
		for _, metric := range f.GetMetric() {
			for _, l := range metric.GetLabel() {
				if l.GetName() == "kind" && l.GetValue() == kind {
					return metric.GetGauge().GetValue(), nil
				}
			}
		}
	}
	return 0, errors.New("no such series")
}
