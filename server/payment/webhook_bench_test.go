package payment_test

// How fast webhooks go out, next to the same receiver hit directly by
// net/http in the same run, so that the figures are ratios rather than
// numbers of this machine:
//
//	go test -run '^$' -bench 'Webhook' -benchmem -benchtime 2000x ./server/payment/
//
// BenchmarkWebhookDrain: deliveries/s when b.N deliveries are queued and
// the worker (64 at once) sends them to a local receiver, beside
// direct-posts/s, the same number of POSTs of the same size from 64
// goroutines, and drain-ratio, the first over the second.
//
// BenchmarkWebhookLatency: the delay from a change's commit to its
// delivery's arrival, one change at a time with the worker running
// (p50-ms, p99-ms), beside the round trip of one direct POST
// (direct-p50-ms, direct-p99-ms).

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kessai/kessai/server/kessaitest/servicetest"
	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/payment/services"
	"github.com/kessai/kessai/server/univapay"
	"github.com/kessai/kessai/server/webhookhttp"
)

// benchReceiver answers 204 to everything and rings arrived for each
// request.
type benchReceiver struct {
	*httptest.Server
	count   atomic.Int64
	arrived chan time.Time
}

func newBenchReceiver(b *testing.B) *benchReceiver {
	rc := &benchReceiver{arrived: make(chan time.Time, 1<<16)}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		rc.count.Add(1)
		select {
		case rc.arrived <- time.Now():
		default:
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	b.Cleanup(rc.Close)
	return rc
}

func (rc *benchReceiver) reset() {
	rc.count.Store(0)
	for {
		select {
		case <-rc.arrived:
		default:
			return
		}
	}
}

// benchHooks is a service sending to a receiver, with one webhook that
// hears token_created.
type benchHooks struct {
	svc    *services.Set
	caller *payment.Caller
	rc     *benchReceiver
}

func newBenchHooks(b *testing.B) *benchHooks {
	b.Helper()
	st := servicetest.New(b, servicetest.Options{EncodeEvent: univapay.EncodeEvent, WebhookSender: webhookhttp.New(webhookhttp.Config{TestModeLocal: true})})
	demo := st.SeedDemo(b)
	h := &benchHooks{svc: st.Service, caller: demo.Caller, rc: newBenchReceiver(b)}
	u := h.rc.URL + "/hook"
	if _, err := h.svc.Notify.CreateWebhook(context.Background(), h.caller, demo.StoreID, payment.WebhookInput{
		Triggers: []string{payment.EventTokenCreated}, URL: &u,
	}); err != nil {
		b.Fatal(err)
	}
	return h
}

func (h *benchHooks) token(b *testing.B) {
	if _, err := h.svc.Tokens.CreateToken(context.Background(), h.caller, payment.NewToken{
		PaymentType: payment.PaymentTypeCard, Type: payment.OneTime, Email: "bench@example.com",
		Card: &payment.CardInput{Cardholder: "TARO YAMADA", Number: "4000020000000000", ExpMonth: 12, ExpYear: 2039, CVV: "123"},
	}); err != nil {
		b.Fatal(err)
	}
}

func (h *benchHooks) runWorker() (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.svc.Work.RunWorker(ctx, time.Second, slog.New(slog.DiscardHandler))
	}()
	return func() { cancel(); <-done }
}

// directBody is a delivery's size and headers, for the direct POSTs.
var directBody = bytes.Repeat([]byte("x"), 1400)

func directPost(b *testing.B, client *http.Client, url string) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(directBody))
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
}

func directClient() *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 64}, Timeout: 15 * time.Second}
}

func BenchmarkWebhookDrain(b *testing.B) {
	h := newBenchHooks(b)
	for range b.N {
		h.token(b)
	}
	b.ResetTimer()
	start := time.Now()
	stop := h.runWorker()
	for h.rc.count.Load() < int64(b.N) {
		time.Sleep(time.Millisecond)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	stop()
	if n := h.rc.count.Load(); n != int64(b.N) {
		b.Fatalf("%d deliveries, want %d", n, b.N)
	}

	// The baseline: the same receiver, the same number of POSTs, as many
	// at once as the worker sends.
	h.rc.reset()
	client := directClient()
	var next atomic.Int64
	var wg sync.WaitGroup
	directStart := time.Now()
	for range 64 {
		wg.Go(func() {
			for next.Add(1) <= int64(b.N) {
				directPost(b, client, h.rc.URL+"/direct")
			}
		})
	}
	wg.Wait()
	direct := time.Since(directStart)

	rate, directRate := float64(b.N)/elapsed.Seconds(), float64(b.N)/direct.Seconds()
	b.ReportMetric(rate, "deliveries/s")
	b.ReportMetric(directRate, "direct-posts/s")
	b.ReportMetric(rate/directRate, "drain-ratio")
}

func BenchmarkWebhookLatency(b *testing.B) {
	h := newBenchHooks(b)
	stop := h.runWorker()
	defer stop()
	delays := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		h.token(b)
		committed := time.Now()
		select {
		case at := <-h.rc.arrived:
			delays = append(delays, at.Sub(committed))
		case <-time.After(10 * time.Second):
			b.Fatal("no delivery within 10 s of the commit")
		}
	}
	b.StopTimer()

	h.rc.reset()
	client := directClient()
	direct := make([]time.Duration, 0, b.N)
	for range b.N {
		sent := time.Now()
		directPost(b, client, h.rc.URL+"/direct")
		direct = append(direct, (<-h.rc.arrived).Sub(sent))
	}
	ms := func(ds []time.Duration, p int) float64 {
		slices.Sort(ds)
		return float64(ds[min(len(ds)-1, len(ds)*p/100)]) / float64(time.Millisecond)
	}
	b.ReportMetric(ms(delays, 50), "p50-ms")
	b.ReportMetric(ms(delays, 99), "p99-ms")
	b.ReportMetric(ms(direct, 50), "direct-p50-ms")
	b.ReportMetric(ms(direct, 99), "direct-p99-ms")
}
