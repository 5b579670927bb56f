package payment

import (
	"testing"

	"github.com/google/uuid"
)

// TestIdempotencyScopeSeparatesAccounts: a retry is replayed only to the
// account that made the first request — the same merchant, store and mode,
// whichever of its tokens asks — never to a live token of a test one's
// store, another store, or the merchant's own token.
func TestIdempotencyScopeSeparatesAccounts(t *testing.T) {
	store := AppToken{ID: NewID(), MerchantID: NewID(), StoreID: NewID(), Mode: ModeTest}
	scope := func(tok AppToken, secret bool) string {
		return IdempotencyScope(&Caller{token: &tok, withSecret: secret})
	}
	base := scope(store, true)

	same := store
	same.ID = NewID()
	if scope(same, true) != base || scope(store, false) != base {
		t.Error("two tokens of one store and mode, with or without the secret, are in different scopes")
	}
	live := store
	live.Mode = ModeLive
	otherStore := store
	otherStore.StoreID = NewID()
	merchant := store
	merchant.StoreID = uuid.Nil
	otherMerchant := store
	otherMerchant.MerchantID = NewID()
	for name, tok := range map[string]AppToken{
		"a live token of the store": live, "another store": otherStore,
		"the merchant's token": merchant, "another merchant's store": otherMerchant,
	} {
		if scope(tok, true) == base {
			t.Errorf("%s shares the store's idempotency scope %q", name, base)
		}
	}
}
