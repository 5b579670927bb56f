package storagetest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
)

// Approvals, as package payment relies on them:
//
//   - An approval is found by its Key, exactly; CreateApproval refuses a
//     key already taken, and leaves the approval that holds it as it was.
//   - Approval(key) gives back every field as written (times truncated to
//     the microsecond, in UTC); an unknown key is NOT_FOUND.
//   - A resource (a charge, a token) may have had several approvals, one
//     after another. ApprovalFor(resourceID) returns the latest: the
//     greatest CreatedOn (at the microsecond) and, between approvals
//     created at the same instant, the one created last. It never returns
//     an approval of another resource; a resource that has none is
//     NOT_FOUND.
//   - UpdateApproval writes every field but Key, which names the approval
//     it updates; other approvals are left as they were.
//   - CreateApproval and UpdateApproval run in the caller's transaction:
//     rolled back, they leave nothing.

// approvalKey is a key as long as the gateway's (26 characters), made of
// a name and a number so that the suite chooses how keys sort.
func approvalKey(name string, i int) string {
	k := fmt.Sprintf("%s%d", strings.ToUpper(name), i)
	return k + strings.Repeat("Q", 26-len(k))
}

// newApproval is an approval of the resource id with every field set.
func newApproval(st *payment.Store, resourceID uuid.UUID, key string, i int) *payment.Approval {
	return &payment.Approval{
		Key: key, Kind: payment.ApprovalWallet, ResourceType: payment.ResourceCharge, ResourceID: resourceID,
		StoreID: st.ID, MerchantID: st.MerchantID, Mode: payment.ModeLive,
		Brand: "pay_pay_online", CallMethod: "http_get_mobile",
		Amount: 12_345_678_901 + int64(i), Currency: "JPY", LastFour: "4242",
		Tries: 2, Status: payment.ApprovalAwaiting,
		ExpiresOn: at(i + 300), CreatedOn: at(i), UpdatedOn: at(i + 1),
		Slip: payment.PaymentSlip{
			ConvenienceStore: "seven_eleven", PaymentNumber: "1234567890123", ConfirmationNumber: "000042",
			CustomerName: "山田 太郎", Extensions: 2, ExtendedOn: ptrTime(at(i + 2)), Deposited: 9_007_199_254_740_993,
			VirtualAccount: &payment.VirtualAccount{
				AccountID: "va-1", BankCode: "0310", BankName: "GMOあおぞらネット銀行", BranchCode: "101",
				BranchName: "法人営業部", AccountType: "ordinary", AccountNumber: "1234567", AccountHolderName: "ケッサイ",
			},
		},
	}
}

func ptrTime(t time.Time) *time.Time { return &t }

// approvalFixed are the approval's fields an update never changes: the key
// names the approval. UpdateApproval writes every other field.
var approvalFixed = []string{"Key"}

// changedApproval is a with every field but approvalFixed changed, moved
// to the store st (for requireAllChanged, another merchant's than a's).
func changedApproval(a *payment.Approval, st *payment.Store) *payment.Approval {
	c := *a
	c.Kind, c.ResourceType, c.ResourceID = payment.ApprovalThreeDS, payment.ResourceToken, payment.NewID()
	c.StoreID, c.MerchantID, c.Mode = st.ID, st.MerchantID, payment.ModeTest
	c.Brand, c.CallMethod = "we_chat_online", "http_post"
	c.Amount, c.Currency, c.LastFour = 1, "USD", "0005"
	c.Tries, c.Status = 3, payment.ApprovalFailed
	c.ExpiresOn, c.CreatedOn, c.UpdatedOn = at(1300), at(1000), at(1001)
	c.Slip = payment.PaymentSlip{
		ConvenienceStore: "lawson", PaymentNumber: "99", ConfirmationNumber: "1", CustomerName: "Hanako", Extensions: 3,
		ExtendedOn: ptrTime(at(1002)), Deposited: 1,
		VirtualAccount: &payment.VirtualAccount{
			AccountID: "va-2", BankCode: "9999", BankName: "テスト銀行", BranchCode: "001", BranchName: "本店",
			AccountType: "current", AccountNumber: "7654321", AccountHolderName: "CHANGED",
		},
	}
	return &c
}

func createApprovals(t *testing.T, s payment.Storage, as ...*payment.Approval) {
	t.Helper()
	update(t, s, func(ctx context.Context, tx payment.Tx) error {
		for _, a := range as {
			if err := tx.CreateApproval(ctx, a); err != nil {
				return err
			}
		}
		return nil
	})
}

func readApproval(t *testing.T, s payment.Storage, key string) *payment.Approval {
	t.Helper()
	var a *payment.Approval
	view(t, s, func(ctx context.Context, tx payment.Tx) error {
		var err error
		a, err = tx.Approval(ctx, key)
		return err
	})
	return a
}

func approvalFor(t *testing.T, s payment.Storage, resourceID uuid.UUID) *payment.Approval {
	t.Helper()
	var a *payment.Approval
	view(t, s, func(ctx context.Context, tx payment.Tx) error {
		var err error
		a, err = tx.ApprovalFor(ctx, resourceID)
		return err
	})
	return a
}

// checkLatest fails unless ApprovalFor(resourceID) is want, every field.
func checkLatest(t *testing.T, s payment.Storage, resourceID uuid.UUID, want *payment.Approval) {
	t.Helper()
	got := approvalFor(t, s, resourceID)
	if got.Key != want.Key {
		t.Fatalf("ApprovalFor(%s) = the approval %s (created %s), want %s (created %s)", resourceID,
			got.Key, got.CreatedOn.Format(time.RFC3339Nano), want.Key, want.CreatedOn.UTC().Format(time.RFC3339Nano))
	}
	checkSame(t, got, want)
}

// checkNoKey fails unless no approval has the key.
func checkNoKey(t *testing.T, s payment.Storage, key string) {
	t.Helper()
	view(t, s, func(ctx context.Context, tx payment.Tx) error {
		if a, err := tx.Approval(ctx, key); !payment.IsNotFound(err) {
			t.Errorf("Approval(%q) = %+v, %v (code %s); want NOT_FOUND", key, a, err, payment.ErrorCode(err))
		}
		return nil
	})
}

// checkNoApprovalFor fails unless the resource has no approval.
func checkNoApprovalFor(t *testing.T, s payment.Storage, resourceID uuid.UUID) {
	t.Helper()
	view(t, s, func(ctx context.Context, tx payment.Tx) error {
		if a, err := tx.ApprovalFor(ctx, resourceID); !payment.IsNotFound(err) {
			t.Errorf("ApprovalFor(%s) = %+v, %v (code %s); want NOT_FOUND", resourceID, a, err, payment.ErrorCode(err))
		}
		return nil
	})
}

func testApprovals(t *testing.T, s payment.Storage) {
	w := newTenants(t, s)
	a, other := newApproval(w.st, payment.NewID(), approvalKey("a", 1), 1), newApproval(w.st2, payment.NewID(), approvalKey("b", 2), 2)
	requireNoZeroFields(t, a)
	createApprovals(t, s, a, other)
	checkSame(t, readApproval(t, s, a.Key), a)
	checkSame(t, readApproval(t, s, other.Key), other)
	checkLatest(t, s, a.ResourceID, a)

	t.Run("NotFound", func(t *testing.T) {
		// The key is matched whole: neither a part of it nor its resource's
		// id finds the approval.
		for _, key := range []string{approvalKey("c", 3), a.Key[:25], a.Key + "Q", a.ResourceID.String(), ""} {
			checkNoKey(t, s, key)
		}
	})
	t.Run("Update", func(t *testing.T) {
		changed := changedApproval(a, w.otherSt)
		requireAllChanged(t, a, changed, approvalFixed...)
		update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.UpdateApproval(ctx, changed) })
		checkSame(t, readApproval(t, s, a.Key), changed)
		checkSame(t, readApproval(t, s, other.Key), other)
		// ApprovalFor follows the update: the approval is now its new
		// resource's, and its old resource has none.
		checkLatest(t, s, changed.ResourceID, changed)
		checkNoApprovalFor(t, s, a.ResourceID)
		checkLatest(t, s, other.ResourceID, other)
	})
	t.Run("UpdateTries", func(t *testing.T) {
		// A wrong one-time code counts one try and changes nothing else
		// (what Service.ActOnApproval writes).
		got := readApproval(t, s, other.Key)
		got.Tries++
		update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.UpdateApproval(ctx, got) })
		want := *other
		want.Tries++
		checkSame(t, readApproval(t, s, other.Key), &want)
		checkLatest(t, s, other.ResourceID, &want)
	})
	t.Run("DuplicateKey", func(t *testing.T) {
		before := readApproval(t, s, a.Key)
		again := newApproval(w.st, payment.NewID(), a.Key, 5)
		err := s.Update(t.Context(), func(tx payment.Tx) error { return tx.CreateApproval(t.Context(), again) })
		if err == nil {
			t.Fatal("creating a second approval with the same key succeeded")
		}
		checkSame(t, readApproval(t, s, a.Key), before)
		checkNoApprovalFor(t, s, again.ResourceID)
	})
}

// testApprovalFor: the latest approval of a resource is the one created
// last, by CreatedOn at the microsecond and then by the order of creation;
// approvals of other resources do not count, however late.
func testApprovalFor(t *testing.T, s payment.Storage) {
	w := newTenants(t, s)
	res, otherRes := payment.NewID(), payment.NewID()
	t0 := at(100).Truncate(time.Microsecond)
	mk := func(resourceID uuid.UUID, key string, created time.Time) *payment.Approval {
		a := newApproval(w.st, resourceID, key, 0)
		a.CreatedOn, a.UpdatedOn, a.ExpiresOn = created, created.Add(time.Second), created.Add(5*time.Minute)
		return a
	}
	// The other resource's approval is the newest of all, and another one
	// of it is created after most of res's.
	foreign := mk(otherRes, approvalKey("x", 0), t0.Add(time.Hour))
	createApprovals(t, s, foreign)
	// Each step creates one approval; latest is what ApprovalFor(res)
	// must then return. The keys sort against the order of creation where
	// it matters, so that neither the key nor the insertion order alone
	// gives the answer.
	first := mk(res, approvalKey("m", 1), t0)
	newer := mk(res, approvalKey("n", 2), t0.Add(time.Minute))
	tieLowKey := mk(res, approvalKey("a", 4), t0.Add(time.Minute))
	tieHighKey := mk(res, approvalKey("y", 5), t0.Add(time.Minute))
	// Stored a microsecond after the ties (its nanoseconds are dropped).
	microLater := mk(res, approvalKey("b", 7), t0.Add(time.Minute+time.Microsecond+500))
	sameMicro := mk(res, approvalKey("a", 9), t0.Add(time.Minute+time.Microsecond))
	steps := []struct {
		name           string
		create, latest *payment.Approval
	}{
		{"One", first, first},
		{"Newer", newer, newer},
		{"OlderCreatedLater", mk(res, approvalKey("z", 3), t0.Add(30*time.Second)), newer},
		{"SameInstantCreatedLater", tieLowKey, tieLowKey},
		{"SameInstantAgain", tieHighKey, tieHighKey},
		{"OtherResourceCreatedLater", mk(otherRes, approvalKey("z", 6), t0.Add(2*time.Minute)), tieHighKey},
		{"AMicrosecondLater", microLater, microLater},
		{"AMicrosecondEarlierCreatedLater", mk(res, approvalKey("c", 8), t0.Add(time.Minute)), microLater},
		// Earlier than microLater in Go, the same instant as stored: the
		// order of creation decides.
		{"SameMicrosecondCreatedLater", sameMicro, sameMicro},
	}
	for _, step := range steps {
		t.Run(step.name, func(t *testing.T) {
			createApprovals(t, s, step.create)
			checkLatest(t, s, res, step.latest)
			checkLatest(t, s, otherRes, foreign)
		})
	}
	t.Run("SameInstantInOneTransaction", func(t *testing.T) {
		// Created together, in one transaction: still the one created last.
		r := payment.NewID()
		late := t0.Add(2 * time.Hour)
		x, y := mk(r, approvalKey("x", 10), late), mk(r, approvalKey("d", 11), late)
		createApprovals(t, s, x, y)
		checkLatest(t, s, r, y)
	})
	t.Run("NoApproval", func(t *testing.T) {
		// Neither an unknown resource, nor an existing charge or token
		// without an approval, nor the ids an approval holds that are not
		// its resource's.
		tok := newToken(w.st, 1)
		createTokens(t, s, tok)
		ch := newCharge(tok, 1)
		createCharges(t, s, ch)
		for _, id := range []uuid.UUID{payment.NewID(), uuid.Nil, ch.ID, tok.ID, w.st.ID, w.m.ID} {
			checkNoApprovalFor(t, s, id)
		}
	})
}

// testApprovalRollback: approvals are written in the caller's
// transaction. A creation that rolls back leaves no approval, by key or
// by resource, and an update that rolls back leaves the approval as it
// was.
func testApprovalRollback(t *testing.T, s payment.Storage) {
	w := newTenants(t, s)
	kept := newApproval(w.st, payment.NewID(), approvalKey("k", 1), 1)
	createApprovals(t, s, kept)
	created := newApproval(w.st, payment.NewID(), approvalKey("r", 2), 2)
	// A later approval of kept's resource, which would be its latest.
	later := newApproval(w.st, kept.ResourceID, approvalKey("l", 3), 3)
	// kept moved to another resource.
	changed := changedApproval(kept, w.otherSt)
	updateRolledBack(t, s, func(ctx context.Context, tx payment.Tx) []func() error {
		return []func() error{
			func() error { return tx.CreateApproval(ctx, created) },
			func() error { return tx.CreateApproval(ctx, later) },
			func() error { return tx.UpdateApproval(ctx, changed) },
			func() error {
				// A transaction sees what it wrote.
				for res, want := range map[uuid.UUID]string{kept.ResourceID: later.Key, changed.ResourceID: kept.Key} {
					got, err := tx.ApprovalFor(ctx, res)
					if err != nil {
						return err
					}
					if got.Key != want {
						return fmt.Errorf("inside the transaction ApprovalFor(%s) found %s, want %s", res, got.Key, want)
					}
				}
				_, err := tx.Approval(ctx, created.Key)
				return err
			},
		}
	})
	checkNoKey(t, s, created.Key)
	checkNoKey(t, s, later.Key)
	checkNoApprovalFor(t, s, created.ResourceID)
	checkNoApprovalFor(t, s, changed.ResourceID)
	checkSame(t, readApproval(t, s, kept.Key), kept)
	checkLatest(t, s, kept.ResourceID, kept)
}
