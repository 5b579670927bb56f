package outbox

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/kessai/kessai/server/payment"
)

// Tx is one read-write transaction of a DB and what is to be done once it
// commits. It holds the storage's Tx, which writes exactly what it is
// asked to and nothing more: every effect of a change besides its rows is
// asked for by the service code that makes the change, through the methods
// below, in the same transaction —
//
//   - Announce records an event and its webhook deliveries (the outbox),
//     and rings the event streams once committed;
//   - EnqueueWork and RescheduleWork queue work and wake the worker once
//     committed;
//   - NoteSettled tells the Meter, once committed, that a charge, refund
//     or cancel left pending;
//   - WakePolls wakes, once committed, the long polls of an object that
//     changed as a consequence of another (a subscription of its charge).
//
// The effects are gathered afresh on each run of the function (an engine
// may run it again after a conflict) and carried out only after a commit:
// nothing is told of what was rolled back.
type Tx struct {
	payment.Tx
	db *DB
	// work: it queued work, or made some due, for the worker to wake to.
	// An event that no webhook hears queues none: waking the worker for it
	// cost an empty claim, a write of its own, per event.
	work bool
	// events: it recorded events, for the event streams to read.
	events bool
	// polls are objects whose long polls are woken once it commits.
	polls []uuid.UUID
	// settled are the charges, refunds and cancels it moved out of
	// pending, for the Meter once it commits.
	settled []settlement
}

// settlement is what one transaction settled, told to the Meter once it
// has committed.
type settlement struct {
	kind, status, errorName string
}

// EnqueueWork queues an item of work due at due, and wakes the worker
// once the transaction commits. The storage's InsertWork, which writes the
// row alone, has another name so that code holding only a payment.Tx
// cannot queue work that waits for the worker's next tick: the domain
// queues work through a Tx, whose methods wake it.
func (w *Tx) EnqueueWork(ctx context.Context, kind payment.WorkKind, id uuid.UUID, due time.Time) error {
	if err := w.Tx.InsertWork(ctx, kind, id, due); err != nil {
		return err
	}
	w.work = true
	return nil
}

// RescheduleWork makes an item of work due at due (queuing it if it is
// not), and wakes the worker once the transaction commits.
func (w *Tx) RescheduleWork(ctx context.Context, kind payment.WorkKind, id uuid.UUID, due time.Time) error {
	if err := w.Tx.MoveWorkDue(ctx, kind, id, due); err != nil {
		return err
	}
	w.work = true
	return nil
}

// NoteSettled tells the Meter, once the transaction commits, that a
// charge, refund or cancel (kind: SettledCharge…) reached status.
func (w *Tx) NoteSettled(kind string, status string, perr *payment.PaymentError) {
	w.settled = append(w.settled, settlement{kind, status, payment.PaymentErrorName(perr)})
}

// WakePolls wakes the long polls of id once the transaction commits.
func (w *Tx) WakePolls(id uuid.UUID) {
	w.polls = append(w.polls, id)
}

// An EventSubject is a resource an event can tell of: a token, charge,
// refund, cancel or subscription, which carries its id and its owner.
type EventSubject interface {
	EventOwner() (id, merchantID, storeID uuid.UUID, mode payment.Mode)
}

// Announce records the event name of resource, its data the resource as
// the API shows it now, with a delivery (and the work item that sends it,
// which wakes the worker) for each active webhook of the owner that hears
// it; once the transaction commits it rings the event streams. Without an
// EventEncoder (tests of the rules alone) it records nothing.
func (w *Tx) Announce(ctx context.Context, name string, resource EventSubject) error {
	if w.db.encodeEvent == nil {
		return nil
	}
	data, err := w.db.encodeEvent(resource)
	if err != nil {
		return err
	}
	id, merchantID, storeID, mode := resource.EventOwner()
	now := w.db.clock.Now()
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
		if err := w.EnqueueWork(ctx, payment.WorkWebhookDelivery, d.ID, now); err != nil {
			return err
		}
	}
	return nil
}
