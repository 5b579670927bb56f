package payment_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/payment/services"
)

func TestMaskCardNumbers(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"/stores/x/tokens/4242424242424242", "/stores/x/tokens/[redacted]"},
		{"/charges/4242 4242 4242 4242", "/charges/[redacted]"},
		{"/charges/4242-4242-4242-4242/refunds", "/charges/[redacted]/refunds"},
		{"/amex/3782-822463-10005", "/amex/[redacted]"},
		{"/diners/30569309025904", "/diners/[redacted]"},
		// Not Luhn-valid, or too short: left alone.
		{"/charges/4242424242424241", "/charges/4242424242424241"},
		{"/charges/12345678901", "/charges/12345678901"},
		{"0f8fad5b-d9cb-469f-a165-70867728950e", "0f8fad5b-d9cb-469f-a165-70867728950e"},
		{"/stores/01a20542-0b5a-790a-b046-c0ada3848f00/charges", "/stores/01a20542-0b5a-790a-b046-c0ada3848f00/charges"},
	} {
		if got := payment.MaskCardNumbers(c.in); got != c.want {
			t.Errorf("MaskCardNumbers(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestContainsCardNumber(t *testing.T) {
	for _, c := range []struct {
		in   string
		want bool
	}{
		{"4242424242424242", true},
		{"card: 4242 4242 4242 4242, exp 12/30", true},
		{"4242-4242-4242-4242", true},
		{"3782 822463 10005", true},    // American Express, 4-6-5
		{"5555555555554444", true},     // Mastercard
		{"3530111333300000", true},     // JCB
		{"ORD4000020000000000X", true}, // glued to letters
		{"4242424242424241", false},    // Luhn fails
		{"424242424242", false},        // Visa has no 12-digit numbers
		{"202611230001234", false},     // an order number: no brand's prefix
		{"12345678901234567890", false},
		{"03-1234-5678", false},
		{"", false},
		{"0f8fad5b-d9cb-469f-a165-70867728950e", false},
		// Written out otherwise (issue 25, D6).
		{"4000020000000000@example.com", true},
		{"4000.0200.0000.0000", true},
		{"4000/0200/0000/0000", true},
		{"4000  0200\t0000 - 0000", true},
		{"4000\u00a00200\u202f0000\u30000000", true},
		{"4000\u200b0200\u2060000\ufeff00000", true},
		{"４０００ ０２００ ００００ ００００", true},
		{"٤٠٠٠٠٢٠٠٠٠٠٠٠٠٠٠", true},
		{"4 0 0 0 0 2 0 0 0 0 0 0 0 0 0 0", true},
		{"card 4000.0200.0000.0000 exp 12/30 cvc 123", true},
		{"1 / 4000 0200 0000 0000 / 12 / 30", true},
		{"aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee 4000020000000000", true},
		{"01a21f75-2502-7369-9498-2906f70ff94d", false}, // a UUID: 2502 7369 9498 2906 is not read
		{"id 01a21f75-2502-7369-9498-2906f70ff94d.", false},
		{"01a21f75-2502-7369-9498-2906f70ff94dx", true}, // not a UUID on its own
		{"4000.0200.0000.0001", false},                  // Luhn fails
		{"4000 0200 0000 00001", false},                 // 17 digits: no Visa
		{"40000200000000001", false},
		{"4000, 0200, 0000, 0000", false}, // a list
		{"4000:0200:0000:0000", false},
		{"2026/03/01 - 2027/03/01", false},
		{"+81 90-1234-5678", false},
		{"192.168.100.200", false},
	} {
		if got := payment.ContainsCardNumber(c.in); got != c.want {
			t.Errorf("ContainsCardNumber(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestValidWebURL(t *testing.T) {
	for _, c := range []struct {
		in   string
		want bool
	}{
		{"https://shop.example/done?x=1#y", true},
		{"http://127.0.0.1:8081/", true},
		{"https://[2001:db8::1]:443/", true},
		{"https://shop.example:65535/", true},
		{"javascript:alert(1)", false},
		{"data:text/html,hi", false},
		{"/relative", false},
		{"//shop.example/x", false},
		{"https://shop.example:99999/", false},
		{"https://shop.example:0/", false},
		{"https://shop.example:/", false},
		{"https://user:pw@shop.example/", false},
		{"https://shop.example/a b", false},
		{"https://shop.example/\n", false},
		{"https:///path", false},
		{"ftp://shop.example/", false},
		{"https://shop.example/" + strings.Repeat("a", 2048), false},
	} {
		if got := payment.ValidWebURL(c.in); got != c.want {
			t.Errorf("ValidWebURL(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}

// failingTokenReads is a storage engine whose token reads fail: the disk
// is gone, not the token.
type failingTokenReads struct{ payment.Storage }

func (s failingTokenReads) Update(ctx context.Context, fn func(payment.Tx) error) error {
	return s.Storage.Update(ctx, func(tx payment.Tx) error { return fn(failingTokenTx{tx}) })
}

type failingTokenTx struct{ payment.Tx }

func (failingTokenTx) Token(context.Context, uuid.UUID) (*payment.TransactionToken, error) {
	return nil, errors.New("disk I/O error")
}

// TestChargeOnUnreadableTokenIsNotNotFound: a storage error while loading
// the token was answered as NOT_FOUND, which tells a client to give up on
// a token that exists (and hides an outage from the operator).
func TestChargeOnUnreadableTokenIsNotNotFound(t *testing.T) {
	ctx := context.Background()
	f := newRulesFixture(t, payment.Config{})
	svc, caller := f.svc, f.caller
	tok, err := svc.Tokens.CreateToken(ctx, caller, payment.NewToken{PaymentType: "card", Type: payment.OneTime, Email: "a@example.com",
		Card: &payment.CardInput{Cardholder: "TARO YAMADA", Number: "4000020000000000", ExpMonth: 12, ExpYear: 2030, CVV: "123"}})
	if err != nil {
		t.Fatal(err)
	}
	broken := services.New(failingTokenReads{f.store}, f.clk, f.codec, f.cfg)
	_, err = broken.Charging.CreateCharge(ctx, caller, payment.NewCharge{TokenID: tok.ID, Amount: 1000, Currency: "JPY"})
	if err == nil || payment.IsNotFound(err) || payment.ErrorCode(err) != payment.CodeInternal {
		t.Fatalf("CreateCharge with the storage failing: %v (code %s), want an internal error", err, payment.ErrorCode(err))
	}
}

// TestEveryCreateChecksMetadata: the API parses metadata before the
// service sees it, but other callers (the link form, the worker's
// subscriptions) hand it over directly; the service checks it itself.
func TestEveryCreateChecksMetadata(t *testing.T) {
	ctx := context.Background()
	f := newRulesFixture(t, payment.Config{})
	svc, caller := f.svc, f.caller
	bad := payment.Metadata{"note": "4242 4242 4242 4242"}
	newToken := func(md payment.Metadata) (*payment.TransactionToken, error) {
		return svc.Tokens.CreateToken(ctx, caller, payment.NewToken{PaymentType: "card", Type: payment.Recurring, Email: "a@example.com", Metadata: md,
			Card: &payment.CardInput{Cardholder: "TARO YAMADA", Number: "4000020000000000", ExpMonth: 12, ExpYear: 2030, CVV: "123"}})
	}
	charge := func(tokID uuid.UUID, amount int64, capture bool, md payment.Metadata) (*payment.Charge, error) {
		return svc.Charging.CreateCharge(ctx, caller, payment.NewCharge{TokenID: tokID, Amount: amount, Currency: "JPY", Capture: &capture, Metadata: md})
	}
	tok, err := newToken(nil)
	if err != nil {
		t.Fatal(err)
	}
	paid, err := charge(tok.ID, 1000, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	auth, err := charge(tok.ID, 1001, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Work.ProcessPending(ctx, 10); err != nil {
		t.Fatal(err)
	}
	for name, create := range map[string]func() error{
		"token":  func() error { _, err := newToken(bad); return err },
		"charge": func() error { _, err := charge(tok.ID, 1002, true, bad); return err },
		"refund": func() error {
			_, err := svc.Refunds.CreateRefund(ctx, caller, uuid.Nil, paid.ID, payment.NewRefund{Amount: 1, Currency: "JPY", Metadata: bad})
			return err
		},
		"cancel": func() error {
			_, err := svc.Refunds.CreateCancel(ctx, caller, uuid.Nil, auth.ID, payment.NewCancel{Metadata: bad})
			return err
		},
	} {
		if err := create(); payment.ErrorCode(err) != payment.CodeValidation || !strings.Contains(err.Error(), payment.ReasonCardNumber) {
			t.Errorf("%s with a card number in its metadata: %v", name, err)
		}
	}
}
