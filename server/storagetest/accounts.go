package storagetest

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
)

func newMerchant(i int) *payment.Merchant {
	return &payment.Merchant{
		ID: payment.NewID(), Name: fmt.Sprintf("Merchant %d — 決済", i),
		Email: fmt.Sprintf("merchant%d@kessai.test", i), Verified: i%2 == 0, CreatedOn: at(i),
	}
}

func newStore(merchantID uuid.UUID, i int) *payment.Store {
	settings := payment.DefaultStoreSettings()
	settings.ThreeDSRequired = i%2 == 1
	settings.LogoImage = fmt.Sprintf("https://cdn.example/logo-%d.png", i)
	settings.Currencies = []string{"JPY", "USD"}
	return &payment.Store{
		ID: payment.NewID(), MerchantID: merchantID, Name: fmt.Sprintf("Store %d", i),
		PCICompliant: i%2 == 0, Settings: settings, CreatedOn: at(i),
	}
}

// createMerchant stores a new merchant in its own transaction.
func createMerchant(t *testing.T, s payment.Storage, i int) *payment.Merchant {
	t.Helper()
	m := newMerchant(i)
	update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.CreateMerchant(ctx, m) })
	return m
}

func createStore(t *testing.T, s payment.Storage, merchantID uuid.UUID, i int) *payment.Store {
	t.Helper()
	st := newStore(merchantID, i)
	update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.CreateStore(ctx, st) })
	return st
}

func testMerchants(t *testing.T, s payment.Storage) {
	view(t, s, func(ctx context.Context, tx payment.Tx) error {
		n, err := tx.CountMerchants(ctx)
		if err == nil && n != 0 {
			t.Errorf("CountMerchants on an empty store = %d, want 0", n)
		}
		return err
	})
	// m2 has every field set; m1 shows that false comes back false.
	m1, m2 := createMerchant(t, s, 1), createMerchant(t, s, 2)
	requireNoZeroFields(t, m2)
	for _, want := range []*payment.Merchant{m1, m2} {
		view(t, s, func(ctx context.Context, tx payment.Tx) error {
			got, err := tx.Merchant(ctx, want.ID)
			if err != nil {
				return err
			}
			checkSame(t, got, want)
			return nil
		})
	}
	view(t, s, func(ctx context.Context, tx payment.Tx) error {
		n, err := tx.CountMerchants(ctx)
		if err == nil && n != 2 {
			t.Errorf("CountMerchants = %d, want 2", n)
		}
		return err
	})
}

func testUsers(t *testing.T, s payment.Storage) {
	m := createMerchant(t, s, 1)
	u := &payment.User{
		ID: payment.NewID(), MerchantID: m.ID, Email: "owner@kessai.test",
		PasswordHash: []byte("$2a$10$first-hash\x00\xff"), CreatedOn: at(3),
	}
	requireNoZeroFields(t, u)
	update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.CreateUser(ctx, u) })
	check := func(wantHash []byte) {
		t.Helper()
		view(t, s, func(ctx context.Context, tx payment.Tx) error {
			got, err := tx.UserByEmail(ctx, u.Email)
			if err != nil {
				return err
			}
			want := *u
			want.PasswordHash = wantHash
			checkSame(t, got, &want)
			return nil
		})
	}
	check(u.PasswordHash)
	newHash := []byte("$2a$10$second-hash")
	update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.SetUserPassword(ctx, u.ID, newHash) })
	check(newHash)
}

// fullStore is a store with every field set, none of them to its default.
func fullStore(merchantID uuid.UUID) *payment.Store {
	return &payment.Store{
		ID: payment.NewID(), MerchantID: merchantID, Name: "Kessai Coffee 渋谷店 \"本店\"", PCICompliant: true,
		Settings: payment.StoreSettings{
			CardEnabled: true, ThreeDSRequired: true, Currencies: []string{"JPY", "USD", "EUR"},
			LogoImage:           "https://cdn.example/kessai-coffee.png",
			ForbiddenCardBrands: []string{"jcb", "maestro"}, RecurringType: payment.RecurringBounded,
			KonbiniOff: true, BankTransferOff: true, MatchAmount: payment.MatchExact,
			Theme: payment.Theme{
				MainBackground: "#010203", SecondaryBackground: "#040506", MainColor: "#070809", MainText: "#0a0b0c",
				PrimaryText: "#0d0e0f", SecondaryText: "#101112", BaseText: "#131415", BodyBackground: "#161718",
			},
		},
		CreatedOn: at(11),
	}
}

func testStores(t *testing.T, s payment.Storage) {
	m := createMerchant(t, s, 1)
	full := fullStore(m.ID)
	requireNoZeroFields(t, full)
	update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.CreateStore(ctx, full) })
	usual := createStore(t, s, m.ID, 1)
	plain := newStore(m.ID, 2)
	plain.Settings = payment.StoreSettings{} // nothing set at all
	update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.CreateStore(ctx, plain) })
	for _, want := range []*payment.Store{full, usual, plain} {
		view(t, s, func(ctx context.Context, tx payment.Tx) error {
			got, err := tx.Store(ctx, want.ID)
			if err != nil {
				return err
			}
			checkSame(t, got, want)
			return nil
		})
	}
}

func storeID(s *payment.Store) uuid.UUID { return s.ID }

func testListStores(t *testing.T, s payment.Storage) {
	m, other := createMerchant(t, s, 1), createMerchant(t, s, 2)
	var ids []uuid.UUID
	// Interleave another merchant's stores: they must never show.
	for i := range 25 {
		ids = append(ids, createStore(t, s, m.ID, i).ID)
		if i%5 == 0 {
			createStore(t, s, other.ID, i)
		}
	}
	asc := sortedIDs(ids)
	if !slices.Equal(asc, ids) {
		t.Fatal("payment.NewID did not give ids in creation order")
	}
	list := func(t *testing.T, merchantID uuid.UUID, p payment.ListParams) payment.Page[*payment.Store] {
		t.Helper()
		var page payment.Page[*payment.Store]
		view(t, s, func(ctx context.Context, tx payment.Tx) error {
			var err error
			page, err = tx.ListStores(ctx, merchantID, p)
			return err
		})
		return page
	}
	for _, c := range pagingCases(asc) {
		t.Run(c.name, func(t *testing.T) { checkPage(t, c, list(t, m.ID, c.params), storeID) })
	}
	t.Run("Walk", func(t *testing.T) {
		for _, dir := range []payment.Direction{payment.Desc, payment.Asc} {
			want := reversed(asc)
			if dir == payment.Asc {
				want = asc
			}
			got := walk(t, func(p payment.ListParams) payment.Page[*payment.Store] { return list(t, m.ID, p) }, storeID, 7, dir)
			if !slices.Equal(got, want) {
				t.Errorf("walking %s by 7 = %v\nwant %v", dir, got, want)
			}
		}
	})
	t.Run("ItemsComplete", func(t *testing.T) {
		page := list(t, m.ID, payment.ListParams{Limit: 1, Direction: payment.Asc})
		if len(page.Items) != 1 {
			t.Fatalf("got %d items", len(page.Items))
		}
		got, want := page.Items[0], newStore(m.ID, 0)
		checkTime(t, "listed store created_on", got.CreatedOn, want.CreatedOn)
		if got.MerchantID != m.ID || got.Name != want.Name || got.PCICompliant != want.PCICompliant ||
			!reflect.DeepEqual(got.Settings, want.Settings) {
			t.Errorf("listed store = %+v, want the fields of %+v", got, want)
		}
	})
	t.Run("NoStores", func(t *testing.T) {
		empty := createMerchant(t, s, 3)
		checkPage(t, pageCheck{params: payment.ListParams{Limit: 10}, want: []uuid.UUID{}, total: intp(0)},
			list(t, empty.ID, payment.ListParams{Limit: 10}), storeID)
	})
}
