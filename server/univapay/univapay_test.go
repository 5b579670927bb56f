package univapay_test

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/univapay"
)

// TestTimeLayout: a timestamp is written in UTC with microseconds and a
// "Z", whatever zone it was read in, as the SDKs parse it.
func TestTimeLayout(t *testing.T) {
	tokyo := time.FixedZone("JST", 9*60*60)
	at := time.Date(2026, 3, 2, 19, 0, 0, 123456789, tokyo)
	got, err := json.Marshal(univapay.Time(at))
	if err != nil {
		t.Fatal(err)
	}
	if want := `"2026-03-02T10:00:00.123456Z"`; string(got) != want {
		t.Errorf("Time = %s, want %s", got, want)
	}
}

// TestEncodeEventIsTheResourceView: an event's body is the resource as
// the API shows it, for every kind of resource an event carries.
func TestEncodeEventIsTheResourceView(t *testing.T) {
	at := time.Date(2026, 11, 24, 4, 0, 0, 0, time.UTC)
	ch := &payment.Charge{ID: payment.NewID(), Currency: "JPY", RequestedAmount: 1000, CreatedOn: at, UpdatedOn: at}
	tok := &payment.TransactionToken{ID: payment.NewID(), PaymentType: payment.PaymentTypeCard, CreatedOn: at}
	rf := &payment.Refund{ID: payment.NewID(), Amount: 100, Currency: "USD", CreatedOn: at}
	cn := &payment.Cancel{ID: payment.NewID(), CreatedOn: at}
	sub := &payment.Subscription{ID: payment.NewID(), Amount: 500, Currency: "JPY", CreatedOn: at}
	for _, c := range []struct {
		resource any
		view     any
	}{
		{ch, univapay.ChargeOf(ch)},
		{tok, univapay.TokenOf(tok)},
		{rf, univapay.RefundOf(rf)},
		{cn, univapay.CancelOf(cn)},
		{sub, univapay.SubscriptionOf(sub)},
	} {
		got, err := univapay.EncodeEvent(c.resource)
		if err != nil {
			t.Fatalf("EncodeEvent(%T): %v", c.resource, err)
		}
		want, err := json.Marshal(c.view)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("EncodeEvent(%T) =\n%s\nwant\n%s", c.resource, got, want)
		}
	}
}

// TestEncodeEventRefusesOthers: what has no wire format is an error, not
// an empty body sent to a merchant.
func TestEncodeEventRefusesOthers(t *testing.T) {
	for _, v := range []any{nil, &payment.Webhook{}, payment.Charge{}} {
		if got, err := univapay.EncodeEvent(v); err == nil {
			t.Errorf("EncodeEvent(%T) = %s, want an error", v, got)
		}
	}
}

// TestEmptyListHasItems: an empty page's items are [], never null (the
// SDKs map over them).
func TestEmptyListHasItems(t *testing.T) {
	got, err := json.Marshal(univapay.ListOf(payment.Page[*payment.Charge]{}, univapay.ChargeOf))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"items":[],"has_more":false}`; string(got) != want {
		t.Errorf("empty list = %s, want %s", got, want)
	}
}

// BenchmarkEncodeEvent is what rendering a webhook's body costs:
//
//	go test -run '^$' -bench Encode -benchmem ./server/univapay/
func BenchmarkEncodeEvent(b *testing.B) {
	at := time.Date(2026, 11, 24, 4, 0, 0, 123456000, time.UTC)
	charged := int64(1000)
	ch := &payment.Charge{
		ID: payment.NewID(), StoreID: payment.NewID(), MerchantID: payment.NewID(), TokenID: payment.NewID(),
		TokenType: payment.OneTime, Mode: payment.ModeTest, RequestedAmount: 1000, Currency: "JPY",
		ChargedAmount: &charged, Status: payment.ChargeSuccessful, Metadata: payment.Metadata{},
		CreatedOn: at, UpdatedOn: at.Add(time.Second),
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := univapay.EncodeEvent(ch); err != nil {
			b.Fatal(err)
		}
	}
}
