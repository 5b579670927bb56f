package api

// What encoding a charge's answer costs, handler and router aside:
//
//	go test -run '^$' -bench 'BenchmarkWriteCharge' -benchmem ./server/api/
//
// BenchmarkWriteCharge/json.Marshal is encoding/json alone on the same
// value, the floor writeJSON's buffer and headers stand on.

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/univapay"
)

func benchCharge() *payment.Charge {
	at := time.Date(2026, 11, 24, 4, 0, 0, 123456000, time.UTC)
	charged := int64(1000)
	return &payment.Charge{
		ID: payment.NewID(), StoreID: payment.NewID(), MerchantID: payment.NewID(), TokenID: payment.NewID(),
		TokenType: payment.OneTime, Mode: payment.ModeTest, RequestedAmount: 1000, Currency: "JPY",
		ChargedAmount: &charged, Status: payment.ChargeSuccessful, Metadata: payment.Metadata{},
		CreatedOn: at, UpdatedOn: at.Add(time.Second),
	}
}

func BenchmarkWriteCharge(b *testing.B) {
	s := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	ch := benchCharge()
	req := httptest.NewRequest(http.MethodGet, "/stores/x/charges/y", nil)
	b.Run("writeJSON", func(b *testing.B) {
		w := &nopWriter{h: http.Header{}}
		b.ReportAllocs()
		for b.Loop() {
			s.writeJSON(w, req, http.StatusOK, univapay.ChargeOf(ch))
		}
	})
	b.Run("json.Marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(univapay.ChargeOf(ch)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
