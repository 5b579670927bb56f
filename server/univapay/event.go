package univapay

import (
	"encoding/json"
	"fmt"

	"github.com/kessai/kessai/server/payment"
)

// EncodeEvent renders an event's resource exactly as a GET of it answers
// (a payment.EventEncoder, which the gateway gives the service): a
// webhook's data is the API's own view.
func EncodeEvent(resource any) (json.RawMessage, error) {
	var v any
	switch r := resource.(type) {
	case *payment.TransactionToken:
		v = TokenOf(r)
	case *payment.Charge:
		v = ChargeOf(r)
	case *payment.Refund:
		v = RefundOf(r)
	case *payment.Cancel:
		v = CancelOf(r)
	case *payment.Subscription:
		v = SubscriptionOf(r)
	case *payment.TransferStatus:
		v = TransferStatusOf(r)
	default:
		return nil, fmt.Errorf("univapay: no wire format for an event's %T", resource)
	}
	return json.Marshal(v)
}

// The service takes EncodeEvent as its encoder.
var _ payment.EventEncoder = EncodeEvent
