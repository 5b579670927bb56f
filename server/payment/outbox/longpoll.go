package outbox

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
)

// LongPoll reads an object and, while progress() says it is still being
// processed, waits up to wait for it to move on before answering: until
// it is done, or has reached another stage (a charge that went from
// pending to awaiting its shopper is news to its poller, who now fetches
// the issuer token).
func (db *DB) LongPoll(ctx context.Context, id uuid.UUID, wait time.Duration, read func() error, progress func() (stage string, busy bool)) error {
	if wait <= 0 {
		return read()
	}
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	first := true
	var start string
	for {
		changed, unsubscribe := db.changes.subscribe(id)
		if err := read(); err != nil {
			unsubscribe()
			return err
		}
		stage, busy := progress()
		if first {
			start, first = stage, false
		}
		if !busy || stage != start {
			unsubscribe()
			return nil
		}
		recheck := time.NewTimer(db.pollRecheck)
		select {
		case <-changed:
		case <-recheck.C:
		case <-deadline.C:
			recheck.Stop()
			unsubscribe()
			return read()
		case <-ctx.Done():
			recheck.Stop()
			unsubscribe()
			return ctx.Err()
		}
		recheck.Stop()
		unsubscribe()
	}
}

// changeNotifier wakes long polls when an object they wait on changes on
// this process. Changes made by other processes are seen by re-reading,
// or sooner through the change feed.
type changeNotifier struct {
	mu      sync.Mutex
	waiters map[uuid.UUID][]chan struct{}
	// news takes the news for the other processes (nil without a
	// ChangeFeed).
	news *newsOutbox
}

func (n *changeNotifier) subscribe(id uuid.UUID) (<-chan struct{}, func()) {
	ch := make(chan struct{})
	n.mu.Lock()
	if n.waiters == nil {
		n.waiters = map[uuid.UUID][]chan struct{}{}
	}
	n.waiters[id] = append(n.waiters[id], ch)
	n.mu.Unlock()
	return ch, func() {
		n.mu.Lock()
		defer n.mu.Unlock()
		list := n.waiters[id]
		for i, c := range list {
			if c == ch {
				n.waiters[id] = append(list[:i], list[i+1:]...)
				break
			}
		}
		if len(n.waiters[id]) == 0 {
			delete(n.waiters, id)
		}
	}
}

// notify wakes the long polls waiting on id, here and, through the
// change feed, in the other processes.
func (n *changeNotifier) notify(id uuid.UUID) {
	n.notifyHere(id)
	n.news.add(id, uuid.Nil, false, false)
}

// notifyHere wakes the long polls waiting on id in this process only.
func (n *changeNotifier) notifyHere(id uuid.UUID) {
	n.mu.Lock()
	list := n.waiters[id]
	delete(n.waiters, id)
	n.mu.Unlock()
	for _, c := range list {
		close(c)
	}
}

// notifyAll wakes every long poll of this process, to read again.
func (n *changeNotifier) notifyAll() {
	n.mu.Lock()
	all := n.waiters
	n.waiters = nil
	n.mu.Unlock()
	for _, list := range all {
		for _, c := range list {
			close(c)
		}
	}
}

// eventBell rings when events were committed on this process, for the
// event streams (kessai listen) to read them at once; they also re-read on
// their own for events of other processes.
type eventBell struct {
	ch atomic.Pointer[chan struct{}]
}

func (b *eventBell) wait() <-chan struct{} {
	for {
		if c := b.ch.Load(); c != nil {
			return *c
		}
		c := make(chan struct{})
		if b.ch.CompareAndSwap(nil, &c) {
			return c
		}
	}
}

func (b *eventBell) notify() {
	if c := b.ch.Swap(nil); c != nil {
		close(*c)
	}
}
