package storagetest

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kessai/kessai/server/payment"
)

// The reflection helpers decide what the suite sees; these tests make sure
// they see it.

func TestDiffNamesTheField(t *testing.T) {
	st := &payment.Store{ID: payment.NewID()}
	want := newToken(st, 1)
	got := *want
	got.Card.Billing.PhoneNumber = &payment.Phone{CountryCode: 81, LocalNumber: "other"}
	got.Metadata = payment.Metadata{"big": 1.2345678901234567e+19}
	lastUsed := want.LastUsedOn.Truncate(time.Microsecond).UTC()
	got.LastUsedOn = &lastUsed
	got.CreatedOn = want.CreatedOn.Truncate(time.Microsecond).UTC()
	got.UpdatedOn = want.UpdatedOn.Truncate(time.Microsecond).UTC()
	lines := diff(&got, want)
	for _, field := range []string{"TransactionToken.Card.Billing.PhoneNumber.LocalNumber", "TransactionToken.Metadata"} {
		if !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, field+" = ") }) {
			t.Errorf("diff does not name %s: %q", field, lines)
		}
	}
	if len(lines) != 2 {
		t.Errorf("diff = %q, want 2 lines (a time truncated to the microsecond in UTC is equal)", lines)
	}
	if !strings.Contains(strings.Join(lines, "\n"), "big: float64(1.2345678901234567e+19)") {
		t.Errorf("diff does not show that a number came back as a float64: %q", lines)
	}
}

func TestDiffTimes(t *testing.T) {
	want := &payment.Merchant{CreatedOn: base}
	inJST := &payment.Merchant{CreatedOn: base.Truncate(time.Microsecond)}
	if lines := diff(inJST, want); len(lines) != 1 || !strings.Contains(lines[0], "want UTC") {
		t.Errorf("a time in JST: diff = %q", lines)
	}
	late := &payment.Merchant{CreatedOn: base.Truncate(time.Microsecond).Add(time.Microsecond).UTC()}
	if lines := diff(late, want); len(lines) != 1 || !strings.HasPrefix(lines[0], "Merchant.CreatedOn = ") {
		t.Errorf("a time a microsecond off: diff = %q", lines)
	}
	nanos := &payment.Merchant{CreatedOn: base.UTC()}
	if lines := diff(nanos, want); len(lines) != 1 {
		t.Errorf("a time with the nanoseconds an engine cannot keep: diff = %q", lines)
	}
}

func TestDiffEmptyAlike(t *testing.T) {
	got := &payment.Charge{Metadata: payment.Metadata{}}
	if lines := diff(got, &payment.Charge{}); len(lines) != 0 {
		t.Errorf("empty and nil metadata: diff = %q", lines)
	}
}

func TestZeroFields(t *testing.T) {
	st := &payment.Store{ID: payment.NewID(), MerchantID: payment.NewID()}
	tok := newToken(st, 1)
	tok.Card.Billing.PhoneNumber.CountryCode = 0
	tok.LastUsedOn = nil
	tok.Metadata = payment.Metadata{}
	var zero []string
	zeroFields("TransactionToken", reflect.ValueOf(tok), &zero)
	want := []string{"TransactionToken.Metadata", "TransactionToken.Card.Billing.PhoneNumber.CountryCode", "TransactionToken.LastUsedOn"}
	if !slices.Equal(zero, want) {
		t.Errorf("zero fields = %q, want %q", zero, want)
	}
}

func TestChangedFields(t *testing.T) {
	st := &payment.Store{ID: payment.NewID()}
	tok := newToken(st, 1)
	changed := changedToken(tok)
	var same, moved []string
	changedFields("", reflect.ValueOf(tok), reflect.ValueOf(changed), tokenFixed, &same, &moved)
	if len(same) != 0 || len(moved) != 0 {
		t.Fatalf("changedToken: unchanged %q, fixed but changed %q", same, moved)
	}
	changed.Card.Billing.Zip = tok.Card.Billing.Zip
	changed.Metadata = payment.Metadata{}
	for k, v := range tok.Metadata {
		changed.Metadata[k] = v
	}
	changed.Metadata["big"] = json.Number("12345678901234567890")
	changed.Mode = payment.ModeTest
	same, moved = nil, nil
	changedFields("", reflect.ValueOf(tok), reflect.ValueOf(changed), tokenFixed, &same, &moved)
	if want := []string{"Metadata", "Card.Billing.Zip"}; !slices.Equal(same, want) {
		t.Errorf("unchanged = %q, want %q", same, want)
	}
	if want := []string{"Mode"}; !slices.Equal(moved, want) {
		t.Errorf("fixed but changed = %q, want %q", moved, want)
	}
}
