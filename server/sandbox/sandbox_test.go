package sandbox_test

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/sandbox"
)

func TestOutcomes(t *testing.T) {
	p := sandbox.Processor{}
	ctx := context.Background()
	for _, c := range []struct {
		number, email string
		capture       bool
		authorize     int // 0: approved
		captureCode   int
		refundCode    int
	}{
		{number: "4000020000000000"},
		{number: "4242424242424242", refundCode: 329},
		{number: "4111111111111111", authorize: 306},
		{number: "4000000000000002", authorize: 306},
		{number: "4000000000009995", authorize: 306},
		{number: "4000000000000069", authorize: 304},
		{number: "4000000000000127", authorize: 305},
		{number: "4000000000000119", authorize: 309},
		{number: "4000000000009987", authorize: 314},
		{number: "4000000000009979", authorize: 314},
		{number: "4100000000000019", authorize: 319},
		{number: "4000000000000341", captureCode: 313},
		{number: "4000000000000341", capture: true, authorize: 313, captureCode: 313},
		{number: "5555555555554444"},
		{number: "4012888888881881"},
		{number: "4000020000000000", email: "test+charge-failure-315@example.com", authorize: 315},
		{number: "4000020000000000", email: "test+charge-failure-999@example.com"},
	} {
		card := payment.CardDetails{Number: c.number}
		res, err := p.Authorize(ctx, payment.AuthorizeRequest{ChargeID: uuid.New(), Card: card, Email: c.email, Capture: c.capture})
		if err != nil {
			t.Fatal(err)
		}
		if got := code(res); got != c.authorize {
			t.Errorf("%s %s capture=%v: authorize %d, want %d", c.number, c.email, c.capture, got, c.authorize)
		}
		if res, _ := p.Capture(ctx, uuid.New(), card, 100, "JPY"); code(res) != c.captureCode {
			t.Errorf("%s: capture %d, want %d", c.number, code(res), c.captureCode)
		}
		if res, _ := p.Refund(ctx, uuid.New(), card, 100, "JPY"); code(res) != c.refundCode {
			t.Errorf("%s: refund %d, want %d", c.number, code(res), c.refundCode)
		}
	}
	if !p.IsTestCard("4242424242424242") || p.IsTestCard("4012888888881881") || p.SupportsLive() {
		t.Error("test-card and live answers are wrong")
	}
}

func code(r payment.ProcessorResult) int {
	if r.Error == nil {
		return 0
	}
	return r.Error.Code
}
