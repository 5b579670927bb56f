package api

import (
	"encoding/json"
	"fmt"

	"github.com/kessai/kessai/server/payment"
)

// EncodeEvent renders an event's resource exactly as a GET of it answers
// (payment.Config.EncodeEvent): a webhook's data is the API's own view.
func EncodeEvent(resource any) (json.RawMessage, error) {
	var v any
	switch r := resource.(type) {
	case *payment.TransactionToken:
		v = toWireToken(r)
	case *payment.Charge:
		v = toWireCharge(r)
	case *payment.Refund:
		v = toWireRefund(r)
	case *payment.Cancel:
		v = toWireCancel(r)
	case *payment.Subscription:
		v = toWireSubscription(r)
	default:
		return nil, fmt.Errorf("api: no wire format for an event's %T", resource)
	}
	return json.Marshal(v)
}
