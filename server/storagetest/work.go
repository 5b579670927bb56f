package storagetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
)

// The work queue, as package payment relies on it:
//
//   - An item is a kind and an object id; the same id may be queued under
//     several kinds (a charge's authorisation and its capture), each an item
//     of its own with its own attempts, due time and claim.
//   - EnqueueWork(kind, id, due) adds an item with no attempts, unclaimed,
//     due at due; enqueuing an item already queued changes nothing. It runs
//     in the caller's transaction: rolled back, it leaves no item.
//   - ClaimWork(claimant, now, leaseUntil, limit) takes at most limit items
//     that are due (due <= now, at the microsecond) and not leased (never
//     claimed, given back, or lease ended at or before now), the earliest
//     due first and, for the same due time, the first queued first. It
//     records claimant and leaseUntil on them and returns them so. A lease
//     that ended is no failed attempt: the attempts stay as they were.
//   - ExtendWorkLease, CompleteWork, RetryWork and ReleaseWork act only
//     while the item is still claimed by w.ClaimedBy (an empty claimant
//     holds nothing); otherwise they change nothing and are no error.
//     Complete removes the item; Retry counts one attempt, stores the error
//     and the new due time and ends the claim; Release ends the claim and
//     keeps everything else.
//   - No two claims ever return the same item while its lease holds, also
//     when they run at the same time.
//
// Times come back truncated to the microsecond, in UTC; LeaseUntil is the
// zero time when the item is not claimed.

func enqueue(t *testing.T, s payment.Storage, kind payment.WorkKind, id uuid.UUID, due time.Time) {
	t.Helper()
	update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.InsertWork(ctx, kind, id, due) })
}

func readWork(t *testing.T, s payment.Storage, kind payment.WorkKind, id uuid.UUID) *payment.Work {
	t.Helper()
	var w *payment.Work
	view(t, s, func(ctx context.Context, tx payment.Tx) error {
		var err error
		w, err = tx.Work(ctx, kind, id)
		return err
	})
	return w
}

// checkNoWork fails unless no item of that kind and id is queued.
func checkNoWork(t *testing.T, s payment.Storage, kind payment.WorkKind, id uuid.UUID) {
	t.Helper()
	view(t, s, func(ctx context.Context, tx payment.Tx) error {
		w, err := tx.Work(ctx, kind, id)
		if !payment.IsNotFound(err) {
			t.Errorf("Work(%s, %s) = %+v, %v; want NOT_FOUND", kind, id, w, err)
		}
		return nil
	})
}

// checkItem compares a queued item with what it should be.
func checkItem(t *testing.T, s payment.Storage, want payment.Work) {
	t.Helper()
	checkSame(t, readWork(t, s, want.Kind, want.ID), &want)
}

func claim(t *testing.T, s payment.Storage, claimant string, now, leaseUntil time.Time, limit int) []payment.Work {
	t.Helper()
	var got []payment.Work
	update(t, s, func(ctx context.Context, tx payment.Tx) error {
		var err error
		got, err = tx.ClaimWork(ctx, claimant, now, leaseUntil, limit)
		return err
	})
	return got
}

// checkClaim claims and compares the items returned, in order, with want.
func checkClaim(t *testing.T, s payment.Storage, claimant string, now, leaseUntil time.Time, limit int, want ...payment.Work) {
	t.Helper()
	got := claim(t, s, claimant, now, leaseUntil, limit)
	if len(got) != len(want) || !slices.EqualFunc(got, want, func(a, b payment.Work) bool { return a.Kind == b.Kind && a.ID == b.ID }) {
		t.Fatalf("ClaimWork(%s, now %s, limit %d) = %s\nwant %s", claimant, now.UTC().Format(time.RFC3339Nano), limit,
			workString(got), workString(want))
	}
	for i := range got {
		checkSame(t, got[i], want[i])
	}
}

func workString(ws []payment.Work) string {
	s := "["
	for _, w := range ws {
		s += fmt.Sprintf(" %s:%s", w.Kind, w.ID)
	}
	return s + " ]"
}

// queued is an item as EnqueueWork leaves it.
func queued(kind payment.WorkKind, id uuid.UUID, due time.Time) payment.Work {
	return payment.Work{Kind: kind, ID: id, Due: due}
}

// claimed is w as a claim by claimant until leaseUntil returns it.
func claimed(w payment.Work, claimant string, leaseUntil time.Time) payment.Work {
	w.ClaimedBy, w.LeaseUntil = claimant, leaseUntil
	return w
}

func testWorkQueue(t *testing.T, s payment.Storage) {
	id, other := payment.NewID(), payment.NewID()
	enqueue(t, s, payment.WorkAuthorize, id, at(10))
	enqueue(t, s, payment.WorkCapture, id, at(20))
	enqueue(t, s, payment.WorkRefund, other, at(30))
	checkItem(t, s, queued(payment.WorkAuthorize, id, at(10)))
	checkItem(t, s, queued(payment.WorkCapture, id, at(20)))
	checkItem(t, s, queued(payment.WorkRefund, other, at(30)))

	t.Run("EnqueueAgainChangesNothing", func(t *testing.T) {
		enqueue(t, s, payment.WorkAuthorize, id, at(99))
		checkItem(t, s, queued(payment.WorkAuthorize, id, at(10)))
		// Not even for an item that was claimed and failed meanwhile.
		w := checkOne(t, claim(t, s, "w1", at(10), at(40), 1), payment.WorkAuthorize, id)
		update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.RetryWork(ctx, w, at(50), "down") })
		enqueue(t, s, payment.WorkAuthorize, id, at(11))
		checkItem(t, s, payment.Work{Kind: payment.WorkAuthorize, ID: id, Attempts: 1, Due: at(50), LastError: "down"})
	})
	t.Run("NotFound", func(t *testing.T) {
		checkNoWork(t, s, payment.WorkCancel, id)       // another kind of a queued id
		checkNoWork(t, s, payment.WorkRefund, id)       //
		checkNoWork(t, s, payment.WorkAuthorize, other) // a queued id of another kind
		checkNoWork(t, s, payment.WorkAuthorize, payment.NewID())
	})
	t.Run("UnknownKind", func(t *testing.T) {
		// The engine stores kinds it has never heard of: a newer gateway
		// queues them for the instances that know them.
		enqueue(t, s, "webhook", id, at(5))
		checkItem(t, s, queued("webhook", id, at(5)))
	})
}

func checkOne(t *testing.T, got []payment.Work, kind payment.WorkKind, id uuid.UUID) payment.Work {
	t.Helper()
	if len(got) != 1 || got[0].Kind != kind || got[0].ID != id {
		t.Fatalf("claimed %s, want [ %s:%s ]", workString(got), kind, id)
	}
	return got[0]
}

func testClaimWork(t *testing.T, s payment.Storage) {
	// Queued in this order, due as follows: b and c share a due time, so
	// their queueing order decides; a is due last although queued first.
	a, b, c, d, e := payment.NewID(), payment.NewID(), payment.NewID(), payment.NewID(), payment.NewID()
	due := at(100).Truncate(time.Microsecond)
	items := []payment.Work{
		queued(payment.WorkAuthorize, a, due.Add(3*time.Second)),
		queued(payment.WorkCapture, c, due),
		queued(payment.WorkAuthorize, c, due),
		queued(payment.WorkRefund, b, due.Add(-time.Hour)),
		queued(payment.WorkCancel, d, due.Add(time.Second)),
		queued(payment.WorkRefund, e, due.Add(time.Hour)),
	}
	for _, w := range items {
		enqueue(t, s, w.Kind, w.ID, w.Due)
	}
	wa, wcCap, wcAuth, wb, wd, we := items[0], items[1], items[2], items[3], items[4], items[5]
	lease := due.Add(time.Minute)

	t.Run("NothingDueYet", func(t *testing.T) {
		checkClaim(t, s, "w1", due.Add(-time.Hour-time.Microsecond), lease, 10)
	})
	t.Run("DueFirstThenQueueOrder", func(t *testing.T) {
		// At due exactly (inclusive, to the microsecond): b, then the two
		// items of c in the order they were queued; d and a are not due.
		checkClaim(t, s, "w1", due, lease, 2, claimed(wb, "w1", lease), claimed(wcCap, "w1", lease))
		checkClaim(t, s, "w2", due, lease, 10, claimed(wcAuth, "w2", lease))
		checkItem(t, s, claimed(wcCap, "w1", lease))
		checkItem(t, s, claimed(wcAuth, "w2", lease))
	})
	t.Run("LeasedItemsAreNotClaimedAgain", func(t *testing.T) {
		later := due.Add(30 * time.Second)
		checkClaim(t, s, "w3", later, lease, 10, claimed(wd, "w3", lease), claimed(wa, "w3", lease))
		checkClaim(t, s, "w1", later, lease, 10) // not even by their own claimant
		checkClaim(t, s, "w4", lease.Add(-time.Microsecond), lease, 10)
	})
	t.Run("Limit", func(t *testing.T) {
		// A limit of one after the leases ended takes the earliest due.
		next := lease.Add(time.Minute)
		checkClaim(t, s, "w5", lease, next, 1, claimed(wb, "w5", next))
	})
	t.Run("NotDueStaysUnclaimed", func(t *testing.T) {
		checkItem(t, s, we)
	})
}

// testWorkLeaseExpiry: the items of a worker that crashed (claimed, never
// completed, retried nor given back) are claimed again by another once the
// lease has ended, and not a microsecond before; the crashed worker's late
// word then changes nothing.
func testWorkLeaseExpiry(t *testing.T, s payment.Storage) {
	id, spare := payment.NewID(), payment.NewID()
	now := at(200).Truncate(time.Microsecond)
	enqueue(t, s, payment.WorkAuthorize, id, now)
	lease := now.Add(10 * time.Second)
	crashed := checkOne(t, claim(t, s, "crashed", now, lease, 10), payment.WorkAuthorize, id)

	checkClaim(t, s, "survivor", lease.Add(-time.Microsecond), lease.Add(time.Hour), 10)
	next := lease.Add(10 * time.Second)
	w := queued(payment.WorkAuthorize, id, now)
	checkClaim(t, s, "survivor", lease, next, 10, claimed(w, "survivor", next))
	held := claimed(w, "survivor", next)

	t.Run("StaleClaimantChangesNothing", func(t *testing.T) {
		update(t, s, func(ctx context.Context, tx payment.Tx) error {
			return errors.Join(
				tx.ExtendWorkLease(ctx, crashed, lease.Add(time.Hour)),
				tx.RetryWork(ctx, crashed, now.Add(time.Hour), "late"),
				tx.ReleaseWork(ctx, crashed),
				tx.CompleteWork(ctx, crashed),
			)
		})
		checkItem(t, s, held)
	})
	t.Run("EmptyClaimantHoldsNothing", func(t *testing.T) {
		enqueue(t, s, payment.WorkRefund, spare, now)
		unclaimed := queued(payment.WorkRefund, spare, now)
		update(t, s, func(ctx context.Context, tx payment.Tx) error {
			return errors.Join(
				tx.ExtendWorkLease(ctx, unclaimed, lease),
				tx.RetryWork(ctx, unclaimed, now.Add(time.Hour), "nobody's"),
				tx.CompleteWork(ctx, unclaimed),
			)
		})
		checkItem(t, s, unclaimed)
	})
	t.Run("ExtendedLeaseHolds", func(t *testing.T) {
		further := next.Add(time.Minute)
		update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.ExtendWorkLease(ctx, held, further) })
		checkItem(t, s, claimed(w, "survivor", further))
		// Only the spare refund is claimable, until the extended lease ends.
		checkClaim(t, s, "third", further.Add(-time.Microsecond), further.Add(time.Hour), 10,
			claimed(queued(payment.WorkRefund, spare, now), "third", further.Add(time.Hour)))
		update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.CompleteWork(ctx, held) })
		checkNoWork(t, s, payment.WorkAuthorize, id)
		checkClaim(t, s, "third", further.Add(2*time.Hour), further.Add(3*time.Hour), 10,
			claimed(queued(payment.WorkRefund, spare, now), "third", further.Add(3*time.Hour)))
	})
}

// testWorkAttempts: each item counts its own failed attempts and keeps its
// own next attempt time and last error; giving an item back is no attempt.
func testWorkAttempts(t *testing.T, s payment.Storage) {
	ch, r := payment.NewID(), payment.NewID()
	now := at(300).Truncate(time.Microsecond)
	lease := now.Add(time.Minute)
	enqueue(t, s, payment.WorkAuthorize, ch, now)
	enqueue(t, s, payment.WorkCapture, ch, now)
	enqueue(t, s, payment.WorkRefund, r, now)
	auth, capt, ref := queued(payment.WorkAuthorize, ch, now), queued(payment.WorkCapture, ch, now), queued(payment.WorkRefund, r, now)
	checkClaim(t, s, "w", now, lease, 10, claimed(auth, "w", lease), claimed(capt, "w", lease), claimed(ref, "w", lease))

	// The authorisation fails: one attempt, due in a second.
	update(t, s, func(ctx context.Context, tx payment.Tx) error {
		return tx.RetryWork(ctx, claimed(auth, "w", lease), now.Add(time.Second), "acquirer unreachable")
	})
	auth.Attempts, auth.Due, auth.LastError = 1, now.Add(time.Second), "acquirer unreachable"
	checkItem(t, s, auth)
	// Its capture and the refund are untouched: still claimed, no attempt.
	checkItem(t, s, claimed(capt, "w", lease))
	checkItem(t, s, claimed(ref, "w", lease))

	// Not due before its time, due at it.
	checkClaim(t, s, "w", now.Add(time.Second-time.Microsecond), lease, 10)
	checkClaim(t, s, "w", now.Add(time.Second), lease, 10, claimed(auth, "w", lease))

	// Fails again: two attempts, the last error replaced.
	update(t, s, func(ctx context.Context, tx payment.Tx) error {
		return tx.RetryWork(ctx, claimed(auth, "w", lease), now.Add(3*time.Second), "timeout")
	})
	auth.Attempts, auth.Due, auth.LastError = 2, now.Add(3*time.Second), "timeout"
	checkItem(t, s, auth)

	// The capture fails once: its own count starts at one.
	update(t, s, func(ctx context.Context, tx payment.Tx) error {
		return tx.RetryWork(ctx, claimed(capt, "w", lease), now.Add(time.Second), "capture refused to answer")
	})
	capt.Attempts, capt.Due, capt.LastError = 1, now.Add(time.Second), "capture refused to answer"
	checkItem(t, s, capt)
	checkItem(t, s, auth)

	// The refund is given back (its worker stopped): no attempt, same due
	// time, claimable at once.
	update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.ReleaseWork(ctx, claimed(ref, "w", lease)) })
	checkItem(t, s, ref)
	checkClaim(t, s, "w2", now, lease, 10, claimed(ref, "w2", lease))

	// Completing one kind leaves the other kind of the same id queued.
	checkClaim(t, s, "w2", now.Add(3*time.Second), lease, 10, claimed(capt, "w2", lease), claimed(auth, "w2", lease))
	update(t, s, func(ctx context.Context, tx payment.Tx) error {
		return tx.CompleteWork(ctx, claimed(auth, "w2", lease))
	})
	checkNoWork(t, s, payment.WorkAuthorize, ch)
	checkItem(t, s, claimed(capt, "w2", lease))
}

// testWorkConcurrentClaims: workers claiming at the same time never get
// the same item, and between them get every item.
func testWorkConcurrentClaims(t *testing.T, s payment.Storage) {
	const items, workers, batch = 120, 8, 3
	now := at(400)
	want := map[uuid.UUID]bool{}
	update(t, s, func(ctx context.Context, tx payment.Tx) error {
		for range items {
			id := payment.NewID()
			want[id] = true
			if err := tx.InsertWork(ctx, payment.WorkAuthorize, id, now); err != nil {
				return err
			}
		}
		return nil
	})
	var (
		mu    sync.Mutex
		owner = map[uuid.UUID]string{}
		twice []string
		wg    sync.WaitGroup
		start = make(chan struct{})
		errs  = make([]error, workers)
	)
	for i := range workers {
		claimant := fmt.Sprintf("worker-%d", i)
		wg.Go(func() {
			<-start
			// Bounded, so that an engine handing out leased items again
			// fails here instead of claiming for ever.
			for range items {
				var got []payment.Work
				err := s.Update(context.Background(), func(tx payment.Tx) error {
					var err error
					got, err = tx.ClaimWork(context.Background(), claimant, now, now.Add(time.Hour), batch)
					return err
				})
				if err != nil {
					errs[i] = err
					return
				}
				if len(got) == 0 {
					return
				}
				mu.Lock()
				for _, w := range got {
					if prev, ok := owner[w.ID]; ok {
						twice = append(twice, fmt.Sprintf("%s by %s and %s", w.ID, prev, claimant))
					}
					owner[w.ID] = claimant
				}
				mu.Unlock()
			}
		})
	}
	close(start)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	for _, d := range twice {
		t.Errorf("claimed twice: %s", d)
	}
	for id := range want {
		if _, ok := owner[id]; !ok {
			t.Errorf("item %s was never claimed", id)
		}
	}
	if len(owner) != items {
		t.Errorf("%d items claimed, want %d", len(owner), items)
	}
}

// testWorkRollback: the queue is written in the caller's transaction. A
// state change that rolls back leaves no item behind, and a claim, a retry
// or a completion that rolls back leaves the item as it was.
func testWorkRollback(t *testing.T, s payment.Storage) {
	now := at(500).Truncate(time.Microsecond)
	lease := now.Add(time.Minute)
	kept, done, failed := payment.NewID(), payment.NewID(), payment.NewID()
	enqueue(t, s, payment.WorkRefund, done, now)
	enqueue(t, s, payment.WorkRefund, failed, now)
	held := claim(t, s, "w", now, lease, 10)
	if len(held) != 2 {
		t.Fatalf("setting up: claimed %s, want two items", workString(held))
	}
	enqueue(t, s, payment.WorkCancel, kept, now)

	w := newTenants(t, s)
	tok := newToken(w.st, 1)
	createTokens(t, s, tok)
	ch := newCharge(tok, 1)
	ch.Status, ch.CaptureState, ch.ChargedAmount = payment.ChargePending, payment.CaptureNone, nil
	updateRolledBack(t, s, func(ctx context.Context, tx payment.Tx) []func() error {
		return []func() error{
			func() error { return tx.CreateCharge(ctx, ch) },
			func() error { return tx.InsertWork(ctx, payment.WorkAuthorize, ch.ID, now) },
			func() error { return tx.CompleteWork(ctx, held[0]) },
			func() error { return tx.RetryWork(ctx, held[1], now.Add(time.Hour), "rolled back") },
			func() error {
				got, err := tx.ClaimWork(ctx, "other", now, lease, 10)
				if err == nil && len(got) != 2 {
					// The cancel, and the charge's own new item: a
					// transaction sees what it queued.
					err = fmt.Errorf("claim inside the transaction got %s, want two items", workString(got))
				}
				return err
			},
		}
	})
	view(t, s, func(ctx context.Context, tx payment.Tx) error {
		if _, err := tx.Charge(ctx, ch.ID); !payment.IsNotFound(err) {
			t.Errorf("charge after rollback: %v, want NOT_FOUND", err)
		}
		return nil
	})
	checkNoWork(t, s, payment.WorkAuthorize, ch.ID)
	checkItem(t, s, held[0])
	checkItem(t, s, held[1])
	checkItem(t, s, queued(payment.WorkCancel, kept, now))
	// And nothing else is claimable: the rolled-back item is not merely
	// invisible to Work.
	checkClaim(t, s, "after", now, lease, 10, claimed(queued(payment.WorkCancel, kept, now), "after", lease))
}

// testWorkQueueStats: WorkQueueStats(now) gives, per kind with queued
// items and sorted by kind, how many are due at now (due <= now at the
// microsecond, as ClaimWork counts: claimed ones too, they are running)
// and how many later, the earliest due time of those due, how many failed
// at least once and the most failures of one item. A completed item is
// gone from them.
func testWorkQueueStats(t *testing.T, s payment.Storage) {
	stats := func(t *testing.T, now time.Time) []payment.WorkQueueStats {
		t.Helper()
		var got []payment.WorkQueueStats
		view(t, s, func(ctx context.Context, tx payment.Tx) error {
			var err error
			got, err = tx.WorkQueueStats(ctx, now)
			return err
		})
		return got
	}
	// now has nanoseconds: it counts truncated to the microsecond.
	now := at(600)
	if now.Nanosecond()%1000 == 0 {
		t.Fatalf("setting up: now %s has no nanoseconds", now.Format(time.RFC3339Nano))
	}
	if got := stats(t, now); len(got) != 0 {
		t.Fatalf("WorkQueueStats of an empty queue = %+v, want no rows", got)
	}

	// The oldest authorisation of all is completed: it counts no more.
	done := payment.NewID()
	enqueue(t, s, payment.WorkAuthorize, done, now.Add(-5*time.Hour))
	w := checkOne(t, claim(t, s, "w", now.Add(-5*time.Hour), now.Add(time.Hour), 10), payment.WorkAuthorize, done)
	update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.CompleteWork(ctx, w) })
	// A capture fails twice and backs off to a minute after now.
	retried := payment.NewID()
	enqueue(t, s, payment.WorkCapture, retried, now.Add(-3*time.Hour))
	w = checkOne(t, claim(t, s, "w", now.Add(-3*time.Hour), now.Add(time.Hour), 10), payment.WorkCapture, retried)
	update(t, s, func(ctx context.Context, tx payment.Tx) error {
		return tx.RetryWork(ctx, w, now.Add(-2*time.Hour), "down")
	})
	w = checkOne(t, claim(t, s, "w", now.Add(-2*time.Hour), now.Add(time.Hour), 10), payment.WorkCapture, retried)
	update(t, s, func(ctx context.Context, tx payment.Tx) error {
		return tx.RetryWork(ctx, w, now.Add(time.Minute), "down again")
	})
	// Another capture is due half an hour before now.
	enqueue(t, s, payment.WorkCapture, payment.NewID(), now.Add(-30*time.Minute))
	// An authorisation due an hour before now is claimed, its lease
	// running past now: still due.
	running := payment.NewID()
	enqueue(t, s, payment.WorkAuthorize, running, now.Add(-time.Hour))
	checkOne(t, claim(t, s, "w", now.Add(-time.Hour), now.Add(time.Hour), 10), payment.WorkAuthorize, running)
	// One due at now exactly, one a microsecond later, one an hour later.
	enqueue(t, s, payment.WorkAuthorize, payment.NewID(), now)
	enqueue(t, s, payment.WorkAuthorize, payment.NewID(), now.Truncate(time.Microsecond).Add(time.Microsecond))
	enqueue(t, s, payment.WorkAuthorize, payment.NewID(), now.Add(time.Hour))

	auth := func(due, scheduled int, oldest time.Time) payment.WorkQueueStats {
		return payment.WorkQueueStats{Kind: payment.WorkAuthorize, Due: due, Scheduled: scheduled, OldestDue: oldest}
	}
	capt := func(due, scheduled int, oldest time.Time) payment.WorkQueueStats {
		return payment.WorkQueueStats{Kind: payment.WorkCapture, Due: due, Scheduled: scheduled, OldestDue: oldest,
			Retrying: 1, MaxAttempts: 2}
	}
	var never time.Time
	for _, c := range []struct {
		name string
		now  time.Time
		want []payment.WorkQueueStats
	}{
		{"BeforeAll", now.Add(-6 * time.Hour), []payment.WorkQueueStats{auth(0, 4, never), capt(0, 2, never)}},
		{"AtNow", now, []payment.WorkQueueStats{auth(2, 2, now.Add(-time.Hour)), capt(1, 1, now.Add(-30*time.Minute))}},
		// A microsecond earlier, the item due at now is not due yet; the
		// nanoseconds before the next microsecond change nothing.
		{"MicrosecondBefore", now.Add(-time.Microsecond),
			[]payment.WorkQueueStats{auth(1, 3, now.Add(-time.Hour)), capt(1, 1, now.Add(-30*time.Minute))}},
		{"EndOfTheMicrosecond", now.Truncate(time.Microsecond).Add(time.Microsecond - time.Nanosecond),
			[]payment.WorkQueueStats{auth(2, 2, now.Add(-time.Hour)), capt(1, 1, now.Add(-30*time.Minute))}},
		{"NextMicrosecond", now.Truncate(time.Microsecond).Add(time.Microsecond),
			[]payment.WorkQueueStats{auth(3, 1, now.Add(-time.Hour)), capt(1, 1, now.Add(-30*time.Minute))}},
		{"AfterAll", now.Add(2 * time.Hour), []payment.WorkQueueStats{auth(4, 0, now.Add(-time.Hour)), capt(2, 0, now.Add(-30*time.Minute))}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := stats(t, c.now)
			if len(got) != len(c.want) {
				t.Fatalf("WorkQueueStats(%s) = %+v\nwant %+v", c.now.Format(time.RFC3339Nano), got, c.want)
			}
			for i, want := range c.want {
				g := got[i]
				checkTime(t, fmt.Sprintf("%s OldestDue", want.Kind), g.OldestDue, want.OldestDue)
				g.OldestDue = want.OldestDue
				if g != want {
					t.Errorf("WorkQueueStats(%s)[%d] = %+v\nwant %+v", c.now.Format(time.RFC3339Nano), i, got[i], want)
				}
			}
		})
	}
}
