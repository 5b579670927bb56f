package payment

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
)

// ChangeFeed carries news between the gateway processes that share one
// database: which objects changed (so that a long poll held by one process
// answers as soon as another finishes the charge it waits on), that work
// was queued (so that an idle worker elsewhere claims it now rather than
// at its next tick), that events were recorded (event streams), and which
// app tokens were revoked (so that no process trusts one for the rest of
// its auth cache's lifetime).
//
// News only ever hurries things along. Every process still re-reads on its
// own: a long poll every LongPollRecheck, the worker every tick, an app
// token once AuthCacheTTL has passed. News lost to a dropped connection or
// a full outbox costs latency, never correctness, which is why the feed
// may drop it rather than slow a request down.
type ChangeFeed interface {
	// Publish tells the other processes what this one committed. It is
	// called after the commit, never inside a transaction.
	Publish(ctx context.Context, n News) error
	// Listen delivers what other processes publish until ctx is done or
	// the connection fails (it then returns the error; the Service
	// listens again after a pause). News this process published may be
	// delivered back to it; that is harmless.
	Listen(ctx context.Context, deliver func(News)) error
}

// News is one batch of changes.
type News struct {
	// Changed are objects (charges, tokens, subscriptions, …) that
	// changed: their long polls wake and read them again.
	Changed []uuid.UUID
	// Revoked are app tokens revoked: no process may accept them again.
	Revoked []uuid.UUID
	// Work says items were queued for the worker; Events that events were
	// recorded.
	Work, Events bool
}

// Empty reports whether n carries nothing.
func (n News) Empty() bool {
	return len(n.Changed) == 0 && len(n.Revoked) == 0 && !n.Work && !n.Events
}

// maxOutbox bounds the ids the outbox holds while a Publish is under way;
// past it news is dropped (see ChangeFeed: only latency is lost).
const maxOutbox = 10_000

// newsOutbox gathers this process's news between publications, so that a
// request never waits for the feed and a burst of changes leaves in a few
// batches rather than one message each.
type newsOutbox struct {
	mu      sync.Mutex
	pending News
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
	if len(o.pending.Changed)+len(o.pending.Revoked) >= maxOutbox {
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
func (o *newsOutbox) take() (News, int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	n, dropped := o.pending, o.dropped
	o.pending, o.dropped = News{}, 0
	return n, dropped
}

// feedRetry is how long the Service waits before listening again after
// the feed's connection failed.
const feedRetry = time.Second

// RunChangeFeed publishes this process's news and acts on the other
// processes' until ctx is done. Without a ChangeFeed in the Config it
// returns at once.
func (s *Service) RunChangeFeed(ctx context.Context, log *slog.Logger) {
	if s.feed == nil {
		return
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s.publishNews(ctx, log)
	}()
	for ctx.Err() == nil {
		err := s.feed.Listen(ctx, s.hearNews)
		if ctx.Err() != nil {
			break
		}
		log.Warn("change feed: listening again after an error", "error", err)
		// Whatever was published while nobody listened is not coming:
		// every waiter reads again now rather than at its next recheck.
		s.changes.notifyAll()
		s.wakeWorkerHere()
		s.events.notify()
		select {
		case <-ctx.Done():
		case <-time.After(feedRetry):
		}
	}
	wg.Wait()
}

func (s *Service) publishNews(ctx context.Context, log *slog.Logger) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.outbox.ready:
		}
		n, dropped := s.outbox.take()
		if dropped > 0 {
			log.Warn("change feed: news dropped while the outbox was full", "dropped", dropped)
		}
		if n.Empty() {
			continue
		}
		if err := s.feed.Publish(ctx, n); err != nil && ctx.Err() == nil {
			log.Warn("change feed: publishing failed; other processes will find the changes when they read again", "error", err)
		}
	}
}

// hearNews acts on another process's news, on this process only: nothing
// heard is published again.
func (s *Service) hearNews(n News) {
	for _, id := range n.Revoked {
		s.markAppTokenRevoked(id)
	}
	for _, id := range n.Changed {
		s.changes.notifyHere(id)
	}
	if n.Work {
		s.wakeWorkerHere()
	}
	if n.Events {
		s.events.notify()
	}
}
