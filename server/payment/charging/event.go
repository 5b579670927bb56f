package charging

import (
	"context"

	"github.com/google/uuid"
	"github.com/kessai/kessai/server/payment"
)

// An eventSubject is a resource an event can tell of: a token, charge,
// refund, cancel or subscription, which carries its id and its owner.
type eventSubject interface {
	EventOwner() (id, merchantID, storeID uuid.UUID, mode payment.Mode)
}

// announce records the event name of resource, its data the resource as
// the API shows it now, with a delivery (and the work item that sends it,
// which wakes the worker) for each active webhook of the owner that hears
// it; once the transaction commits it rings the event streams. Without an
// EventEncoder (tests of the rules alone) it records nothing.
func (w *writeTx) announce(ctx context.Context, name string, resource eventSubject) error {
	if w.s.encodeEvent == nil {
		return nil
	}
	data, err := w.s.encodeEvent(resource)
	if err != nil {
		return err
	}
	id, merchantID, storeID, mode := resource.EventOwner()
	now := w.s.clock.Now()
	ev := &payment.Event{
		ID: payment.NewID(), MerchantID: merchantID, StoreID: storeID, Mode: mode, Name: name,
		ResourceID: id, Data: data, CreatedOn: now,
	}
	if err := w.CreateEvent(ctx, ev); err != nil {
		return err
	}
	w.events = true
	hooks, err := w.ActiveWebhooks(ctx, merchantID, storeID, mode)
	if err != nil {
		return err
	}
	for _, h := range hooks {
		if !h.Hears(name) {
			continue
		}
		d := &payment.Delivery{
			ID: payment.NewID(), EventID: ev.ID, WebhookID: h.ID, MerchantID: merchantID, StoreID: storeID,
			Status: payment.DeliveryPending, CreatedOn: now, UpdatedOn: now,
		}
		if err := w.CreateDelivery(ctx, d); err != nil {
			return err
		}
		if err := w.enqueueWork(ctx, payment.WorkWebhookDelivery, d.ID, now); err != nil {
			return err
		}
	}
	return nil
}
