package payment

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"
)

// wakeStorage is a fake storage for the wakes of Service.update: an
// Update runs fn on a wakeTx at once.
type wakeStorage struct {
	Storage
	hooks []*Webhook
}

func (w *wakeStorage) Update(ctx context.Context, fn func(Tx) error) error {
	return fn(&wakeTx{hooks: w.hooks})
}

// wakeTx records nothing; it answers the webhooks it was given. Any other
// method of Tx panics (nil).
type wakeTx struct {
	Tx
	hooks []*Webhook
}

func (*wakeTx) CreateToken(context.Context, *TransactionToken) error { return nil }
func (*wakeTx) CreateEvent(context.Context, *Event) error            { return nil }
func (*wakeTx) CreateDelivery(context.Context, *Delivery) error      { return nil }
func (*wakeTx) EnqueueWork(context.Context, WorkKind, uuid.UUID, time.Time) error {
	return nil
}
func (*wakeTx) RescheduleWork(context.Context, WorkKind, uuid.UUID, time.Time) error {
	return nil
}
func (t *wakeTx) ActiveWebhooks(context.Context, uuid.UUID, uuid.UUID, Mode) ([]*Webhook, error) {
	return t.hooks, nil
}

// createToken writes a token and announces it, as CreateToken does.
func createToken(ctx context.Context, tx *writeTx, tok *TransactionToken) error {
	if err := tx.CreateToken(ctx, tok); err != nil {
		return err
	}
	return tx.announce(ctx, EventTokenCreated, tok)
}

type fixedClock time.Time

func (c fixedClock) Now() time.Time { return time.Time(c) }

// TestWorkerWokenOnlyForWork: an Update wakes the worker when it queued
// work or made some due, not for an event that no webhook hears (the
// worker would claim nothing, in a write of its own); an event that a
// webhook hears queues its delivery, and wakes it.
func TestWorkerWokenOnlyForWork(t *testing.T) {
	tok := &TransactionToken{ID: NewID(), MerchantID: NewID(), StoreID: NewID(), Mode: ModeTest}
	heard := &Webhook{ID: NewID(), Active: true}
	for trigger, event := range webhookTriggers {
		if event == EventTokenCreated {
			heard.Triggers = []string{trigger}
		}
	}
	if heard.Triggers == nil {
		t.Fatal("no trigger for token.created")
	}
	deaf := &Webhook{ID: NewID(), Active: true}
	for _, tc := range []struct {
		name  string
		hooks []*Webhook
		fn    func(*writeTx) error
		wake  bool
	}{
		{"an event nobody hears", nil, func(tx *writeTx) error { return createToken(t.Context(), tx, tok) }, false},
		{"an event no webhook of the store hears", []*Webhook{deaf}, func(tx *writeTx) error { return createToken(t.Context(), tx, tok) }, false},
		{"an event a webhook hears", []*Webhook{heard}, func(tx *writeTx) error { return createToken(t.Context(), tx, tok) }, true},
		{"work queued", nil, func(tx *writeTx) error { return tx.enqueueWork(t.Context(), WorkAuthorize, NewID(), time.Time{}) }, true},
		{"work made due", nil, func(tx *writeTx) error {
			return tx.rescheduleWork(t.Context(), WorkSubscriptionPayment, NewID(), time.Time{})
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Service{
				clock: fixedClock(time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)), wake: make(chan struct{}, 1), meter: noMeter{},
				encodeEvent: func(any) (json.RawMessage, error) { return json.RawMessage(`{}`), nil },
				storage:     &wakeStorage{hooks: tc.hooks},
			}
			if err := s.update(t.Context(), tc.fn); err != nil {
				t.Fatal(err)
			}
			if woken := len(s.wake) == 1; woken != tc.wake {
				t.Errorf("worker woken: %t, want %t", woken, tc.wake)
			}
		})
	}
}
