package api

// What the middleware chain costs a request, beside a bare handler in the
// same run:
//
//	go test -run '^$' -bench 'BenchmarkChain' -benchmem ./server/api/
//
// BenchmarkChain/bare is the floor: the handler alone, answering the
// bytes of a charge. BenchmarkChain/layers is the same handler behind every
// layer of the API (request id, logging, recovery, authentication of a
// secret-bearing token already in the auth cache, CORS, the rate limits
// deciding both buckets, idempotency) without the router and the handler's
// SQLite read and encoding; the difference in ns/op and allocs/op is the
// chain's. The goal of issue 14 is at most 5 allocations a request.

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// nopWriter is a ResponseWriter that keeps only its header map, cleared
// between requests, so that neither case measures a recorder.
type nopWriter struct {
	h      http.Header
	status int
}

func (w *nopWriter) Header() http.Header         { return w.h }
func (w *nopWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *nopWriter) WriteHeader(code int)        { w.status = code }

var chargeBody = []byte(`{"id":"0196c5a0-2a4f-7c1e-9d3b-5f6a7b8c9d0f","status":"successful","amount":1000,"currency":"JPY"}` + "\n")

func BenchmarkChain(b *testing.B) {
	gw := newBenchGateway(b)
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(chargeBody)
	})
	run := func(b *testing.B, h http.Handler) {
		req := httptest.NewRequest(http.MethodGet, "/stores/0196c5a0-2a4f-7c1e-9d3b-5f6a7b8c9d0e"+gw.chargePath, nil)
		req.Header.Set("Authorization", gw.auth)
		w := &nopWriter{h: http.Header{}}
		b.ReportAllocs()
		for b.Loop() {
			clear(w.h)
			w.status = 0
			h.ServeHTTP(w, req)
			if w.status != http.StatusOK {
				b.Fatalf("status %d", w.status)
			}
		}
	}
	b.Run("bare", func(b *testing.B) { run(b, handler) })
	b.Run("layers", func(b *testing.B) { run(b, gw.limited.behind(ScopeAPI, handler)) })
}
