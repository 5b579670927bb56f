package postgres

import (
	"context"

	"github.com/kessai/kessai/server/sqlstore"
)

// writeEach runs fn with each statement a transaction of its own, for the
// idempotency keys and key fingerprints (sqlstore.Direct), never a part of
// a request's transaction. One statement each is enough:
//
//   - Reserve's INSERT … ON CONFLICT DO NOTHING waits for a reservation of
//     the same key that is not yet committed, so no two reservations both
//     insert; the SELECT after it sees the row that prevented the insert,
//     unless it was deleted in between (released or swept), and then the
//     insert is tried again.
//   - TakeOver is one UPDATE … RETURNING. A domain transaction recording
//     an effect under the old lock holds the row until it ends: the
//     UPDATE waits for it, then (READ COMMITTED) checks the row as it
//     committed, effect included, and RETURNING gives that row.
//   - RecordIdempotentEffect runs in the domain's REPEATABLE READ
//     transaction: a takeover that committed after its snapshot makes its
//     UPDATE fail with a serialization failure, and Update runs the
//     transaction again on a snapshot where the lock has moved.
//   - DeleteExpired's batches skip rows another sweep is deleting
//     (FOR UPDATE SKIP LOCKED) instead of waiting for them.
//   - KeyFingerprint's SELECT, a snapshot of its own, comes after the
//     INSERT, which waited for any concurrent first insert to commit.
func (db *DB) writeEach(ctx context.Context, fn func(sqlstore.Querier) error) error {
	return fn(&querier{tx: db.pool, aborted: new(error)})
}
