package payment

import (
	"encoding/json"
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

func (t *TransactionToken) EventOwner() (uuid.UUID, uuid.UUID, uuid.UUID, Mode) {
	return t.ID, t.MerchantID, t.StoreID, t.Mode
}

func (ch *Charge) EventOwner() (uuid.UUID, uuid.UUID, uuid.UUID, Mode) {
	return ch.ID, ch.MerchantID, ch.StoreID, ch.Mode
}

func (r *Refund) EventOwner() (uuid.UUID, uuid.UUID, uuid.UUID, Mode) {
	return r.ID, r.MerchantID, r.StoreID, r.Mode
}

func (cn *Cancel) EventOwner() (uuid.UUID, uuid.UUID, uuid.UUID, Mode) {
	return cn.ID, cn.MerchantID, cn.StoreID, cn.Mode
}

func (sub *Subscription) EventOwner() (uuid.UUID, uuid.UUID, uuid.UUID, Mode) {
	return sub.ID, sub.MerchantID, sub.StoreID, sub.Mode
}
