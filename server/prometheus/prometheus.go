// Package prometheus is the gateway's /metrics: what the API and the
// payment service tell their Meters, kept in the Prometheus Go client's
// counters and histograms and served in Prometheus's text format, with the
// work queue read at scrape time and the Go runtime's and the process's
// own metrics beside them.
//
// Every label value comes from a fixed set the gateway defines (route
// templates, statuses, kinds, payment error names): nothing a client sends
// becomes a label, so no request can add a series, and no id, amount,
// credential or card datum is ever one.
package prometheus

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	client "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/kessai/kessai/server/payment"
)

// Config is what the metrics need besides what they are told.
type Config struct {
	// WorkQueue reads the work queue's statistics at each scrape (nil:
	// no queue metrics); Clock is the service's, which says what is due.
	WorkQueue func(context.Context) ([]payment.WorkQueueStats, error)
	// WorkKinds are the kinds of work this version carries out, each
	// reported at every scrape, 0 when none is queued.
	WorkKinds func() []payment.WorkKind
	Clock     payment.Clock
	// QueueTimeout bounds the queue's read per scrape (default 2 s).
	QueueTimeout time.Duration
	Logger       *slog.Logger
}

// Metrics keeps the gateway's metrics. It is the API's Meter and the
// payment service's.
type Metrics struct {
	reg *client.Registry

	requests        *client.CounterVec
	requestDuration *client.HistogramVec
	rateLimits      *client.CounterVec

	charges, refunds, cancels *client.CounterVec
	workAttempts              *client.CounterVec
	webhookAttempts           *client.CounterVec
	webhookLag                client.Histogram
	transactions              *client.HistogramVec
}

// New returns the metrics, registered with the Go runtime's and the
// process's collectors.
func New(cfg Config) *Metrics {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.QueueTimeout <= 0 {
		cfg.QueueTimeout = 2 * time.Second
	}
	m := &Metrics{
		reg: client.NewRegistry(),
		requests: client.NewCounterVec(client.CounterOpts{
			Name: "kessai_http_requests_total",
			Help: "HTTP requests answered, by route template (a page prefix for the hosted pages, unmatched for a path no route matches), method, status and limit class.",
		}, []string{"route", "method", "status", "class"}),
		requestDuration: client.NewHistogramVec(client.HistogramOpts{
			Name:    "kessai_http_request_duration_seconds",
			Help:    "How long HTTP requests took to answer, long polls and event streams included, by route template, method and limit class.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"route", "method", "class"}),
		rateLimits: client.NewCounterVec(client.CounterOpts{
			Name: "kessai_rate_limit_decisions_total",
			Help: "Rate-limit decisions by limit class: admitted, refused (429), unavailable (503: the limiter could not count).",
		}, []string{"class", "decision"}),
		charges: client.NewCounterVec(client.CounterOpts{
			Name: "kessai_charges_total",
			Help: "Charges reaching a status other than pending (a charge authorised then captured counts under both), by status and payment error name.",
		}, []string{"status", "error"}),
		refunds: client.NewCounterVec(client.CounterOpts{
			Name: "kessai_refunds_total",
			Help: "Refunds finished, by status and payment error name.",
		}, []string{"status", "error"}),
		cancels: client.NewCounterVec(client.CounterOpts{
			Name: "kessai_cancels_total",
			Help: "Cancels finished, by status and payment error name.",
		}, []string{"status", "error"}),
		workAttempts: client.NewCounterVec(client.CounterOpts{
			Name: "kessai_work_attempts_total",
			Help: "Attempts at items of the work queue by this process, by kind and result (done, or failed and to be retried).",
		}, []string{"kind", "result"}),
		webhookAttempts: client.NewCounterVec(client.CounterOpts{
			Name: "kessai_webhook_delivery_attempts_total",
			Help: "Webhook delivery attempts by result: successful, retrying (failed, to be tried again), failed (given up).",
		}, []string{"result"}),
		webhookLag: client.NewHistogram(client.HistogramOpts{
			Name:    "kessai_webhook_delivery_lag_seconds",
			Help:    "How long after its event a webhook delivery was accepted by its receiver, retries included.",
			Buckets: []float64{.05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 4 * 3600, 24 * 3600},
		}),
		transactions: client.NewHistogramVec(client.HistogramOpts{
			Name:    "kessai_storage_transaction_duration_seconds",
			Help:    "How long storage transactions took, their work included, by kind: update (read-write), view (read-only), one_read (a single read without a transaction), idempotency (an idempotency key's statement).",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}, []string{"kind"}),
	}
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.requests, m.requestDuration, m.rateLimits,
		m.charges, m.refunds, m.cancels,
		m.workAttempts, m.webhookAttempts, m.webhookLag, m.transactions,
	)
	if cfg.WorkQueue != nil {
		m.reg.MustRegister(newQueueCollector(cfg))
	}
	return m
}

// Registry is where the metrics are registered, for tests to gather.
func (m *Metrics) Registry() *client.Registry { return m.reg }

// Request counts one HTTP request (api.Meter).
func (m *Metrics) Request(route, method, class string, status int, took time.Duration) {
	m.requests.WithLabelValues(route, method, statusLabel(status), class).Inc()
	m.requestDuration.WithLabelValues(route, method, class).Observe(took.Seconds())
}

// statusLabels are the labels of the HTTP statuses, made once rather than
// per request.
var statusLabels = func() (labels [600]string) {
	for code := 100; code < len(labels); code++ {
		labels[code] = strconv.Itoa(code)
	}
	return labels
}()

func statusLabel(code int) string {
	if code >= 100 && code < len(statusLabels) {
		return statusLabels[code]
	}
	return strconv.Itoa(code)
}

// RateLimit counts one rate-limit decision (api.Meter).
func (m *Metrics) RateLimit(class, decision string) {
	m.rateLimits.WithLabelValues(class, decision).Inc()
}

// Settled counts a charge, refund or cancel reaching a status
// (payment.Meter).
func (m *Metrics) Settled(kind, status, errorName string) {
	var v *client.CounterVec
	switch kind {
	case payment.SettledCharge:
		v = m.charges
	case payment.SettledRefund:
		v = m.refunds
	case payment.SettledCancel:
		v = m.cancels
	default:
		return
	}
	v.WithLabelValues(status, errorName).Inc()
}

// WorkAttempted counts one attempt at an item of work (payment.Meter).
func (m *Metrics) WorkAttempted(kind payment.WorkKind, failed bool) {
	result := "done"
	if failed {
		result = "failed"
	}
	m.workAttempts.WithLabelValues(string(kind), result).Inc()
}

// WebhookAttempted counts one delivery attempt (payment.Meter).
func (m *Metrics) WebhookAttempted(result payment.DeliveryStatus, lag time.Duration) {
	m.webhookAttempts.WithLabelValues(string(result)).Inc()
	if result == payment.DeliverySuccessful {
		m.webhookLag.Observe(lag.Seconds())
	}
}

// Transaction times one storage transaction (payment.Meter).
func (m *Metrics) Transaction(kind string, took time.Duration) {
	m.transactions.WithLabelValues(kind).Observe(took.Seconds())
}

// Access says who may read the metrics.
type Access struct {
	// Local reports whether a request comes from where the metrics may be
	// read without a token; nil: from nowhere.
	Local func(*http.Request) bool
	// Token, when not empty, lets a request carrying it as a bearer
	// token ("Authorization: Bearer <Token>") read them from anywhere.
	Token string
}

// Handler serves the metrics in Prometheus's text format to the requests
// a allows, and 403 to the others.
func (m *Metrics) Handler(a Access) http.Handler {
	serve := promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
	var want [sha256.Size]byte
	if a.Token != "" {
		want = sha256.Sum256([]byte(a.Token))
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		allowed := a.Local != nil && a.Local(r)
		if !allowed && a.Token != "" {
			// Compared as digests: equal lengths, so the comparison's time
			// tells nothing of the token's length either.
			got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			sum := sha256.Sum256([]byte(got))
			allowed = ok && subtle.ConstantTimeCompare(sum[:], want[:]) == 1
		}
		if !allowed {
			http.Error(w, "metrics are served to loopback, KESSAI_TRUSTED_PROXIES and holders of KESSAI_METRICS_TOKEN", http.StatusForbidden)
			return
		}
		serve.ServeHTTP(w, r)
	})
}

// queueCollector reads the work queue at each scrape. With several
// processes on one database each reports the same shared queue: take the
// maximum across them, not the sum.
type queueCollector struct {
	cfg                                  Config
	items, oldest, retrying, maxAttempts *client.Desc
}

func newQueueCollector(cfg Config) *queueCollector {
	return &queueCollector{
		cfg: cfg,
		items: client.NewDesc("kessai_work_queue_items",
			"Items in the work queue (shared by every process on the database), by kind and state: due (waiting or running) or scheduled (due later).",
			[]string{"kind", "state"}, nil),
		oldest: client.NewDesc("kessai_work_queue_oldest_due_age_seconds",
			"How long the earliest due item of each kind has been due: how late the queue runs.",
			[]string{"kind"}, nil),
		retrying: client.NewDesc("kessai_work_queue_retrying_items",
			"Queued items with at least one failed attempt, by kind.",
			[]string{"kind"}, nil),
		maxAttempts: client.NewDesc("kessai_work_queue_max_attempts",
			"The most failed attempts of any queued item of each kind.",
			[]string{"kind"}, nil),
	}
}

func (c *queueCollector) Describe(ch chan<- *client.Desc) {
	ch <- c.items
	ch <- c.oldest
	ch <- c.retrying
	ch <- c.maxAttempts
}

func (c *queueCollector) Collect(ch chan<- client.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.QueueTimeout)
	defer cancel()
	stats, err := c.cfg.WorkQueue(ctx)
	if err != nil {
		// The rest of the scrape is still worth having; the gap in these
		// series says the queue could not be read.
		c.cfg.Logger.Error("metrics: reading the work queue", "error", err)
		return
	}
	now := c.cfg.Clock.Now()
	byKind := make(map[payment.WorkKind]payment.WorkQueueStats, len(stats))
	for _, st := range stats {
		byKind[st.Kind] = st
	}
	// Every kind this version knows is reported, 0 when none is queued, so
	// that a drained queue reads 0 rather than nothing.
	var kinds []payment.WorkKind
	if c.cfg.WorkKinds != nil {
		kinds = c.cfg.WorkKinds()
	}
	for _, kind := range kinds {
		st := byKind[kind]
		delete(byKind, kind)
		c.collect(ch, string(kind), st, now)
	}
	// Kinds only a newer version knows, together.
	var other payment.WorkQueueStats
	for _, st := range byKind {
		other.Due += st.Due
		other.Scheduled += st.Scheduled
		other.Retrying += st.Retrying
		other.MaxAttempts = max(other.MaxAttempts, st.MaxAttempts)
		if st.Due > 0 && (other.OldestDue.IsZero() || st.OldestDue.Before(other.OldestDue)) {
			other.OldestDue = st.OldestDue
		}
	}
	if len(byKind) > 0 {
		c.collect(ch, string(payment.UnknownWorkKind), other, now)
	}
}

func (c *queueCollector) collect(ch chan<- client.Metric, kind string, st payment.WorkQueueStats, now time.Time) {
	age := 0.0
	if st.Due > 0 && now.After(st.OldestDue) {
		age = now.Sub(st.OldestDue).Seconds()
	}
	ch <- client.MustNewConstMetric(c.items, client.GaugeValue, float64(st.Due), kind, "due")
	ch <- client.MustNewConstMetric(c.items, client.GaugeValue, float64(st.Scheduled), kind, "scheduled")
	ch <- client.MustNewConstMetric(c.oldest, client.GaugeValue, age, kind)
	ch <- client.MustNewConstMetric(c.retrying, client.GaugeValue, float64(st.Retrying), kind)
	ch <- client.MustNewConstMetric(c.maxAttempts, client.GaugeValue, float64(st.MaxAttempts), kind)
}
