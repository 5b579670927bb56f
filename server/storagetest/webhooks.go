package storagetest

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
)

// Webhooks, as package payment relies on them:
//
//   - A webhook belongs to a merchant and either one of its stores or, with
//     StoreID uuid.Nil, to the merchant itself (merchant-level); it has a
//     mode. Webhook(id) gives back every field as written, its triggers in
//     their order and its sealed signing secret byte for byte; an unknown
//     id is NOT_FOUND. UpdateWebhook writes every field but webhookFixed.
//   - DeleteWebhook deletes the webhook and its deliveries (its log); the
//     events stay, and so do the deliveries of other webhooks.
//   - ListWebhooks with OwnerOnly lists exactly one owner's webhooks: the
//     store's, or with StoreID uuid.Nil the merchant-level ones only;
//     without it, every webhook of the merchant. Mode, when set, selects
//     one mode. Inactive webhooks are listed too. Lists page as the others
//     do (newest first by default, an exclusive cursor, TotalHits on a
//     first page).
//   - WebhookURLTaken(w) reports whether another webhook (id ≠ w.ID) of
//     w's merchant, store (uuid.Nil: merchant-level) and mode, active or
//     not, has w's URL, compared without regard to ASCII case and
//     otherwise exactly: no other letters are folded and no character is
//     a wildcard.
//   - ActiveWebhooks(merchant, store, mode) are the active webhooks of that
//     mode that are the store's own or the merchant's merchant-level ones,
//     in any order; with store uuid.Nil, the merchant-level ones.
//   - All of it runs in the caller's transaction: rolled back, it leaves
//     nothing.

// newWebhook is a webhook of the owner with every field set (StoreID
// uuid.Nil: merchant-level) and a URL of its own for i.
func newWebhook(merchantID, storeID uuid.UUID, mode payment.Mode, i int) *payment.Webhook {
	return &payment.Webhook{
		ID: payment.NewID(), MerchantID: merchantID, StoreID: storeID, Mode: mode,
		// Not in the order WebhookEvents gives them, and one in the spelling
		// of the spec: they come back as written.
		Triggers:  []string{payment.EventRefundFinished, payment.EventChargeFinished, "token_three_d_s_updated"},
		URL:       fmt.Sprintf("https://shop.example/Hooks/%d?token=a%%2Fb&lang=日本語", i),
		AuthToken: fmt.Sprintf(`Bearer secret-%d "quoted" \ 決済`, i), Active: true,
		SigningSecret: payment.Sealed{KeyID: "webhook-key-2025-01", Data: []byte("\x00sealed-whsec\xff" + fmt.Sprint(i))},
		CreatedOn:     at(i), UpdatedOn: at(i + 1),
	}
}

// webhookFixed are the webhook's fields an update never changes: its
// identity, its owner and its mode. UpdateWebhook writes every other field.
var webhookFixed = []string{"ID", "MerchantID", "StoreID", "Mode", "CreatedOn"}

// changedWebhook is w with every field but webhookFixed changed.
func changedWebhook(w *payment.Webhook) *payment.Webhook {
	c := *w
	c.Triggers = []string{payment.EventTokenCreated}
	c.URL, c.AuthToken, c.Active = "https://changed.example/webhook", "Basic Y2hhbmdlZA==", !w.Active
	c.SigningSecret = payment.Sealed{KeyID: "webhook-key-2026-01", Data: []byte("resealed-whsec")}
	c.UpdatedOn = at(1001)
	return &c
}

func createWebhooks(t *testing.T, s payment.Storage, ws ...*payment.Webhook) {
	t.Helper()
	update(t, s, func(ctx context.Context, tx payment.Tx) error {
		for _, w := range ws {
			if err := tx.CreateWebhook(ctx, w); err != nil {
				return err
			}
		}
		return nil
	})
}

func readWebhook(t *testing.T, s payment.Storage, id uuid.UUID) *payment.Webhook {
	t.Helper()
	var w *payment.Webhook
	view(t, s, func(ctx context.Context, tx payment.Tx) error {
		var err error
		w, err = tx.Webhook(ctx, id)
		return err
	})
	return w
}

func checkNoWebhook(t *testing.T, s payment.Storage, id uuid.UUID) {
	t.Helper()
	view(t, s, func(ctx context.Context, tx payment.Tx) error {
		if w, err := tx.Webhook(ctx, id); !payment.IsNotFound(err) {
			t.Errorf("Webhook(%s) = %+v, %v (code %s); want NOT_FOUND", id, w, err, payment.ErrorCode(err))
		}
		return nil
	})
}

func webhookID(w *payment.Webhook) uuid.UUID { return w.ID }

func listWebhooks(t *testing.T, s payment.Storage, f payment.WebhookFilter, p payment.ListParams) payment.Page[*payment.Webhook] {
	t.Helper()
	var page payment.Page[*payment.Webhook]
	view(t, s, func(ctx context.Context, tx payment.Tx) error {
		var err error
		page, err = tx.ListWebhooks(ctx, f, p)
		return err
	})
	return page
}

func urlTaken(t *testing.T, s payment.Storage, w *payment.Webhook) bool {
	t.Helper()
	var taken bool
	view(t, s, func(ctx context.Context, tx payment.Tx) error {
		var err error
		taken, err = tx.WebhookURLTaken(ctx, w)
		return err
	})
	return taken
}

// checkActive fails unless ActiveWebhooks(merchantID, storeID, mode) are
// want, in any order, every field as written.
func checkActive(t *testing.T, s payment.Storage, merchantID, storeID uuid.UUID, mode payment.Mode, want ...*payment.Webhook) {
	t.Helper()
	var got []*payment.Webhook
	view(t, s, func(ctx context.Context, tx payment.Tx) error {
		var err error
		got, err = tx.ActiveWebhooks(ctx, merchantID, storeID, mode)
		return err
	})
	got, want = slices.Clone(got), slices.Clone(want)
	sortByID(got, webhookID)
	sortByID(want, webhookID)
	gotIDs, wantIDs := make([]uuid.UUID, len(got)), make([]uuid.UUID, len(want))
	for i, w := range got {
		gotIDs[i] = w.ID
	}
	for i, w := range want {
		wantIDs[i] = w.ID
	}
	if !slices.Equal(gotIDs, wantIDs) {
		t.Fatalf("ActiveWebhooks(%s, %s, %s) = %v\nwant %v", merchantID, storeID, mode, gotIDs, wantIDs)
	}
	for i := range got {
		checkSame(t, got[i], want[i])
	}
}

func testWebhooks(t *testing.T, s payment.Storage) {
	w := newTenants(t, s)
	hook := newWebhook(w.m.ID, w.st.ID, payment.ModeLive, 1)
	requireNoZeroFields(t, hook)
	merchantLevel := newWebhook(w.m.ID, uuid.Nil, payment.ModeTest, 2)
	inactive := newWebhook(w.m.ID, w.st2.ID, payment.ModeLive, 3)
	inactive.Active = false
	createWebhooks(t, s, hook, merchantLevel, inactive)
	for _, want := range []*payment.Webhook{hook, merchantLevel, inactive} {
		checkSame(t, readWebhook(t, s, want.ID), want)
	}

	// The log of hook and of another webhook, of the same two events.
	e1, e2 := newEvent(w.st, payment.ModeLive, payment.EventChargeFinished, 10), newEvent(w.st, payment.ModeLive, payment.EventRefundFinished, 11)
	createEvents(t, s, e1, e2)
	d1, d2, other := newDelivery(e1, hook, 12), newDelivery(e2, hook, 13), newDelivery(e1, inactive, 14)
	createDeliveries(t, s, d1, d2, other)

	t.Run("NotFound", func(t *testing.T) {
		for _, id := range []uuid.UUID{payment.NewID(), uuid.Nil, e1.ID, d1.ID, w.st.ID, w.m.ID} {
			checkNoWebhook(t, s, id)
		}
	})
	t.Run("DuplicateID", func(t *testing.T) {
		again := newWebhook(w.m.ID, w.st2.ID, payment.ModeTest, 4)
		again.ID = hook.ID
		if err := s.Update(t.Context(), func(tx payment.Tx) error { return tx.CreateWebhook(t.Context(), again) }); err == nil {
			t.Fatal("creating a second webhook with the same id succeeded")
		}
		checkSame(t, readWebhook(t, s, hook.ID), hook)
	})
	t.Run("Update", func(t *testing.T) {
		changed := changedWebhook(hook)
		requireAllChanged(t, hook, changed, webhookFixed...)
		update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.UpdateWebhook(ctx, changed) })
		checkSame(t, readWebhook(t, s, hook.ID), changed)
		checkSame(t, readWebhook(t, s, merchantLevel.ID), merchantLevel)
		checkSame(t, readWebhook(t, s, inactive.ID), inactive)
		// And back: false and true both come back as written.
		update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.UpdateWebhook(ctx, hook) })
		checkSame(t, readWebhook(t, s, hook.ID), hook)
	})
	t.Run("DeleteWithItsLog", func(t *testing.T) {
		sameURL := newWebhook(w.m.ID, w.st.ID, payment.ModeLive, 1)
		if !urlTaken(t, s, sameURL) {
			t.Fatal("setting up: the webhook's URL is not taken")
		}
		update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.DeleteWebhook(ctx, hook.ID) })
		checkNoWebhook(t, s, hook.ID)
		checkNoDelivery(t, s, d1.ID)
		checkNoDelivery(t, s, d2.ID)
		checkNoDeliveryFor(t, s, hook.ID, e1.ID)
		checkPage(t, pageCheck{want: []uuid.UUID{}, total: intp(0)},
			listDeliveries(t, s, hook.ID, payment.ListParams{Limit: 10}), deliveryID)
		checkPage(t, pageCheck{want: []uuid.UUID{inactive.ID, merchantLevel.ID}, total: intp(2)},
			listWebhooks(t, s, payment.WebhookFilter{MerchantID: w.m.ID}, payment.ListParams{Limit: 10}), webhookID)
		checkActive(t, s, w.m.ID, w.st.ID, payment.ModeLive)
		if urlTaken(t, s, sameURL) {
			t.Error("the URL of a deleted webhook is still taken")
		}
		// The events stay, and so does the other webhook's log.
		checkSame(t, readEvent(t, s, e1.ID), e1)
		checkSame(t, readEvent(t, s, e2.ID), e2)
		checkSame(t, readDelivery(t, s, other.ID), other)
		checkSame(t, deliveryFor(t, s, inactive.ID, e1.ID), other)
		checkSame(t, readWebhook(t, s, merchantLevel.ID), merchantLevel)
		checkSame(t, readWebhook(t, s, inactive.ID), inactive)
	})
}

// testListWebhooks: one owner's webhooks (a store's, or the merchant-level
// ones) or a merchant's all, of one mode or of both, never another
// merchant's; inactive ones too.
func testListWebhooks(t *testing.T, s payment.Storage) {
	w := newTenants(t, s)
	var all, own []*payment.Webhook
	add := func(merchantID, storeID uuid.UUID, mode payment.Mode, i int, active bool) *payment.Webhook {
		h := newWebhook(merchantID, storeID, mode, i)
		h.Active = active
		createWebhooks(t, s, h)
		all = append(all, h)
		return h
	}
	for i := range 27 {
		own = append(own, add(w.m.ID, w.st.ID, payment.ModeLive, i, i%4 != 3))
		if i%3 == 0 {
			add(w.m.ID, w.st.ID, payment.ModeTest, 100+i, true)
		}
		if i%4 == 1 {
			mode := payment.ModeLive
			if i%8 == 5 {
				mode = payment.ModeTest
			}
			add(w.m.ID, w.st2.ID, mode, 200+i, true)
		}
		if i%5 == 2 {
			add(w.m.ID, uuid.Nil, payment.ModeLive, 300+i, i%10 != 2)
		}
		if i%6 == 4 {
			add(w.m.ID, uuid.Nil, payment.ModeTest, 400+i, true)
		}
		if i%7 == 0 {
			add(w.other.ID, w.otherSt.ID, payment.ModeLive, 500+i, true)
		}
		if i%9 == 5 {
			add(w.other.ID, uuid.Nil, payment.ModeLive, 600+i, true)
		}
	}
	list := func(t *testing.T, f payment.WebhookFilter, p payment.ListParams) payment.Page[*payment.Webhook] {
		t.Helper()
		page := listWebhooks(t, s, f, p)
		// Every field comes back in a list as well.
		for _, got := range page.Items {
			for _, want := range all {
				if want.ID == got.ID {
					checkSame(t, got, want)
				}
			}
		}
		return page
	}
	type c = filterCase[payment.WebhookFilter, *payment.Webhook]
	owner := func(merchantID, storeID uuid.UUID, mode payment.Mode) func(h *payment.Webhook) bool {
		return func(h *payment.Webhook) bool {
			return h.MerchantID == merchantID && h.StoreID == storeID && (mode == "" || h.Mode == mode)
		}
	}
	merchant := func(merchantID uuid.UUID, mode payment.Mode) func(h *payment.Webhook) bool {
		return func(h *payment.Webhook) bool { return h.MerchantID == merchantID && (mode == "" || h.Mode == mode) }
	}
	none := func(*payment.Webhook) bool { return false }
	checkFilters(t, all, webhookID, list, []c{
		{name: "StoreLive", filter: payment.WebhookFilter{MerchantID: w.m.ID, StoreID: w.st.ID, OwnerOnly: true, Mode: payment.ModeLive},
			match: owner(w.m.ID, w.st.ID, payment.ModeLive)},
		{name: "StoreTest", filter: payment.WebhookFilter{MerchantID: w.m.ID, StoreID: w.st.ID, OwnerOnly: true, Mode: payment.ModeTest},
			match: owner(w.m.ID, w.st.ID, payment.ModeTest)},
		{name: "StoreAnyMode", filter: payment.WebhookFilter{MerchantID: w.m.ID, StoreID: w.st.ID, OwnerOnly: true},
			match: owner(w.m.ID, w.st.ID, "")},
		{name: "OtherStore", filter: payment.WebhookFilter{MerchantID: w.m.ID, StoreID: w.st2.ID, OwnerOnly: true, Mode: payment.ModeTest},
			match: owner(w.m.ID, w.st2.ID, payment.ModeTest)},
		{name: "MerchantLevelLive", filter: payment.WebhookFilter{MerchantID: w.m.ID, OwnerOnly: true, Mode: payment.ModeLive},
			match: owner(w.m.ID, uuid.Nil, payment.ModeLive)},
		{name: "MerchantLevelAnyMode", filter: payment.WebhookFilter{MerchantID: w.m.ID, OwnerOnly: true},
			match: owner(w.m.ID, uuid.Nil, "")},
		{name: "MerchantAll", filter: payment.WebhookFilter{MerchantID: w.m.ID}, match: merchant(w.m.ID, "")},
		{name: "MerchantAllTest", filter: payment.WebhookFilter{MerchantID: w.m.ID, Mode: payment.ModeTest},
			match: merchant(w.m.ID, payment.ModeTest)},
		{name: "OtherMerchantAll", filter: payment.WebhookFilter{MerchantID: w.other.ID}, match: merchant(w.other.ID, "")},
		{name: "OtherMerchantLevel", filter: payment.WebhookFilter{MerchantID: w.other.ID, OwnerOnly: true, Mode: payment.ModeLive},
			match: owner(w.other.ID, uuid.Nil, payment.ModeLive)},
		// Another merchant's store under this merchant, an unknown merchant
		// or store: nothing.
		{name: "StoreOfOtherMerchant", filter: payment.WebhookFilter{MerchantID: w.m.ID, StoreID: w.otherSt.ID, OwnerOnly: true},
			match: none, none: true},
		{name: "UnknownMerchant", filter: payment.WebhookFilter{MerchantID: payment.NewID()}, match: none, none: true},
		{name: "UnknownStore", filter: payment.WebhookFilter{MerchantID: w.m.ID, StoreID: payment.NewID(), OwnerOnly: true},
			match: none, none: true},
	})
	t.Run("Paging", func(t *testing.T) {
		f := payment.WebhookFilter{MerchantID: w.m.ID, StoreID: w.st.ID, OwnerOnly: true, Mode: payment.ModeLive}
		asc := make([]uuid.UUID, len(own))
		for i, h := range own {
			asc[i] = h.ID
		}
		checkPaging(t, asc, func(t *testing.T, p payment.ListParams) payment.Page[*payment.Webhook] {
			return list(t, f, p)
		}, webhookID)
	})
}

// testWebhookURLTaken: a URL is taken by another webhook of the same
// merchant, store (or merchant level) and mode, whatever its ASCII case
// and whether it is active, and by nothing else.
func testWebhookURLTaken(t *testing.T, s payment.Storage) {
	w := newTenants(t, s)
	const url = "https://Shop.example/Hooks/Kessai?Order=1&x=_"
	hook := newWebhook(w.m.ID, w.st.ID, payment.ModeLive, 1)
	hook.URL = url
	merchantLevel := newWebhook(w.m.ID, uuid.Nil, payment.ModeLive, 2)
	merchantLevel.URL = "https://shop.example/merchant-level"
	asleep := newWebhook(w.m.ID, w.st.ID, payment.ModeLive, 3)
	asleep.URL, asleep.Active = "https://shop.example/asleep", false
	accented := newWebhook(w.m.ID, w.st.ID, payment.ModeLive, 4)
	accented.URL = "https://shop.example/Élan"
	createWebhooks(t, s, hook, merchantLevel, asleep, accented)

	// candidate is a webhook not yet stored (or, with the id of one, that
	// one changed) of the owner and mode, with the URL.
	candidate := func(id, merchantID, storeID uuid.UUID, mode payment.Mode, url string) *payment.Webhook {
		c := newWebhook(merchantID, storeID, mode, 9)
		c.URL = url
		if id != uuid.Nil {
			c.ID = id
		}
		return c
	}
	m, st, live := w.m.ID, w.st.ID, payment.ModeLive
	cases := []struct {
		name string
		w    *payment.Webhook
		want bool
	}{
		{"SameURL", candidate(uuid.Nil, m, st, live, url), true},
		{"OtherASCIICase", candidate(uuid.Nil, m, st, live, "HTTPS://SHOP.EXAMPLE/hooks/kessai?order=1&X=_"), true},
		{"Inactive", candidate(uuid.Nil, m, st, live, "https://shop.example/ASLEEP"), true},
		{"MerchantLevel", candidate(uuid.Nil, m, uuid.Nil, live, "https://shop.example/Merchant-Level"), true},
		// The webhook itself (an update keeping or recasing its URL).
		{"Itself", candidate(hook.ID, m, st, live, url), false},
		{"ItselfOtherCase", candidate(hook.ID, m, st, live, "https://shop.example/hooks/kessai?Order=1&x=_"), false},
		{"OtherStore", candidate(uuid.Nil, m, w.st2.ID, live, url), false},
		{"MerchantLevelNotStore", candidate(uuid.Nil, m, uuid.Nil, live, url), false},
		{"StoreNotMerchantLevel", candidate(uuid.Nil, m, st, live, "https://shop.example/merchant-level"), false},
		{"OtherMode", candidate(uuid.Nil, m, st, payment.ModeTest, url), false},
		{"OtherMerchant", candidate(uuid.Nil, w.other.ID, st, live, url), false},
		{"OtherMerchantsStore", candidate(uuid.Nil, w.other.ID, w.otherSt.ID, live, url), false},
		// Otherwise the URL is compared exactly.
		{"Prefix", candidate(uuid.Nil, m, st, live, "https://Shop.example/Hooks/Kessai?Order=1"), false},
		{"Longer", candidate(uuid.Nil, m, st, live, url+"/"), false},
		{"Wildcards", candidate(uuid.Nil, m, st, live, "https://Shop.example/Hooks/Kessai?Order=1&x=%"), false},
		{"Underscore", candidate(uuid.Nil, m, st, live, "https://Shop.example/Hooks/Kessai?Order_1&x=_"), false},
		{"NonASCIICase", candidate(uuid.Nil, m, st, live, "https://shop.example/élan"), false},
		{"NonASCIISame", candidate(uuid.Nil, m, st, live, "https://SHOP.example/Élan"), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := urlTaken(t, s, c.w); got != c.want {
				t.Errorf("WebhookURLTaken(%s of %s/%s %s) = %v, want %v", c.w.URL, c.w.MerchantID, c.w.StoreID, c.w.Mode, got, c.want)
			}
		})
	}
	t.Run("AfterUpdate", func(t *testing.T) {
		moved := *hook
		moved.URL = "https://shop.example/moved"
		update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.UpdateWebhook(ctx, &moved) })
		if urlTaken(t, s, candidate(uuid.Nil, m, st, live, url)) {
			t.Error("the URL a webhook no longer has is still taken")
		}
		if !urlTaken(t, s, candidate(uuid.Nil, m, st, live, "https://shop.example/MOVED")) {
			t.Error("the URL a webhook was given is not taken")
		}
	})
}

// testActiveWebhooks: the webhooks that hear a store's events are its own
// and its merchant's merchant-level ones, active and of the event's mode.
func testActiveWebhooks(t *testing.T, s payment.Storage) {
	w := newTenants(t, s)
	m, live, test := w.m.ID, payment.ModeLive, payment.ModeTest
	mk := func(merchantID, storeID uuid.UUID, mode payment.Mode, i int, active bool) *payment.Webhook {
		h := newWebhook(merchantID, storeID, mode, i)
		h.Active = active
		createWebhooks(t, s, h)
		return h
	}
	own := mk(m, w.st.ID, live, 1, true)
	mk(m, w.st.ID, live, 2, false)
	ownTest := mk(m, w.st.ID, test, 3, true)
	st2 := mk(m, w.st2.ID, live, 4, true)
	merchantLevel := mk(m, uuid.Nil, live, 5, true)
	mk(m, uuid.Nil, live, 6, false)
	merchantLevelTest := mk(m, uuid.Nil, test, 7, true)
	otherStore := mk(w.other.ID, w.otherSt.ID, live, 8, true)
	otherLevel := mk(w.other.ID, uuid.Nil, live, 9, true)
	// Another of the store's own, created after the merchant-level ones.
	own2 := mk(m, w.st.ID, live, 10, true)

	checkActive(t, s, m, w.st.ID, live, own, merchantLevel, own2)
	checkActive(t, s, m, w.st.ID, test, ownTest, merchantLevelTest)
	checkActive(t, s, m, w.st2.ID, live, st2, merchantLevel)
	checkActive(t, s, m, w.st2.ID, test, merchantLevelTest)
	checkActive(t, s, m, uuid.Nil, live, merchantLevel)
	checkActive(t, s, w.other.ID, w.otherSt.ID, live, otherStore, otherLevel)
	checkActive(t, s, w.other.ID, w.otherSt.ID, test)
	checkActive(t, s, payment.NewID(), w.st.ID, live)

	t.Run("Deactivated", func(t *testing.T) {
		off := *merchantLevel
		off.Active = false
		update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.UpdateWebhook(ctx, &off) })
		checkActive(t, s, m, w.st.ID, live, own, own2)
		checkActive(t, s, m, w.st2.ID, live, st2)
		update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.UpdateWebhook(ctx, merchantLevel) })
		checkActive(t, s, m, w.st.ID, live, own, merchantLevel, own2)
	})
	t.Run("Deleted", func(t *testing.T) {
		update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.DeleteWebhook(ctx, own.ID) })
		checkActive(t, s, m, w.st.ID, live, merchantLevel, own2)
	})
}
