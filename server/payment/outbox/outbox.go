// Package outbox runs the domain's transactions and carries out, once
// each one has committed, what it left behind: its events (with their
// webhook deliveries), the work it queued, the long polls of what it
// changed, the Meter's notes, and the news for the other processes on the
// same database. Every capability writes through a DB, so that whoever
// reads a service method sees each of its effects asked for by name on
// the transaction (Tx) that makes the change, and nothing is told of a
// change that was rolled back.
package outbox

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/kessai/kessai/server/payment"
)

// Config is what a DB needs besides its storage.
type Config struct {
	Clock payment.Clock
	// Meter is told how long transactions take and what they settled
	// (nil: nothing counts them).
	Meter payment.Meter
	// EncodeEvent renders the resource of each event as the API shows it.
	// Without it no events are recorded (tests of the rules alone).
	EncodeEvent payment.EventEncoder
	// ChangeFeed links the processes that share one database; nil for a
	// process alone on its store.
	ChangeFeed payment.ChangeFeed
	// LongPollRecheck is how often a long poll re-reads the object it
	// waits on, for changes made by another process (changes made here
	// wake it at once). Default 1 s.
	LongPollRecheck time.Duration
}

// DB is the domain's storage as its services use it.
type DB struct {
	storage     payment.Storage
	clock       payment.Clock
	meter       payment.Meter
	encodeEvent payment.EventEncoder
	// wake has a token when the worker has work to claim.
	wake    chan struct{}
	changes changeNotifier
	events  eventBell
	// feed and news carry news to and from the other processes on the
	// same database (both nil for one process alone).
	feed        payment.ChangeFeed
	news        *newsOutbox
	pollRecheck time.Duration
	// revokedElsewhere is told of the app tokens another process revoked.
	revokedElsewhere func(uuid.UUID)
}

// longPollRecheck is how often, by default, a long poll re-reads storage,
// for changes made by another process that this one is not told about.
const longPollRecheck = time.Second

// New returns a DB over a storage engine.
func New(storage payment.Storage, cfg Config) *DB {
	if cfg.LongPollRecheck <= 0 {
		cfg.LongPollRecheck = longPollRecheck
	}
	if cfg.Meter == nil {
		cfg.Meter = payment.NoMeter{}
	}
	db := &DB{
		storage:     storage,
		clock:       cfg.Clock,
		meter:       cfg.Meter,
		encodeEvent: cfg.EncodeEvent,
		wake:        make(chan struct{}, 1),
		pollRecheck: cfg.LongPollRecheck,
	}
	if cfg.ChangeFeed != nil {
		db.feed, db.news = cfg.ChangeFeed, newNewsOutbox()
		db.changes.news = db.news
	}
	return db
}

// Update runs fn in a read-write transaction and, once it has committed,
// carries out the effects fn asked for (Tx). The transaction is timed for
// the Meter, whether it commits or not.
func (db *DB) Update(ctx context.Context, fn func(tx *Tx) error) error {
	var w *Tx
	// A stopwatch, not a rule's time: the injected clock may stand still.
	start := time.Now()
	err := db.storage.Update(ctx, func(tx payment.Tx) error {
		w = &Tx{Tx: tx, db: db}
		return fn(w)
	})
	db.meter.Transaction(payment.TransactionUpdate, time.Since(start))
	if err != nil || w == nil {
		return err
	}
	for _, st := range w.settled {
		db.meter.Settled(st.kind, st.status, st.errorName)
	}
	if w.work {
		db.WakeWorker()
	}
	if w.events {
		db.events.notify()
		db.news.add(uuid.Nil, uuid.Nil, false, true)
	}
	for _, id := range w.polls {
		db.changes.notify(id)
	}
	return nil
}

// View runs fn in a read-only transaction, timed for the Meter.
func (db *DB) View(ctx context.Context, fn func(payment.Tx) error) error {
	start := time.Now()
	err := db.storage.View(ctx, fn)
	db.meter.Transaction(payment.TransactionView, time.Since(start))
	return err
}

// ViewOne runs fn, which makes exactly one read, in the cheapest view the
// storage offers, timed for the Meter.
func (db *DB) ViewOne(ctx context.Context, fn func(payment.Tx) error) error {
	v, ok := db.storage.(payment.OneReadViewer)
	if !ok {
		return db.View(ctx, fn)
	}
	start := time.Now()
	err := v.ViewOne(ctx, fn)
	db.meter.Transaction(payment.TransactionOneRead, time.Since(start))
	return err
}

// Changed wakes the long polls of id, here and in the other processes,
// for a change made outside an Update of this DB (an acquirer's answer
// recorded by the worker is one: Update wakes its own through WakePolls).
func (db *DB) Changed(id uuid.UUID) { db.changes.notify(id) }

// WakeWorker wakes the worker, here and in the other processes.
func (db *DB) WakeWorker() {
	db.wakeWorkerHere()
	db.news.add(uuid.Nil, uuid.Nil, true, false)
}

// wakeWorkerHere wakes this process's worker only.
func (db *DB) wakeWorkerHere() {
	select {
	case db.wake <- struct{}{}:
	default:
	}
}

// WorkerWake delivers a token whenever work was queued, or made due, by
// this process or (through the change feed) another: the worker claims
// at once rather than at its next tick.
func (db *DB) WorkerWake() <-chan struct{} { return db.wake }

// EventsBell is closed once events were committed on this process (or
// another, through the change feed): the event streams read at once.
func (db *DB) EventsBell() <-chan struct{} { return db.events.wait() }

// AppTokenRevoked tells the other processes that an app token was
// revoked here, so that none of them trusts its cached copy any longer.
func (db *DB) AppTokenRevoked(id uuid.UUID) { db.news.add(uuid.Nil, id, false, false) }

// OnRevokedElsewhere sets who is told of the app tokens another process
// revoked (the auth cache). Set it before RunChangeFeed starts.
func (db *DB) OnRevokedElsewhere(f func(uuid.UUID)) { db.revokedElsewhere = f }
