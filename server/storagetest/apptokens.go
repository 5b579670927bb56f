package storagetest

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
)

func newAppToken(merchantID, storeID uuid.UUID, i int, domains ...string) *payment.AppToken {
	mode := payment.ModeTest
	if i%2 == 1 {
		mode = payment.ModeLive
	}
	id := payment.NewID()
	return &payment.AppToken{
		ID: id, MerchantID: merchantID, StoreID: storeID, CreatorID: payment.NewID(), Mode: mode,
		Domains: domains, SecretHash: []byte(fmt.Sprintf("hash-%d-\x00\xff", i)),
		JWT: "header.payload-" + id.String() + ".signature", CreatedOn: at(i),
	}
}
func createAppToken(t *testing.T, s payment.Storage, merchantID, storeID uuid.UUID, i int, domains ...string) *payment.AppToken {
	t.Helper()
	tok := newAppToken(merchantID, storeID, i, domains...)
	update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.CreateAppToken(ctx, tok) })
	return tok
}

func revoke(t *testing.T, s payment.Storage, id uuid.UUID, when time.Time) {
	t.Helper()
	update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.RevokeAppToken(ctx, id, when) })
}

// checkAppToken compares every field of a token read back with what was
// written; revokedOn is the expected revocation time or nil.
func checkAppToken(t *testing.T, got, want *payment.AppToken, revokedOn *time.Time) {
	t.Helper()
	checkTime(t, "app token created_on", got.CreatedOn, want.CreatedOn)
	switch {
	case revokedOn == nil && got.RevokedOn != nil:
		t.Errorf("app token %s revoked_on = %v, want none", want.ID, got.RevokedOn)
	case revokedOn != nil && got.RevokedOn == nil:
		t.Errorf("app token %s is not revoked, want revoked_on %v", want.ID, revokedOn)
	case revokedOn != nil:
		checkTime(t, "app token revoked_on", *got.RevokedOn, *revokedOn)
	}
	if got.Active() != (revokedOn == nil) {
		t.Errorf("app token %s Active() = %v", want.ID, got.Active())
	}
	g, w := *got, *want
	g.CreatedOn, w.CreatedOn, g.RevokedOn, w.RevokedOn = time.Time{}, time.Time{}, nil, nil
	g.Domains, w.Domains = emptyIsNil(g.Domains), emptyIsNil(w.Domains)
	if !reflect.DeepEqual(g, w) {
		t.Errorf("AppToken =\n  %+v\nwant\n  %+v", g, w)
	}
}

func testAppTokens(t *testing.T, s payment.Storage) {
	m := createMerchant(t, s, 1)
	st := createStore(t, s, m.ID, 1)
	storeTok := createAppToken(t, s, m.ID, st.ID, 1, "shop.example", "*.shop.example", "localhost:8081")
	merchantTok := createAppToken(t, s, m.ID, uuid.Nil, 2)
	noCreator := newAppToken(m.ID, st.ID, 3)
	noCreator.CreatorID = uuid.Nil
	update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.CreateAppToken(ctx, noCreator) })

	// full has every field set, a revocation time included: an engine
	// stores what it is given, even a token created revoked.
	full := newAppToken(m.ID, st.ID, 4, "full.example", "*.full.example:8443")
	revokedOn := at(40)
	full.RevokedOn = &revokedOn
	requireNoZeroFields(t, full)
	update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.CreateAppToken(ctx, full) })
	view(t, s, func(ctx context.Context, tx payment.Tx) error {
		got, err := tx.AppToken(ctx, full.ID)
		if err != nil {
			return err
		}
		checkSame(t, got, full)
		return nil
	})

	for _, want := range []*payment.AppToken{storeTok, merchantTok, noCreator} {
		view(t, s, func(ctx context.Context, tx payment.Tx) error {
			got, err := tx.AppToken(ctx, want.ID)
			if err != nil {
				return err
			}
			checkAppToken(t, got, want, nil)
			return nil
		})
	}

	t.Run("Revoke", func(t *testing.T) {
		when := at(100)
		revoke(t, s, storeTok.ID, when)
		view(t, s, func(ctx context.Context, tx payment.Tx) error {
			got, err := tx.AppToken(ctx, storeTok.ID)
			if err != nil {
				return err
			}
			checkAppToken(t, got, storeTok, &when)
			// The other tokens are untouched.
			other, err := tx.AppToken(ctx, noCreator.ID)
			if err != nil {
				return err
			}
			checkAppToken(t, other, noCreator, nil)
			return nil
		})
	})
}
func appTokenID(a *payment.AppToken) uuid.UUID { return a.ID }

func testListAppTokens(t *testing.T, s payment.Storage) {
	m, other := createMerchant(t, s, 1), createMerchant(t, s, 2)
	st, st2 := createStore(t, s, m.ID, 1), createStore(t, s, m.ID, 2)
	otherStore := createStore(t, s, other.ID, 3)
	var active, revoked []uuid.UUID
	for i := range 33 {
		tok := createAppToken(t, s, m.ID, st.ID, i, "shop.example")
		if i%4 == 3 {
			revoked = append(revoked, tok.ID)
		} else {
			active = append(active, tok.ID)
		}
		if i%6 == 0 {
			createAppToken(t, s, m.ID, st2.ID, i)
			createAppToken(t, s, m.ID, uuid.Nil, i)
			createAppToken(t, s, other.ID, otherStore.ID, i)
			createAppToken(t, s, other.ID, uuid.Nil, i)
		}
	}
	for _, id := range revoked {
		revoke(t, s, id, at(200))
	}
	if len(active) < 25 {
		t.Fatalf("only %d active tokens", len(active))
	}
	list := func(t *testing.T, f payment.AppTokenFilter, p payment.ListParams) payment.Page[*payment.AppToken] {
		t.Helper()
		var page payment.Page[*payment.AppToken]
		view(t, s, func(ctx context.Context, tx payment.Tx) error {
			var err error
			page, err = tx.ListAppTokens(ctx, f, p)
			return err
		})
		return page
	}
	storeFilter := payment.AppTokenFilter{MerchantID: m.ID, StoreID: st.ID}
	for _, c := range pagingCases(active) {
		t.Run(c.name, func(t *testing.T) { checkPage(t, c, list(t, storeFilter, c.params), appTokenID) })
	}
	t.Run("Walk", func(t *testing.T) {
		got := walk(t, func(p payment.ListParams) payment.Page[*payment.AppToken] { return list(t, storeFilter, p) }, appTokenID, 4, payment.Asc)
		if !slices.Equal(got, active) {
			t.Errorf("walking = %v\nwant %v", got, active)
		}
	})
	t.Run("RevokedCursor", func(t *testing.T) {
		// A client may hold a cursor to a token revoked since: the list
		// goes on from where it was.
		cursor := revoked[2]
		var want []uuid.UUID
		for _, id := range reversed(active) {
			if id.String() < cursor.String() {
				want = append(want, id)
			}
		}
		checkPage(t, pageCheck{want: want[:5], hasMore: len(want) > 5},
			list(t, storeFilter, payment.ListParams{Limit: 5, Cursor: cursor}), appTokenID)
	})
	t.Run("MerchantTokensOnly", func(t *testing.T) {
		page := list(t, payment.AppTokenFilter{MerchantID: m.ID}, payment.ListParams{Limit: 100})
		if len(page.Items) == 0 {
			t.Fatal("no merchant tokens listed")
		}
		for _, tok := range page.Items {
			if tok.MerchantID != m.ID || !tok.IsMerchantToken() {
				t.Errorf("merchant list holds token %s of merchant %s store %s", tok.ID, tok.MerchantID, tok.StoreID)
			}
		}
		if page.TotalHits == nil || *page.TotalHits != len(page.Items) {
			t.Errorf("TotalHits = %v, want %d", page.TotalHits, len(page.Items))
		}
	})
	t.Run("OtherStoreOnly", func(t *testing.T) {
		page := list(t, payment.AppTokenFilter{MerchantID: m.ID, StoreID: st2.ID}, payment.ListParams{Limit: 100})
		if len(page.Items) == 0 {
			t.Fatal("no tokens listed for the second store")
		}
		for _, tok := range page.Items {
			if tok.StoreID != st2.ID {
				t.Errorf("store list holds token %s of store %s", tok.ID, tok.StoreID)
			}
		}
	})
	t.Run("StoreOfAnotherMerchant", func(t *testing.T) {
		// The filter names both: a store id under the wrong merchant
		// matches nothing.
		page := list(t, payment.AppTokenFilter{MerchantID: m.ID, StoreID: otherStore.ID}, payment.ListParams{Limit: 100})
		checkPage(t, pageCheck{want: []uuid.UUID{}, total: intp(0)}, page, appTokenID)
	})
	t.Run("ItemsComplete", func(t *testing.T) {
		page := list(t, storeFilter, payment.ListParams{Limit: 1, Direction: payment.Asc})
		if len(page.Items) != 1 {
			t.Fatalf("got %d items", len(page.Items))
		}
		want := newAppToken(m.ID, st.ID, 0, "shop.example")
		want.ID, want.CreatorID, want.JWT = page.Items[0].ID, page.Items[0].CreatorID, page.Items[0].JWT
		checkAppToken(t, page.Items[0], want, nil)
	})
}
func testActiveDomains(t *testing.T, s payment.Storage) {
	domains := func(t *testing.T) []string {
		t.Helper()
		var ds []string
		view(t, s, func(ctx context.Context, tx payment.Tx) error {
			var err error
			ds, err = tx.ActiveDomains(ctx)
			return err
		})
		return ds
	}
	if ds := domains(t); len(ds) != 0 {
		t.Errorf("ActiveDomains of an empty store = %v", ds)
	}
	m := createMerchant(t, s, 1)
	st := createStore(t, s, m.ID, 1)
	createAppToken(t, s, m.ID, st.ID, 1, "a.example", "b.example:8443")
	gone := createAppToken(t, s, m.ID, st.ID, 2, "a.example", "gone.example")
	createAppToken(t, s, m.ID, st.ID, 3, "*.wild.example")
	createAppToken(t, s, m.ID, st.ID, 4)
	createAppToken(t, s, m.ID, uuid.Nil, 5)
	want := []string{"a.example", "b.example:8443", "gone.example", "*.wild.example"}
	if ds := domains(t); !sameSet(ds, want) {
		t.Errorf("ActiveDomains = %v, want %v", ds, want)
	}
	revoke(t, s, gone.ID, at(10))
	// a.example stays: another active token still names it.
	want = []string{"a.example", "b.example:8443", "*.wild.example"}
	if ds := domains(t); !sameSet(ds, want) {
		t.Errorf("after revoking, ActiveDomains = %v, want %v", ds, want)
	}
}
