package outbox

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/kessai/kessai/server/payment"
)

// maxNews bounds the ids the outbox holds while a Publish is under way;
// past it news is dropped (see payment.ChangeFeed: only latency is lost).
const maxNews = 10_000

// newsOutbox gathers this process's news between publications, so that a
// request never waits for the feed and a burst of changes leaves in a few
// batches rather than one message each.
type newsOutbox struct {
	mu      sync.Mutex
	pending payment.News
	dropped int
	ready   chan struct{}
}

func newNewsOutbox() *newsOutbox {
	return &newsOutbox{ready: make(chan struct{}, 1)}
}

// add merges news into the outbox. A nil outbox (no feed) takes nothing.
func (o *newsOutbox) add(changed, revoked uuid.UUID, work, events bool) {
	if o == nil {
		return
	}
	o.mu.Lock()
	if len(o.pending.Changed)+len(o.pending.Revoked) >= maxNews {
		o.dropped++
	} else {
		if changed != uuid.Nil {
			o.pending.Changed = append(o.pending.Changed, changed)
		}
		if revoked != uuid.Nil {
			o.pending.Revoked = append(o.pending.Revoked, revoked)
		}
	}
	o.pending.Work = o.pending.Work || work
	o.pending.Events = o.pending.Events || events
	o.mu.Unlock()
	select {
	case o.ready <- struct{}{}:
	default:
	}
}

// take empties the outbox, reporting how much was dropped since the last
// take.
func (o *newsOutbox) take() (payment.News, int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	n, dropped := o.pending, o.dropped
	o.pending, o.dropped = payment.News{}, 0
	return n, dropped
}

// feedRetry is how long the DB waits before listening again after the
// feed's connection failed.
const feedRetry = time.Second

// RunChangeFeed publishes this process's news and acts on the other
// processes' until ctx is done. Without a ChangeFeed in the Config it
// returns at once.
func (db *DB) RunChangeFeed(ctx context.Context, log *slog.Logger) {
	if db.feed == nil {
		return
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		db.publishNews(ctx, log)
	}()
	for ctx.Err() == nil {
		err := db.feed.Listen(ctx, db.hearNews)
		if ctx.Err() != nil {
			break
		}
		log.Warn("change feed: listening again after an error", "error", err)
		// Whatever was published while nobody listened is not coming:
		// every waiter reads again now rather than at its next recheck.
		db.changes.notifyAll()
		db.wakeWorkerHere()
		db.events.notify()
		select {
		case <-ctx.Done():
		case <-time.After(feedRetry):
		}
	}
	wg.Wait()
}

func (db *DB) publishNews(ctx context.Context, log *slog.Logger) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-db.news.ready:
		}
		n, dropped := db.news.take()
		if dropped > 0 {
			log.Warn("change feed: news dropped while the outbox was full", "dropped", dropped)
		}
		if n.Empty() {
			continue
		}
		if err := db.feed.Publish(ctx, n); err != nil && ctx.Err() == nil {
			log.Warn("change feed: publishing failed; other processes will find the changes when they read again", "error", err)
		}
	}
}

// hearNews acts on another process's news, on this process only: nothing
// heard is published again.
func (db *DB) hearNews(n payment.News) {
	for _, id := range n.Revoked {
		if db.revokedElsewhere != nil {
			db.revokedElsewhere(id)
		}
	}
	for _, id := range n.Changed {
		db.changes.notifyHere(id)
	}
	if n.Work {
		db.wakeWorkerHere()
	}
	if n.Events {
		db.events.notify()
	}
}
