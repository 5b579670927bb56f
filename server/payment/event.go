package payment

import (
	"context"
	"encoding/json"
	"reflect"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
)

// Event is a change a merchant is told of (UnivaPay's webhook event): its
// name and the resource as the API showed it right after the change.
type Event struct {
	ID         uuid.UUID
	MerchantID uuid.UUID
	StoreID    uuid.UUID
	Mode       Mode
	Name       string
	// ResourceID is the id of the resource the event tells of (the
	// token, charge, refund, cancel or subscription); uuid.Nil when not
	// known (an event older than the field whose data did not begin with
	// the resource's id).
	ResourceID uuid.UUID
	// Data is the resource's JSON at the time of the change: a delivery
	// retried a day later still tells what happened then.
	Data      json.RawMessage
	CreatedOn time.Time
}

// EventEncoder renders a resource (a *TransactionToken, *Charge, *Refund
// or *Cancel) as the API shows it; the HTTP API provides it, so that an
// event's data is exactly what a GET of the resource answered.
type EventEncoder func(resource any) (json.RawMessage, error)

// DeliveryStatus is where a delivery is.
type DeliveryStatus string

// The delivery statuses: being tried, delivered, given up.
const (
	DeliveryPending    DeliveryStatus = "pending"
	DeliverySuccessful DeliveryStatus = "successful"
	DeliveryFailed     DeliveryStatus = "failed"
)

// Delivery is one event on its way to one webhook. It is created in the
// transaction of the change (the outbox) with a work item that sends it,
// so a change is never committed without its announcement, nor announced
// without being committed.
type Delivery struct {
	ID         uuid.UUID
	EventID    uuid.UUID
	WebhookID  uuid.UUID
	MerchantID uuid.UUID
	StoreID    uuid.UUID
	Status     DeliveryStatus
	// Attempts counts the sends made so far (successful or not).
	Attempts int
	// LastError is why the last attempt failed; LastStatus is its HTTP
	// status (0 when none came back).
	LastError  string
	LastStatus int
	CreatedOn  time.Time
	UpdatedOn  time.Time
	// DeliveredOn is when a receiver accepted it.
	DeliveredOn *time.Time
}

// EventFilter selects events: a merchant's (of one store, unless StoreID
// is uuid.Nil) of one mode, after the event After (uuid.Nil: from the
// first), and only those of the resource ResourceID unless it is
// uuid.Nil.
type EventFilter struct {
	MerchantID uuid.UUID
	StoreID    uuid.UUID
	Mode       Mode
	After      uuid.UUID
	ResourceID uuid.UUID
}

// WorkWebhookDelivery sends a Delivery (the item's object).
const WorkWebhookDelivery WorkKind = "webhook_delivery"

// eventingStorage is the Service's storage: every read-write transaction
// goes through an eventTx, which turns the state changes it writes into
// events in that same transaction. No code path that changes a payment can
// forget to announce it.
type eventingStorage struct {
	Storage
	s *Service
}

func (e *eventingStorage) Update(ctx context.Context, fn func(Tx) error) error {
	var queued, work atomic.Bool
	var changed []uuid.UUID
	var settled []settlement
	// A stopwatch, not a rule's time: the injected clock may stand still.
	start := time.Now()
	err := e.Storage.Update(ctx, func(tx Tx) error {
		queued.Store(false)
		work.Store(false)
		changed, settled = changed[:0], settled[:0]
		return fn(&eventTx{Tx: tx, s: e.s, queued: &queued, work: &work, changed: &changed, settled: &settled})
	})
	e.s.meter.Transaction(TransactionUpdate, time.Since(start))
	if err == nil {
		for _, st := range settled {
			e.s.meter.Settled(st.kind, st.status, st.errorName)
		}
	}
	if err == nil && work.Load() {
		e.s.wakeWorker()
	}
	if err == nil && queued.Load() {
		e.s.events.notify()
		e.s.outbox.add(uuid.Nil, uuid.Nil, false, true)
	}
	if err == nil {
		for _, id := range changed {
			e.s.changes.notify(id)
		}
	}
	return err
}

// eventTx is a transaction that emits the events of what it writes.
type eventTx struct {
	Tx
	s      *Service
	queued *atomic.Bool
	// work: it queued work, or made some due, for the worker to wake to.
	// An event that no webhook hears queues none: waking the worker for it
	// cost an empty claim, a write of its own, per event.
	work *atomic.Bool
	// changed are objects whose long polls are woken once it commits
	// (subscriptions, which change as a consequence of their charges).
	changed *[]uuid.UUID
	// settled are the charges, refunds and cancels it moved out of
	// pending, for the Meter once it commits.
	settled *[]settlement
}

// View runs a read-only transaction, timed for the Meter.
func (e *eventingStorage) View(ctx context.Context, fn func(Tx) error) error {
	start := time.Now()
	err := e.Storage.View(ctx, fn)
	e.s.meter.Transaction(TransactionView, time.Since(start))
	return err
}

// settle notes that a charge, refund or cancel reached status.
func (t *eventTx) settle(kind string, status string, perr *PaymentError) {
	if t.settled != nil {
		*t.settled = append(*t.settled, settlement{kind, status, PaymentErrorName(perr)})
	}
}

// emit records an event and a delivery (with its work item) for each
// active webhook of the owner that hears it.
func (t *eventTx) emit(ctx context.Context, name string, merchantID, storeID uuid.UUID, mode Mode, resource any) error {
	if t.s.encodeEvent == nil {
		return nil
	}
	data, err := t.s.encodeEvent(resource)
	if err != nil {
		return err
	}
	now := t.s.clock.Now()
	ev := &Event{
		ID: NewID(), MerchantID: merchantID, StoreID: storeID, Mode: mode, Name: name,
		ResourceID: eventResourceID(resource), Data: data, CreatedOn: now,
	}
	if err := t.Tx.CreateEvent(ctx, ev); err != nil {
		return err
	}
	t.queued.Store(true)
	hooks, err := t.Tx.ActiveWebhooks(ctx, merchantID, storeID, mode)
	if err != nil {
		return err
	}
	for _, h := range hooks {
		if !h.hears(name) {
			continue
		}
		d := &Delivery{
			ID: NewID(), EventID: ev.ID, WebhookID: h.ID, MerchantID: merchantID, StoreID: storeID,
			Status: DeliveryPending, CreatedOn: now, UpdatedOn: now,
		}
		if err := t.Tx.CreateDelivery(ctx, d); err != nil {
			return err
		}
		if err := t.EnqueueWork(ctx, WorkWebhookDelivery, d.ID, now); err != nil {
			return err
		}
	}
	return nil
}

// eventResourceID is the id of a resource an event tells of.
func eventResourceID(resource any) uuid.UUID {
	switch r := resource.(type) {
	case *TransactionToken:
		return r.ID
	case *Charge:
		return r.ID
	case *Refund:
		return r.ID
	case *Cancel:
		return r.ID
	case *Subscription:
		return r.ID
	}
	return uuid.Nil
}

func (t *eventTx) EnqueueWork(ctx context.Context, kind WorkKind, id uuid.UUID, due time.Time) error {
	if err := t.Tx.EnqueueWork(ctx, kind, id, due); err != nil {
		return err
	}
	t.work.Store(true)
	return nil
}

func (t *eventTx) RescheduleWork(ctx context.Context, kind WorkKind, id uuid.UUID, due time.Time) error {
	if err := t.Tx.RescheduleWork(ctx, kind, id, due); err != nil {
		return err
	}
	t.work.Store(true)
	return nil
}

func (t *eventTx) CreateToken(ctx context.Context, tok *TransactionToken) error {
	if err := t.Tx.CreateToken(ctx, tok); err != nil {
		return err
	}
	return t.emit(ctx, EventTokenCreated, tok.MerchantID, tok.StoreID, tok.Mode, tok)
}

func (t *eventTx) UpdateToken(ctx context.Context, tok *TransactionToken) error {
	old, err := t.Tx.Token(ctx, tok.ID)
	if err != nil {
		return err
	}
	if err := t.Tx.UpdateToken(ctx, tok); err != nil {
		return err
	}
	var names []string
	if tok.ThreeDS.Status != old.ThreeDS.Status && tok.ThreeDS.Status != "" && tok.ThreeDS.Status != ThreeDSPending {
		names = append(names, EventTokenThreeDSUpdated)
	}
	if tok.CVVAuthorize.Status != old.CVVAuthorize.Status && tok.CVVAuthorize.Status != CVVAuthPending && tok.CVVAuthorize.Status != "" {
		names = append(names, EventTokenCVVAuthUpdated)
	}
	switch {
	case old.Active && !tok.Active && tok.Type == Recurring:
		names = append(names, EventRecurringTokenDelete)
	case tok.Email != old.Email || !reflect.DeepEqual(tok.Metadata, old.Metadata) || tok.Card.ExpMonth != old.Card.ExpMonth ||
		tok.Card.ExpYear != old.Card.ExpYear || !reflect.DeepEqual(tok.Card.Billing, old.Card.Billing) ||
		tok.Card.SealedCVC.KeyID != old.Card.SealedCVC.KeyID && tok.Card.SealedCVC.Data != nil:
		// What the merchant changed (PATCH): not a charge marking it used.
		names = append(names, EventTokenUpdated)
	}
	for _, n := range names {
		if err := t.emit(ctx, n, tok.MerchantID, tok.StoreID, tok.Mode, tok); err != nil {
			return err
		}
	}
	return nil
}

// chargeEvent is the event of a charge reaching status, if any: awaiting
// its shopper and authorised are updates, every end is a finish.
func chargeEvent(st ChargeStatus) string {
	switch {
	case st.Final():
		return EventChargeFinished
	case st == ChargeAuthorized || st == ChargeAwaiting:
		return EventChargeUpdated
	}
	return ""
}

func (t *eventTx) CreateCharge(ctx context.Context, ch *Charge) error {
	if err := t.Tx.CreateCharge(ctx, ch); err != nil {
		return err
	}
	if ch.Status != ChargePending {
		t.settle(SettledCharge, string(ch.Status), ch.Error)
	}
	if name := chargeEvent(ch.Status); name != "" {
		return t.emit(ctx, name, ch.MerchantID, ch.StoreID, ch.Mode, ch)
	}
	return nil
}

func (t *eventTx) UpdateCharge(ctx context.Context, ch *Charge) error {
	old, err := t.Tx.Charge(ctx, ch.ID)
	if err != nil {
		return err
	}
	if err := t.Tx.UpdateCharge(ctx, ch); err != nil {
		return err
	}
	if ch.Status == old.Status {
		return nil
	}
	t.settle(SettledCharge, string(ch.Status), ch.Error)
	if name := chargeEvent(ch.Status); name != "" {
		if err := t.emit(ctx, name, ch.MerchantID, ch.StoreID, ch.Mode, ch); err != nil {
			return err
		}
	}
	if ch.PaymentID != uuid.Nil && (ch.Status.Final() || ch.Status == ChargeAuthorized) {
		// Every end of a subscription's charge, whichever rule ended it
		// (the acquirer, 3-D Secure, an expiry, a cancel), carries its
		// subscription on in the same transaction.
		return t.s.subscriptionChargeEnded(ctx, t, ch)
	}
	return nil
}

func (t *eventTx) CreateRefund(ctx context.Context, r *Refund) error {
	if err := t.Tx.CreateRefund(ctx, r); err != nil {
		return err
	}
	if r.Status != OperationPending {
		t.settle(SettledRefund, string(r.Status), r.Error)
		return t.emit(ctx, EventRefundFinished, r.MerchantID, r.StoreID, r.Mode, r)
	}
	return nil
}

func (t *eventTx) UpdateRefund(ctx context.Context, r *Refund) error {
	old, err := t.Tx.Refund(ctx, r.StoreID, r.ChargeID, r.ID)
	if err != nil {
		return err
	}
	if err := t.Tx.UpdateRefund(ctx, r); err != nil {
		return err
	}
	if r.Status != OperationPending && old.Status == OperationPending {
		t.settle(SettledRefund, string(r.Status), r.Error)
		return t.emit(ctx, EventRefundFinished, r.MerchantID, r.StoreID, r.Mode, r)
	}
	return nil
}

func (t *eventTx) CreateCancel(ctx context.Context, cn *Cancel) error {
	if err := t.Tx.CreateCancel(ctx, cn); err != nil {
		return err
	}
	if cn.Status != OperationPending {
		t.settle(SettledCancel, string(cn.Status), cn.Error)
		return t.emit(ctx, EventCancelFinished, cn.MerchantID, cn.StoreID, cn.Mode, cn)
	}
	return nil
}

func (t *eventTx) UpdateCancel(ctx context.Context, cn *Cancel) error {
	old, err := t.Tx.Cancel(ctx, cn.StoreID, cn.ChargeID, cn.ID)
	if err != nil {
		return err
	}
	if err := t.Tx.UpdateCancel(ctx, cn); err != nil {
		return err
	}
	if cn.Status != OperationPending && old.Status == OperationPending {
		t.settle(SettledCancel, string(cn.Status), cn.Error)
		return t.emit(ctx, EventCancelFinished, cn.MerchantID, cn.StoreID, cn.Mode, cn)
	}
	return nil
}

// eventBell rings when events were committed on this instance, for the
// event streams (kessai listen) to read them at once; they also re-read on
// their own for events of other instances.
type eventBell struct {
	ch atomic.Pointer[chan struct{}]
}

func (b *eventBell) wait() <-chan struct{} {
	for {
		if c := b.ch.Load(); c != nil {
			return *c
		}
		c := make(chan struct{})
		if b.ch.CompareAndSwap(nil, &c) {
			return c
		}
	}
}

func (b *eventBell) notify() {
	if c := b.ch.Swap(nil); c != nil {
		close(*c)
	}
}
