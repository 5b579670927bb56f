package sqlstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
)

// ---- the work queue

const workColumns = `seq, kind, object_id, attempts, due_at, claimed_by, lease_until, last_error`

// scanWork reads a work row and its seq, the order of items due together.
func scanWork(d Dialect, row Row) (payment.Work, int64, error) {
	var w payment.Work
	var seq int64
	var kind, id string
	var due, lease instant
	if err := row.Scan(&seq, &kind, &id, &w.Attempts, &due, &w.ClaimedBy, &lease, &w.LastError); err != nil {
		return w, 0, err
	}
	ids := idColumns{d: d, table: "work"}
	// Every item is for an object: here the empty string is no "absent" id.
	if id == "" {
		ids.fail("id", "object_id", errors.New("empty"))
	}
	if w.ID = ids.parse("object_id", id); ids.err != nil {
		return w, 0, ids.err
	}
	w.Kind, w.Due = payment.WorkKind(kind), due.t
	if w.ClaimedBy != "" && lease.valid {
		w.LeaseUntil = lease.t
	}
	return w, seq, nil
}

func (t *Tx) InsertWork(ctx context.Context, kind payment.WorkKind, id uuid.UUID, due time.Time) error {
	_, err := t.q.ExecContext(ctx, `INSERT INTO work (kind, object_id, due_at) VALUES (?, ?, ?)
		ON CONFLICT (kind, object_id) DO NOTHING`, string(kind), t.d.ID(id), t.d.Time(due))
	return err
}

// MoveWorkDue moves only due_at of an item already queued: its seq,
// attempts, last error and claim stay.
func (t *Tx) MoveWorkDue(ctx context.Context, kind payment.WorkKind, id uuid.UUID, due time.Time) error {
	_, err := t.q.ExecContext(ctx, `INSERT INTO work (kind, object_id, due_at) VALUES (?, ?, ?)
		ON CONFLICT (kind, object_id) DO UPDATE SET due_at = excluded.due_at`, string(kind), t.d.ID(id), t.d.Time(due))
	return err
}

func (t *Tx) Work(ctx context.Context, kind payment.WorkKind, id uuid.UUID) (*payment.Work, error) {
	w, _, err := scanWork(t.d, t.q.QueryRowContext(ctx, `SELECT `+workColumns+` FROM work WHERE kind = ? AND object_id = ?`,
		string(kind), t.d.ID(id)))
	if err != nil {
		return nil, notFound(err, "work")
	}
	return &w, nil
}

// ClaimWork is one statement of the engine's (Dialect.ClaimWork): SQLite
// runs it in a write transaction with one writer at a time (across
// processes too), so no two claims interleave; PostgreSQL takes the items
// FOR UPDATE SKIP LOCKED, so that a claim running at the same time skips
// them and takes others. The items come back in any order, and are
// sorted here: the earliest due first, then the first queued.
func (t *Tx) ClaimWork(ctx context.Context, claimant string, now, leaseUntil time.Time, limit int) ([]payment.Work, error) {
	if claimant == "" {
		return nil, fmt.Errorf("%s: claiming work needs a claimant", t.d.Name())
	}
	at := t.d.Time(now)
	rows, err := t.q.QueryContext(ctx, t.d.ClaimWork(workColumns), at, at, limit, claimant, t.d.Time(leaseUntil))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	type claimed struct {
		w   payment.Work
		seq int64
	}
	var got []claimed
	for rows.Next() {
		w, seq, err := scanWork(t.d, rows)
		if err != nil {
			return nil, err
		}
		got = append(got, claimed{w, seq})
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	slices.SortFunc(got, func(a, b claimed) int {
		return cmp.Or(a.w.Due.Compare(b.w.Due), cmp.Compare(a.seq, b.seq))
	})
	work := make([]payment.Work, len(got))
	for i, c := range got {
		work[i] = c.w
	}
	return work, nil
}

// heldBy is the condition that an item is still claimed by w's claimant;
// an empty claimant holds nothing.
const heldBy = `kind = ? AND object_id = ? AND claimed_by = ? AND claimed_by != ''`

func heldArgs(d Dialect, w payment.Work) []any { return []any{string(w.Kind), d.ID(w.ID), w.ClaimedBy} }

func (t *Tx) ExtendWorkLease(ctx context.Context, w payment.Work, until time.Time) error {
	_, err := t.q.ExecContext(ctx, `UPDATE work SET lease_until = ? WHERE `+heldBy,
		append([]any{t.d.Time(until)}, heldArgs(t.d, w)...)...)
	return err
}

func (t *Tx) CompleteWork(ctx context.Context, w payment.Work) error {
	_, err := t.q.ExecContext(ctx, `DELETE FROM work WHERE `+heldBy, heldArgs(t.d, w)...)
	return err
}

func (t *Tx) RetryWork(ctx context.Context, w payment.Work, due time.Time, lastError string) error {
	_, err := t.q.ExecContext(ctx, `UPDATE work SET attempts = attempts + 1, due_at = ?, last_error = ?, claimed_by = '', lease_until = `+
		t.d.NoLease()+` WHERE `+heldBy, append([]any{t.d.Time(due), lastError}, heldArgs(t.d, w)...)...)
	return err
}

func (t *Tx) ReleaseWork(ctx context.Context, w payment.Work) error {
	_, err := t.q.ExecContext(ctx, `UPDATE work SET claimed_by = '', lease_until = `+t.d.NoLease()+` WHERE `+heldBy,
		heldArgs(t.d, w)...)
	return err
}

// WorkQueueStats is one pass over the work table, grouped by kind. An item
// is due when due_at <= now, the very comparison of ClaimWork (now is
// stored as the due times were, truncated to the microsecond); the lease
// is not looked at, so a claimed item still counts as due. Kinds sort
// byte by byte, as Go sorts them.
//
// Cost: every queued row counts in some column, so no index can spare the
// query a row: it reads the whole table, O(queued items), under a snapshot
// no writer waits for. The table holds only pending work (CompleteWork
// deletes an item), hundreds of rows normally; a backlog of 100,000 reads
// in about 70 ms on SQLite (200 ms through its (kind, object_id) index,
// which SQLite would walk to group without sorting, looking every row up:
// hence Dialect.WholeTable) and 25 ms on PostgreSQL, once a scrape. A
// covering index (kind, due_at, attempts) would bring that to some 20 ms,
// at a cost on every enqueue, retry, reschedule and completion, for a size
// the queue reaches only in an incident, so there is none.
func (t *Tx) WorkQueueStats(ctx context.Context, now time.Time) ([]payment.WorkQueueStats, error) {
	at := t.d.Time(now)
	rows, err := t.q.QueryContext(ctx, `SELECT kind,
			COUNT(*) FILTER (WHERE due_at <= ?),
			COUNT(*) FILTER (WHERE due_at > ?),
			MIN(due_at) FILTER (WHERE due_at <= ?),
			COUNT(*) FILTER (WHERE attempts > 0),
			MAX(attempts)
		FROM `+t.d.WholeTable("work")+` GROUP BY kind ORDER BY `+t.d.Bytewise("kind"), at, at, at)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []payment.WorkQueueStats{}
	for rows.Next() {
		var st payment.WorkQueueStats
		var kind string
		var oldest instant
		if err := rows.Scan(&kind, &st.Due, &st.Scheduled, &oldest, &st.Retrying, &st.MaxAttempts); err != nil {
			return nil, err
		}
		st.Kind = payment.WorkKind(kind)
		if oldest.valid {
			st.OldestDue = oldest.t
		}
		out = append(out, st)
	}
	return out, rows.Err()
}
