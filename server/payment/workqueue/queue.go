// Package workqueue carries out the domain's queued work: it claims due
// items from storage under a lease, runs each with the handler its kind
// was registered with, and completes, retries or gives it back. The
// capabilities register their kinds (charging: authorisations, captures,
// refunds…; subscriptions: scheduled payments; notify: webhook
// deliveries) when they are made; work is queued in the transaction of
// the change that needs it (outbox.Tx.EnqueueWork), which also wakes the
// worker.
package workqueue

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/payment/outbox"
)

// Handler is how one kind of work is carried out: Run does it, and
// completes the item in the transaction that applies the outcome; Backoff
// says how long the item waits after its n-th failed attempt (RetryDelay
// when nil).
type Handler struct {
	Run     func(ctx context.Context, w payment.Work) error
	Backoff func(failures int) time.Duration
}

// Config is what a Queue needs besides its DB.
type Config struct {
	Clock payment.Clock
	// Meter is told of every attempt (nil: nothing counts them).
	Meter payment.Meter
	// Concurrency is how many items the worker keeps in flight; Lease how
	// long a claimed item stays the worker's without a renewal (see
	// payment.Config.WorkConcurrency and WorkLease).
	Concurrency int
	Lease       time.Duration
}

// Queue is the work queue: its kinds, and the worker's state between
// items.
type Queue struct {
	db    *outbox.DB
	clock payment.Clock
	meter payment.Meter
	kinds map[payment.WorkKind]Handler
	// id names this instance's claims; it is unique per Queue, so two
	// queues on one database are two workers.
	id          string
	concurrency int
	lease       time.Duration

	mu sync.Mutex
	// running holds the items this instance is carrying out, for the
	// lease renewals, and so that an item whose lease lapsed and that this
	// instance claimed again is not started a second time here.
	running map[payment.WorkKey]payment.Work
}

// New returns a Queue over db with no kinds registered.
func New(db *outbox.DB, cfg Config) *Queue {
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = defaultWorkConcurrency
	}
	if cfg.Lease <= 0 {
		cfg.Lease = defaultWorkLease
	}
	if cfg.Meter == nil {
		cfg.Meter = payment.NoMeter{}
	}
	host, _ := os.Hostname()
	return &Queue{
		db:          db,
		clock:       cfg.Clock,
		meter:       cfg.Meter,
		kinds:       map[payment.WorkKind]Handler{},
		id:          fmt.Sprintf("%s/%d/%s", host, os.Getpid(), rand.Text()[:10]),
		concurrency: cfg.Concurrency,
		lease:       cfg.Lease,
		running:     map[payment.WorkKey]payment.Work{},
	}
}

// Handle registers the handler of a kind of work. A kind registered twice
// is a wiring mistake: it panics.
func (q *Queue) Handle(kind payment.WorkKind, h Handler) {
	if _, dup := q.kinds[kind]; dup {
		panic(fmt.Sprintf("workqueue: kind %q registered twice", kind))
	}
	if h.Backoff == nil {
		h.Backoff = RetryDelay
	}
	q.kinds[kind] = h
}

// Kinds are the kinds of work registered, sorted: the kinds this version
// carries out.
func (q *Queue) Kinds() []payment.WorkKind {
	kinds := make([]payment.WorkKind, 0, len(q.kinds))
	for k := range q.kinds {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	return kinds
}

// Complete removes an item whose object no longer waits for it.
func (q *Queue) Complete(ctx context.Context, w payment.Work) error {
	return q.db.Update(ctx, func(tx *outbox.Tx) error { return tx.CompleteWork(ctx, w) })
}

// RetryDelay is how long an operation waits after its n-th failed
// attempt: doubling from a second, capped at five minutes, so that an
// acquirer outage is retried promptly and a hopeless operation (a card
// sealed with a key no longer configured) costs one log line every five
// minutes instead of one a second.
func RetryDelay(n int) time.Duration {
	if n < 1 {
		n = 1
	}
	if n > 9 {
		return 5 * time.Minute
	}
	return min(time.Second<<(n-1), 5*time.Minute)
}

// Worker defaults (Config.WorkConcurrency, Config.WorkLease).
const (
	// An acquirer call mostly waits on the network, so one instance keeps
	// many in flight: the drain rate is at most concurrency / latency, so at
	// 300 ms a call 512 drain up to 1,700 charges a second, more than one
	// SQLite file accepts (an item waiting for its call is a goroutine and
	// a leased row, nothing more).
	defaultWorkConcurrency = 512
	// A lease is renewed every third of it while its item runs, so it only
	// ends for a worker that stopped renewing (crashed, or its database
	// unreachable for that long); it is also how long the items of a
	// crashed instance wait before another takes them.
	defaultWorkLease = 10 * time.Second
)

// workCallTimeout bounds one attempt. An acquirer that never answers would
// otherwise hold its slot, and with the renewals its item, for ever.
const workCallTimeout = 2 * time.Minute

// maxLastError bounds the error text stored with an item.
const maxLastError = 1000

// RunWorker carries out queued work until ctx ends. It keeps up to
// Config.WorkConcurrency items in flight and claims more as each one
// finishes, so one slow acquirer call holds one slot and never the rest;
// it looks for new work at once when woken (a request on this instance
// queued some) and every interval otherwise (work queued by another
// instance, retries coming due, leases of a crashed instance ending).
//
// When ctx ends, the calls in flight are cancelled and their items given
// back unchanged for any worker to take; RunWorker returns once every one
// of its goroutines has.
func (q *Queue) RunWorker(ctx context.Context, interval time.Duration, log *slog.Logger) {
	if interval <= 0 {
		interval = time.Second
	}
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	stopRenewing := q.renewLeases(ctx, log)
	defer stopRenewing()

	slots := q.concurrency
	done := make(chan error, slots)
	inFlight := 0
	finished := func(err error) {
		inFlight--
		if err != nil && ctx.Err() == nil {
			log.Error("worker", "error", err)
		}
	}
	// more: work may be due that is not claimed yet. It is set by a wake,
	// a tick, and a claim that filled every free slot.
	more := true
	for {
		if more && inFlight < slots && ctx.Err() == nil {
			free := slots - inFlight
			work, claimed, err := q.claimWork(ctx, free)
			if err != nil {
				if ctx.Err() == nil {
					log.Error("worker: claiming work", "error", err)
				}
				more = false // until the next tick or wake, not in a tight loop
			} else {
				more = claimed == free
			}
			for _, w := range work {
				inFlight++
				go func() { done <- q.runItem(ctx, w) }()
			}
		}
		select {
		case <-ctx.Done():
			for inFlight > 0 {
				finished(<-done)
			}
			return
		case err := <-done:
			finished(err)
			// Several may have finished together: one claim for all.
			for drained := false; !drained; {
				select {
				case err := <-done:
					finished(err)
				default:
					drained = true
				}
			}
		case <-q.db.WorkerWake():
			more = true
		case <-ticker.C:
			more = true
		}
	}
}

// ProcessPending claims up to limit due items, carries them out (as many
// at once as RunWorker would) and returns how many it claimed once all are
// finished. It is RunWorker's single pass, for tests and tools.
func (q *Queue) ProcessPending(ctx context.Context, limit int) (int, error) {
	work, claimed, err := q.claimWork(ctx, limit)
	if err != nil {
		return 0, err
	}
	stopRenewing := q.renewLeases(ctx, nil)
	defer stopRenewing()
	errs := make([]error, len(work))
	sem := make(chan struct{}, q.concurrency)
	var wg sync.WaitGroup
	for i, w := range work {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			errs[i] = q.runItem(ctx, w)
		})
	}
	wg.Wait()
	return claimed, errors.Join(errs...)
}

// claimWork claims up to limit items for this worker and returns those it
// is to start, and how many the claim returned. An item this instance is
// already running (claimed again after its lease lapsed) is not started
// twice: the run under way finishes it.
func (q *Queue) claimWork(ctx context.Context, limit int) ([]payment.Work, int, error) {
	now := q.clock.Now()
	var claimed []payment.Work
	err := q.db.Update(ctx, func(tx *outbox.Tx) error {
		var err error
		claimed, err = tx.ClaimWork(ctx, q.id, now, now.Add(q.lease), limit)
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	start := claimed[:0:0]
	for _, w := range claimed {
		if _, ok := q.running[w.Key()]; !ok {
			q.running[w.Key()] = w
			start = append(start, w)
		}
	}
	return start, len(claimed), nil
}

// runItem carries out one claimed item and settles its claim: its kind
// completes it in the transaction that applies the outcome; a failure
// makes it due again after its kind's back-off; a worker that is stopping
// gives it back as it was.
func (q *Queue) runItem(ctx context.Context, w payment.Work) error {
	defer func() {
		q.mu.Lock()
		delete(q.running, w.Key())
		q.mu.Unlock()
	}()
	kind, known := q.kinds[w.Kind]
	var err error
	if known {
		callCtx, cancel := context.WithTimeout(ctx, workCallTimeout)
		err = kind.Run(callCtx, w)
		cancel()
	} else {
		// Queued by a newer version of the gateway: left, with its
		// back-off, for an instance that knows it.
		err = fmt.Errorf("unknown kind of work %q", w.Kind)
		kind.Backoff = RetryDelay
	}
	if err == nil || ctx.Err() == nil {
		meterKind := w.Kind
		if !known {
			meterKind = payment.UnknownWorkKind
		}
		q.meter.WorkAttempted(meterKind, err != nil)
	}
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		// Stopping: the attempt did not fail, it was abandoned. Giving the
		// item back lets another instance, or the next start, take it at
		// once instead of when the lease ends. ctx is over, so the write
		// gets a short context of its own.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		return q.db.Update(rctx, func(tx *outbox.Tx) error { return tx.ReleaseWork(rctx, w) })
	}
	due := q.clock.Now().Add(kind.Backoff(w.Attempts + 1))
	uerr := q.db.Update(ctx, func(tx *outbox.Tx) error { return tx.RetryWork(ctx, w, due, truncateError(err)) })
	return errors.Join(fmt.Errorf("%s %s (attempt %d, next at %s): %w", w.Kind, w.ID, w.Attempts+1,
		due.Format(time.RFC3339), err), uerr)
}

// renewLeases extends, every third of a lease, the leases of the items this
// instance is running, until the returned function is called (which waits
// for it to stop).
func (q *Queue) renewLeases(ctx context.Context, log *slog.Logger) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(max(q.lease/3, time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			q.mu.Lock()
			running := make([]payment.Work, 0, len(q.running))
			for _, w := range q.running {
				running = append(running, w)
			}
			q.mu.Unlock()
			if len(running) == 0 {
				continue
			}
			until := q.clock.Now().Add(q.lease)
			err := q.db.Update(ctx, func(tx *outbox.Tx) error {
				for _, w := range running {
					if err := tx.ExtendWorkLease(ctx, w, until); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil && ctx.Err() == nil && log != nil {
				log.Error("worker: renewing leases", "error", err)
			}
		}
	}()
	return func() { cancel(); <-done }
}

// truncateError is an error's text, cut to what an item stores.
func truncateError(err error) string {
	msg := err.Error()
	if len(msg) <= maxLastError {
		return msg
	}
	cut := maxLastError
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return msg[:cut]
}

// Stats describes the work queue at the queue's now, one row per
// kind of work that has queued items, sorted by kind: for the metrics, read
// at every scrape. It reads in one aggregate query (see Tx.WorkQueueStats),
// outside any write transaction, and takes no caller: it is the operator's,
// not a merchant's, and names no object.
func (q *Queue) Stats(ctx context.Context) ([]payment.WorkQueueStats, error) {
	now := q.clock.Now()
	var stats []payment.WorkQueueStats
	err := q.db.View(ctx, func(tx payment.Tx) error {
		var err error
		stats, err = tx.WorkQueueStats(ctx, now)
		return err
	})
	if err != nil {
		return nil, err
	}
	return stats, nil
}
