package storagetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
)

// Events and deliveries, as package payment relies on them:
//
//   - Event(id) gives back every field as written, Data byte for byte (it
//     is what a GET of the resource answered: key order, escapes and the
//     text of numbers included); an unknown id is NOT_FOUND.
//   - ListEvents(f, limit) returns, oldest first (by id, the order of
//     creation), at most limit events of f.MerchantID, of f.StoreID unless
//     it is uuid.Nil, of f.Mode, whose id is greater than f.After (an
//     exclusive bound, not necessarily an event of the list; uuid.Nil: from
//     the first), and of f.ResourceID unless it is uuid.Nil. A limit of 0
//     returns none.
//   - Delivery(id) gives back every field as written; UpdateDelivery writes
//     every field but deliveryFixed, a redelivery's zeros and absent
//     DeliveredOn included. DeliveryFor(webhook, event) is the delivery of
//     that event to that webhook, NOT_FOUND when there is none.
//   - ListDeliveries(webhook) is the webhook's log, no other webhook's,
//     paged as the other lists are (newest first by default).
//   - All of it runs in the caller's transaction: rolled back, it leaves
//     nothing.

// newEvent is an event of the store with every field set. Its data is
// JSON as the API writes it, which an engine that parses and rewrites
// JSON would change: keys not in sorted order, escaped characters,
// non-ASCII text, an integer no float64 holds and a decimal with a
// trailing zero.
func newEvent(st *payment.Store, mode payment.Mode, name string, i int) *payment.Event {
	id, resource := payment.NewID(), payment.NewID()
	data := fmt.Sprintf(`{"id":"%s","store_id":"%s","status":"successful","amount":12345678901234567890,`+
		`"rate":-1.50,"descriptor":"\u003cb\u003e決済 \"%d\"","metadata":{"z":1,"a":[true,null]},"object":"charge"}`,
		resource, st.ID, i)
	return &payment.Event{
		ID: id, MerchantID: st.MerchantID, StoreID: st.ID, Mode: mode, Name: name, ResourceID: resource,
		Data: json.RawMessage(data), CreatedOn: at(i),
	}
}

func createEvents(t *testing.T, s payment.Storage, es ...*payment.Event) {
	t.Helper()
	update(t, s, func(ctx context.Context, tx payment.Tx) error {
		for _, e := range es {
			if err := tx.CreateEvent(ctx, e); err != nil {
				return err
			}
		}
		return nil
	})
}

func readEvent(t *testing.T, s payment.Storage, id uuid.UUID) *payment.Event {
	t.Helper()
	var e *payment.Event
	view(t, s, func(ctx context.Context, tx payment.Tx) error {
		var err error
		e, err = tx.Event(ctx, id)
		return err
	})
	return e
}

func checkNoEvent(t *testing.T, s payment.Storage, id uuid.UUID) {
	t.Helper()
	view(t, s, func(ctx context.Context, tx payment.Tx) error {
		if e, err := tx.Event(ctx, id); !payment.IsNotFound(err) {
			t.Errorf("Event(%s) = %+v, %v (code %s); want NOT_FOUND", id, e, err, payment.ErrorCode(err))
		}
		return nil
	})
}

func eventID(e *payment.Event) uuid.UUID { return e.ID }

func listEvents(t *testing.T, s payment.Storage, f payment.EventFilter, limit int) []*payment.Event {
	t.Helper()
	var es []*payment.Event
	view(t, s, func(ctx context.Context, tx payment.Tx) error {
		var err error
		es, err = tx.ListEvents(ctx, f, limit)
		return err
	})
	return es
}

// newDelivery is a delivery of the event to the webhook with every field
// set (a successful one with a last error: the engine stores what it is
// given).
func newDelivery(e *payment.Event, w *payment.Webhook, i int) *payment.Delivery {
	delivered := at(i + 2)
	return &payment.Delivery{
		ID: payment.NewID(), EventID: e.ID, WebhookID: w.ID, MerchantID: e.MerchantID, StoreID: e.StoreID,
		Status: payment.DeliverySuccessful, Attempts: 3 + i, LastError: fmt.Sprintf(`the receiver answered 503 "busy" %d — 再試行`, i),
		LastStatus: 503, CreatedOn: at(i), UpdatedOn: at(i + 1), DeliveredOn: &delivered,
	}
}

// deliveryFixed are the delivery's fields an update never changes: what it
// delivers, where, for whom, and when it was made.
var deliveryFixed = []string{"ID", "EventID", "WebhookID", "MerchantID", "StoreID", "CreatedOn"}

// changedDelivery is d with every field but deliveryFixed changed.
func changedDelivery(d *payment.Delivery) *payment.Delivery {
	c := *d
	delivered := at(1002)
	c.Status, c.Attempts, c.LastError, c.LastStatus = payment.DeliveryFailed, 10, "dial tcp: connection refused", 410
	c.UpdatedOn, c.DeliveredOn = at(1001), &delivered
	return &c
}

func createDeliveries(t *testing.T, s payment.Storage, ds ...*payment.Delivery) {
	t.Helper()
	update(t, s, func(ctx context.Context, tx payment.Tx) error {
		for _, d := range ds {
			if err := tx.CreateDelivery(ctx, d); err != nil {
				return err
			}
		}
		return nil
	})
}

func readDelivery(t *testing.T, s payment.Storage, id uuid.UUID) *payment.Delivery {
	t.Helper()
	var d *payment.Delivery
	view(t, s, func(ctx context.Context, tx payment.Tx) error {
		var err error
		d, err = tx.Delivery(ctx, id)
		return err
	})
	return d
}

func deliveryFor(t *testing.T, s payment.Storage, webhookID, eventID uuid.UUID) *payment.Delivery {
	t.Helper()
	var d *payment.Delivery
	view(t, s, func(ctx context.Context, tx payment.Tx) error {
		var err error
		d, err = tx.DeliveryFor(ctx, webhookID, eventID)
		return err
	})
	return d
}

func checkNoDelivery(t *testing.T, s payment.Storage, id uuid.UUID) {
	t.Helper()
	view(t, s, func(ctx context.Context, tx payment.Tx) error {
		if d, err := tx.Delivery(ctx, id); !payment.IsNotFound(err) {
			t.Errorf("Delivery(%s) = %+v, %v (code %s); want NOT_FOUND", id, d, err, payment.ErrorCode(err))
		}
		return nil
	})
}

func checkNoDeliveryFor(t *testing.T, s payment.Storage, webhookID, eventID uuid.UUID) {
	t.Helper()
	view(t, s, func(ctx context.Context, tx payment.Tx) error {
		if d, err := tx.DeliveryFor(ctx, webhookID, eventID); !payment.IsNotFound(err) {
			t.Errorf("DeliveryFor(%s, %s) = %+v, %v (code %s); want NOT_FOUND", webhookID, eventID, d, err, payment.ErrorCode(err))
		}
		return nil
	})
}

func deliveryID(d *payment.Delivery) uuid.UUID { return d.ID }

func listDeliveries(t *testing.T, s payment.Storage, webhookID uuid.UUID, p payment.ListParams) payment.Page[*payment.Delivery] {
	t.Helper()
	var page payment.Page[*payment.Delivery]
	view(t, s, func(ctx context.Context, tx payment.Tx) error {
		var err error
		page, err = tx.ListDeliveries(ctx, webhookID, p)
		return err
	})
	return page
}

func testEvents(t *testing.T, s payment.Storage) {
	w := newTenants(t, s)
	e := newEvent(w.st, payment.ModeLive, payment.EventChargeFinished, 1)
	requireNoZeroFields(t, e)
	other := newEvent(w.otherSt, payment.ModeTest, payment.EventTokenCreated, 2)
	createEvents(t, s, e, other)
	checkSame(t, readEvent(t, s, e.ID), e)
	checkSame(t, readEvent(t, s, other.ID), other)
	if got := readEvent(t, s, e.ID); string(got.Data) != string(e.Data) {
		t.Errorf("Data = %s\nwant %s", got.Data, e.Data)
	}

	t.Run("NotFound", func(t *testing.T) {
		hook := newWebhook(w.m.ID, w.st.ID, payment.ModeLive, 3)
		createWebhooks(t, s, hook)
		d := newDelivery(e, hook, 4)
		createDeliveries(t, s, d)
		for _, id := range []uuid.UUID{payment.NewID(), uuid.Nil, hook.ID, d.ID, w.st.ID} {
			checkNoEvent(t, s, id)
		}
	})
	t.Run("DuplicateID", func(t *testing.T) {
		again := newEvent(w.st2, payment.ModeTest, payment.EventRefundFinished, 5)
		again.ID = e.ID
		if err := s.Update(t.Context(), func(tx payment.Tx) error { return tx.CreateEvent(t.Context(), again) }); err == nil {
			t.Fatal("creating a second event with the same id succeeded")
		}
		checkSame(t, readEvent(t, s, e.ID), e)
	})
}

// testListEvents: the feed of a merchant or a store, of one mode, oldest
// first after an event, at most limit.
func testListEvents(t *testing.T, s payment.Storage) {
	w := newTenants(t, s)
	live, test := payment.ModeLive, payment.ModeTest
	// all in creation order; stored newest first, so that the order of
	// insertion is no answer.
	var all []*payment.Event
	resources := []uuid.UUID{payment.NewID(), payment.NewID(), payment.NewID(), payment.NewID(), payment.NewID(),
		payment.NewID(), uuid.Nil}
	for i := range 30 {
		st, mode := w.st, live
		switch i % 5 {
		case 2:
			st = w.st2
		case 3:
			mode = test
		case 4:
			st = w.otherSt
		}
		e := newEvent(st, mode, payment.EventChargeUpdated, i)
		// Seven resources, each with events in every scope (a filter on
		// the resource alone would find another tenant's), and one event
		// that tells of none.
		e.ResourceID = resources[i%len(resources)]
		all = append(all, e)
	}
	createEvents(t, s, reversedEvents(all)...)

	// selects is the rule: f's events after f.After, oldest first, at most
	// limit.
	selects := func(f payment.EventFilter, limit int) []*payment.Event {
		out := []*payment.Event{}
		for _, e := range all {
			if e.MerchantID == f.MerchantID && (f.StoreID == uuid.Nil || e.StoreID == f.StoreID) && e.Mode == f.Mode &&
				(f.ResourceID == uuid.Nil || e.ResourceID == f.ResourceID) && e.ID.String() > f.After.String() &&
				len(out) < limit {
				out = append(out, e)
			}
		}
		return out
	}
	check := func(t *testing.T, f payment.EventFilter, limit int, want []*payment.Event) {
		t.Helper()
		got := listEvents(t, s, f, limit)
		gotIDs, wantIDs := make([]uuid.UUID, len(got)), make([]uuid.UUID, len(want))
		for i, e := range got {
			gotIDs[i] = e.ID
		}
		for i, e := range want {
			wantIDs[i] = e.ID
		}
		if !slices.Equal(gotIDs, wantIDs) {
			t.Fatalf("ListEvents(%+v, %d) = %v\nwant %v", f, limit, gotIDs, wantIDs)
		}
		for i := range got {
			checkSame(t, got[i], want[i])
		}
	}
	merchantLive := selects(payment.EventFilter{MerchantID: w.m.ID, Mode: live}, 100)
	if len(merchantLive) < 12 {
		t.Fatalf("the fixture has %d live events of the merchant", len(merchantLive))
	}
	m, st := w.m.ID, w.st.ID
	cases := []struct {
		name  string
		f     payment.EventFilter
		limit int
		none  bool
	}{
		{name: "Merchant", f: payment.EventFilter{MerchantID: m, Mode: live}, limit: 100},
		{name: "MerchantTest", f: payment.EventFilter{MerchantID: m, Mode: test}, limit: 100},
		{name: "Store", f: payment.EventFilter{MerchantID: m, StoreID: st, Mode: live}, limit: 100},
		{name: "OtherStore", f: payment.EventFilter{MerchantID: m, StoreID: w.st2.ID, Mode: live}, limit: 100},
		{name: "StoreTest", f: payment.EventFilter{MerchantID: m, StoreID: st, Mode: test}, limit: 100},
		{name: "OtherMerchant", f: payment.EventFilter{MerchantID: w.other.ID, Mode: live}, limit: 100},
		{name: "Limit", f: payment.EventFilter{MerchantID: m, Mode: live}, limit: 5},
		{name: "LimitOne", f: payment.EventFilter{MerchantID: m, StoreID: st, Mode: live}, limit: 1},
		{name: "LimitExactlyAll", f: payment.EventFilter{MerchantID: m, Mode: live}, limit: len(merchantLive)},
		{name: "After", f: payment.EventFilter{MerchantID: m, Mode: live, After: merchantLive[4].ID}, limit: 100},
		{name: "AfterWithLimit", f: payment.EventFilter{MerchantID: m, Mode: live, After: merchantLive[4].ID}, limit: 3},
		{name: "AfterInStore", f: payment.EventFilter{MerchantID: m, StoreID: st, Mode: live, After: merchantLive[2].ID}, limit: 100},
		// After is a bound, not necessarily an event of the list: here
		// another merchant's and another mode's.
		{name: "AfterOtherMerchantsEvent", f: payment.EventFilter{MerchantID: m, Mode: live, After: all[14].ID}, limit: 100},
		{name: "AfterTestEvent", f: payment.EventFilter{MerchantID: m, Mode: live, After: all[8].ID}, limit: 100},
		{name: "AfterLast", f: payment.EventFilter{MerchantID: m, Mode: live, After: merchantLive[len(merchantLive)-1].ID},
			limit: 100, none: true},
		{name: "AfterNewer", f: payment.EventFilter{MerchantID: m, Mode: live, After: payment.NewID()}, limit: 100, none: true},
		{name: "LimitZero", f: payment.EventFilter{MerchantID: m, Mode: live}, limit: 0, none: true},
		{name: "StoreOfOtherMerchant", f: payment.EventFilter{MerchantID: m, StoreID: w.otherSt.ID, Mode: live}, limit: 100, none: true},
		{name: "UnknownMerchant", f: payment.EventFilter{MerchantID: payment.NewID(), Mode: live}, limit: 100, none: true},
		{name: "Resource", f: payment.EventFilter{MerchantID: m, Mode: live, ResourceID: resources[0]}, limit: 100},
		{name: "ResourceInStore", f: payment.EventFilter{MerchantID: m, StoreID: st, Mode: live, ResourceID: resources[1]}, limit: 100},
		{name: "ResourceTest", f: payment.EventFilter{MerchantID: m, Mode: test, ResourceID: resources[3]}, limit: 100},
		{name: "ResourceWithLimit", f: payment.EventFilter{MerchantID: m, Mode: live, ResourceID: resources[2]}, limit: 1},
		{name: "ResourceAfter", f: payment.EventFilter{MerchantID: m, Mode: live, ResourceID: resources[0], After: merchantLive[0].ID},
			limit: 100},
		{name: "ResourceOfOtherMerchant", f: payment.EventFilter{MerchantID: w.other.ID, Mode: live, ResourceID: resources[4]},
			limit: 100},
		{name: "UnknownResource", f: payment.EventFilter{MerchantID: m, Mode: live, ResourceID: payment.NewID()}, limit: 100,
			none: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := selects(c.f, c.limit)
			if len(want) == 0 != c.none {
				t.Fatalf("the case selects %d events of the fixture", len(want))
			}
			if len(want) == len(all) {
				t.Fatal("the case selects every event of the fixture: it proves nothing")
			}
			check(t, c.f, c.limit, want)
		})
	}
	t.Run("Follow", func(t *testing.T) {
		// Read as kessai listen does: four at a time, each after the last.
		f := payment.EventFilter{MerchantID: m, Mode: live}
		var got []*payment.Event
		for range 100 {
			page := listEvents(t, s, f, 4)
			if len(page) > 4 {
				t.Fatalf("%d events with a limit of 4", len(page))
			}
			if len(page) == 0 {
				break
			}
			got = append(got, page...)
			f.After = page[len(page)-1].ID
		}
		if !slices.EqualFunc(got, merchantLive, func(a, b *payment.Event) bool { return a.ID == b.ID }) {
			t.Errorf("following the feed read %d events, want the merchant's %d in order", len(got), len(merchantLive))
		}
		// A later event follows.
		late := newEvent(w.st2, live, payment.EventRefundFinished, 40)
		createEvents(t, s, late)
		check(t, f, 4, []*payment.Event{late})
	})
}

func reversedEvents(es []*payment.Event) []*payment.Event {
	out := slices.Clone(es)
	slices.Reverse(out)
	return out
}

func testDeliveries(t *testing.T, s payment.Storage) {
	w := newTenants(t, s)
	hook, other := newWebhook(w.m.ID, w.st.ID, payment.ModeLive, 1), newWebhook(w.m.ID, uuid.Nil, payment.ModeLive, 2)
	createWebhooks(t, s, hook, other)
	e1, e2 := newEvent(w.st, payment.ModeLive, payment.EventChargeFinished, 3), newEvent(w.st, payment.ModeLive, payment.EventRefundFinished, 4)
	createEvents(t, s, e1, e2)
	d := newDelivery(e1, hook, 5)
	requireNoZeroFields(t, d)
	// The same event to the other webhook, and another event to hook.
	toOther, second := newDelivery(e1, other, 6), newDelivery(e2, hook, 7)
	createDeliveries(t, s, d, toOther, second)
	checkSame(t, readDelivery(t, s, d.ID), d)
	checkSame(t, readDelivery(t, s, toOther.ID), toOther)
	checkSame(t, readDelivery(t, s, second.ID), second)

	t.Run("DeliveryFor", func(t *testing.T) {
		checkSame(t, deliveryFor(t, s, hook.ID, e1.ID), d)
		checkSame(t, deliveryFor(t, s, other.ID, e1.ID), toOther)
		checkSame(t, deliveryFor(t, s, hook.ID, e2.ID), second)
		checkNoDeliveryFor(t, s, other.ID, e2.ID) // that event was never sent to that webhook
		checkNoDeliveryFor(t, s, e1.ID, hook.ID)  // the arguments the wrong way round
		checkNoDeliveryFor(t, s, hook.ID, d.ID)
		checkNoDeliveryFor(t, s, payment.NewID(), e1.ID)
		checkNoDeliveryFor(t, s, hook.ID, payment.NewID())
		checkNoDeliveryFor(t, s, uuid.Nil, uuid.Nil)
	})
	t.Run("NotFound", func(t *testing.T) {
		for _, id := range []uuid.UUID{payment.NewID(), uuid.Nil, e1.ID, hook.ID} {
			checkNoDelivery(t, s, id)
		}
	})
	t.Run("DuplicateID", func(t *testing.T) {
		again := newDelivery(e2, other, 8)
		again.ID = d.ID
		if err := s.Update(t.Context(), func(tx payment.Tx) error { return tx.CreateDelivery(t.Context(), again) }); err == nil {
			t.Fatal("creating a second delivery with the same id succeeded")
		}
		checkSame(t, readDelivery(t, s, d.ID), d)
		checkNoDeliveryFor(t, s, other.ID, e2.ID)
	})
	t.Run("Update", func(t *testing.T) {
		changed := changedDelivery(d)
		requireAllChanged(t, d, changed, deliveryFixed...)
		update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.UpdateDelivery(ctx, changed) })
		checkSame(t, readDelivery(t, s, d.ID), changed)
		checkSame(t, deliveryFor(t, s, hook.ID, e1.ID), changed)
		checkSame(t, readDelivery(t, s, toOther.ID), toOther)
		checkSame(t, readDelivery(t, s, second.ID), second)
	})
	t.Run("Redeliver", func(t *testing.T) {
		// What RedeliverEvent writes: pending again, no attempt, no error,
		// no status, not delivered.
		again := *second
		again.Status, again.Attempts, again.LastError, again.LastStatus, again.DeliveredOn = payment.DeliveryPending, 0, "", 0, nil
		again.UpdatedOn = at(2000)
		update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.UpdateDelivery(ctx, &again) })
		got := readDelivery(t, s, second.ID)
		checkSame(t, got, &again)
		if got.DeliveredOn != nil {
			t.Errorf("DeliveredOn = %s after it was cleared, want none", got.DeliveredOn.Format(time.RFC3339Nano))
		}
	})
}

// testListDeliveries: a webhook's log, no other webhook's, paged as the
// other lists are.
func testListDeliveries(t *testing.T, s payment.Storage) {
	w := newTenants(t, s)
	hook := newWebhook(w.m.ID, w.st.ID, payment.ModeLive, 1)
	other := newWebhook(w.m.ID, uuid.Nil, payment.ModeLive, 2)
	foreign := newWebhook(w.other.ID, w.otherSt.ID, payment.ModeLive, 3)
	createWebhooks(t, s, hook, other, foreign)
	var asc, otherIDs []uuid.UUID
	all := map[uuid.UUID]*payment.Delivery{}
	for i := range 27 {
		e := newEvent(w.st, payment.ModeLive, payment.EventChargeFinished, 10+i)
		ds := []*payment.Delivery{newDelivery(e, hook, i)}
		asc = append(asc, ds[0].ID)
		if i%3 == 0 {
			ds = append(ds, newDelivery(e, other, i))
			otherIDs = append(otherIDs, ds[1].ID)
		}
		fe := newEvent(w.otherSt, payment.ModeLive, payment.EventChargeFinished, 10+i)
		if i%4 == 0 {
			ds = append(ds, newDelivery(fe, foreign, i))
		}
		createEvents(t, s, e, fe)
		// The other webhook's delivery of the event first: the order of
		// insertion is no answer.
		slices.Reverse(ds)
		createDeliveries(t, s, ds...)
		for _, d := range ds {
			all[d.ID] = d
		}
	}
	list := func(webhookID uuid.UUID) func(t *testing.T, p payment.ListParams) payment.Page[*payment.Delivery] {
		return func(t *testing.T, p payment.ListParams) payment.Page[*payment.Delivery] {
			t.Helper()
			page := listDeliveries(t, s, webhookID, p)
			for _, got := range page.Items {
				if want, ok := all[got.ID]; ok {
					checkSame(t, got, want)
				}
			}
			return page
		}
	}
	checkPaging(t, asc, list(hook.ID), deliveryID)
	t.Run("OtherWebhook", func(t *testing.T) {
		checkPage(t, pageCheck{want: reversed(otherIDs), total: intp(len(otherIDs))},
			list(other.ID)(t, payment.ListParams{Limit: payment.MaxLimit}), deliveryID)
	})
	t.Run("UnknownWebhook", func(t *testing.T) {
		for _, id := range []uuid.UUID{payment.NewID(), uuid.Nil, w.st.ID} {
			checkPage(t, pageCheck{want: []uuid.UUID{}, total: intp(0)}, list(id)(t, payment.ListParams{Limit: 10}), deliveryID)
		}
	})
}

// testWebhookRollback: webhooks, events and deliveries are written in the
// caller's transaction. Creations that roll back leave nothing, and an
// update or a deletion that rolls back leaves the rows as they were.
func testWebhookRollback(t *testing.T, s payment.Storage) {
	w := newTenants(t, s)
	kept, doomed := newWebhook(w.m.ID, w.st.ID, payment.ModeLive, 1), newWebhook(w.m.ID, uuid.Nil, payment.ModeLive, 2)
	createWebhooks(t, s, kept, doomed)
	e := newEvent(w.st, payment.ModeLive, payment.EventChargeFinished, 3)
	createEvents(t, s, e)
	keptD, doomedD := newDelivery(e, kept, 4), newDelivery(e, doomed, 5)
	createDeliveries(t, s, keptD, doomedD)

	created := newWebhook(w.m.ID, w.st.ID, payment.ModeLive, 6)
	newEv := newEvent(w.st, payment.ModeLive, payment.EventRefundFinished, 7)
	newD := newDelivery(newEv, created, 8)
	changed, changedD := changedWebhook(kept), changedDelivery(keptD)
	feed := payment.EventFilter{MerchantID: w.m.ID, Mode: payment.ModeLive}
	err := s.Update(t.Context(), func(tx payment.Tx) error {
		ctx := t.Context()
		for _, step := range []func() error{
			func() error { return tx.CreateWebhook(ctx, created) },
			func() error { return tx.UpdateWebhook(ctx, changed) },
			func() error { return tx.DeleteWebhook(ctx, doomed.ID) },
			func() error { return tx.CreateEvent(ctx, newEv) },
			func() error { return tx.CreateDelivery(ctx, newD) },
			func() error { return tx.UpdateDelivery(ctx, changedD) },
			func() error {
				// A transaction sees what it wrote.
				if _, err := tx.Webhook(ctx, doomed.ID); !payment.IsNotFound(err) {
					return fmt.Errorf("inside the transaction the deleted webhook reads %v", err)
				}
				if _, err := tx.Delivery(ctx, doomedD.ID); !payment.IsNotFound(err) {
					return fmt.Errorf("inside the transaction the deleted webhook's delivery reads %v", err)
				}
				hooks, err := tx.ActiveWebhooks(ctx, w.m.ID, w.st.ID, payment.ModeLive)
				if err != nil {
					return err
				}
				if len(hooks) != 1 || hooks[0].ID != created.ID {
					return fmt.Errorf("inside the transaction ActiveWebhooks found %d webhooks, want only the new one", len(hooks))
				}
				evs, err := tx.ListEvents(ctx, feed, 10)
				if err != nil {
					return err
				}
				if len(evs) != 2 || evs[1].ID != newEv.ID {
					return fmt.Errorf("inside the transaction ListEvents found %d events, want the new one after the old", len(evs))
				}
				_, err = tx.DeliveryFor(ctx, created.ID, newEv.ID)
				return err
			},
		} {
			if err := step(); err != nil {
				return err
			}
		}
		return errRollback
	})
	if !errors.Is(err, errRollback) {
		t.Fatalf("Update returned %v, want the function's error", err)
	}
	checkNoWebhook(t, s, created.ID)
	checkNoEvent(t, s, newEv.ID)
	checkNoDelivery(t, s, newD.ID)
	checkSame(t, readWebhook(t, s, kept.ID), kept)
	checkSame(t, readWebhook(t, s, doomed.ID), doomed)
	checkSame(t, readDelivery(t, s, keptD.ID), keptD)
	checkSame(t, readDelivery(t, s, doomedD.ID), doomedD)
	checkSame(t, deliveryFor(t, s, doomed.ID, e.ID), doomedD)
	checkActive(t, s, w.m.ID, w.st.ID, payment.ModeLive, kept, doomed)
	if got := listEvents(t, s, feed, 10); len(got) != 1 || got[0].ID != e.ID {
		t.Errorf("after rollback ListEvents found %d events, want only the first", len(got))
	}
}
