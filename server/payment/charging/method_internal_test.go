package charging

import (
	"testing"

	"github.com/kessai/kessai/server/payment"
)

// TestPaymentMethodsRegistry: each payment type is registered once and
// found by its name, "" (a charge from before wallets) is a card, an
// unknown type is refused, and every approval kind a method uses leads
// back to a method of that kind.
func TestPaymentMethodsRegistry(t *testing.T) {
	seen := map[string]bool{}
	for _, m := range paymentMethods {
		pt := m.paymentType()
		if seen[pt] {
			t.Errorf("payment type %q registered twice", pt)
		}
		seen[pt] = true
		if got, ok := lookupMethod(pt); !ok || got.paymentType() != pt {
			t.Errorf("lookupMethod(%q) = %v, %t", pt, got, ok)
		}
		if back, err := approvalMethod(m.approvalKind()); err != nil || back.approvalKind() != m.approvalKind() {
			t.Errorf("approvalMethod(%q) = %v, %v", m.approvalKind(), back, err)
		}
	}
	if m, err := methodOf(""); err != nil || m.paymentType() != payment.PaymentTypeCard {
		t.Errorf(`methodOf("") = %v, %v; want the card`, m, err)
	}
	if _, err := methodOf("barter"); err == nil {
		t.Error("methodOf of an unknown payment type found one")
	}
	if _, ok := lookupMethod(""); ok {
		t.Error(`lookupMethod("") found a method: a new token must name its payment type`)
	}
}
