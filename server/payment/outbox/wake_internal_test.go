package outbox

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
)

// wakeStorage is a fake storage for the wakes of DB.Update: an
// Update runs fn on a wakeTx at once.
type wakeStorage struct {
	payment.Storage
	hooks []*payment.Webhook
}

func (w *wakeStorage) Update(ctx context.Context, fn func(payment.Tx) error) error {
	return fn(&wakeTx{hooks: w.hooks})
}

// wakeTx records nothing; it answers the webhooks it was given. Any other
// method of Tx panics (nil).
type wakeTx struct {
	payment.Tx
	hooks []*payment.Webhook
}

func (*wakeTx) CreateToken(context.Context, *payment.TransactionToken) error { return nil }
func (*wakeTx) CreateEvent(context.Context, *payment.Event) error            { return nil }
func (*wakeTx) CreateDelivery(context.Context, *payment.Delivery) error      { return nil }
func (*wakeTx) InsertWork(context.Context, payment.WorkKind, uuid.UUID, time.Time) error {
	return nil
}
func (*wakeTx) MoveWorkDue(context.Context, payment.WorkKind, uuid.UUID, time.Time) error {
	return nil
}
func (t *wakeTx) ActiveWebhooks(context.Context, uuid.UUID, uuid.UUID, payment.Mode) ([]*payment.Webhook, error) {
	return t.hooks, nil
}

// createToken writes a token and announces it, as CreateToken does.
func createToken(ctx context.Context, tx *Tx, tok *payment.TransactionToken) error {
	if err := tx.CreateToken(ctx, tok); err != nil {
		return err
	}
	return tx.Announce(ctx, payment.EventTokenCreated, tok)
}

type fixedClock time.Time

func (c fixedClock) Now() time.Time { return time.Time(c) }

// TestWorkerWokenOnlyForWork: an Update wakes the worker when it queued
// work or made some due, not for an event that no webhook hears (the
// worker would claim nothing, in a write of its own); an event that a
// webhook hears queues its delivery, and wakes it.
func TestWorkerWokenOnlyForWork(t *testing.T) {
	tok := &payment.TransactionToken{ID: payment.NewID(), MerchantID: payment.NewID(), StoreID: payment.NewID(), Mode: payment.ModeTest}
	heard := &payment.Webhook{ID: payment.NewID(), Active: true}
	for trigger, event := range payment.WebhookTriggers {
		if event == payment.EventTokenCreated {
			heard.Triggers = []string{trigger}
		}
	}
	if heard.Triggers == nil {
		t.Fatal("no trigger for token.created")
	}
	deaf := &payment.Webhook{ID: payment.NewID(), Active: true}
	for _, tc := range []struct {
		name  string
		hooks []*payment.Webhook
		fn    func(*Tx) error
		wake  bool
	}{
		{"an event nobody hears", nil, func(tx *Tx) error { return createToken(t.Context(), tx, tok) }, false},
		{"an event no webhook of the store hears", []*payment.Webhook{deaf}, func(tx *Tx) error { return createToken(t.Context(), tx, tok) }, false},
		{"an event a webhook hears", []*payment.Webhook{heard}, func(tx *Tx) error { return createToken(t.Context(), tx, tok) }, true},
		{"work queued", nil, func(tx *Tx) error {
			return tx.EnqueueWork(t.Context(), payment.WorkAuthorize, payment.NewID(), time.Time{})
		}, true},
		{"work made due", nil, func(tx *Tx) error {
			return tx.RescheduleWork(t.Context(), payment.WorkSubscriptionPayment, payment.NewID(), time.Time{})
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := New(&wakeStorage{hooks: tc.hooks}, Config{
				Clock:       fixedClock(time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)),
				EncodeEvent: func(any) (json.RawMessage, error) { return json.RawMessage(`{}`), nil },
			})
			if err := db.Update(t.Context(), tc.fn); err != nil {
				t.Fatal(err)
			}
			if woken := len(db.wake) == 1; woken != tc.wake {
				t.Errorf("worker woken: %t, want %t", woken, tc.wake)
			}
		})
	}
}
