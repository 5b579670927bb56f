package charging

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/kessai/kessai/server/payment"
)

// writeTx is one read-write transaction of the Service and what is to be
// done once it commits. It holds the storage's Tx, which writes exactly
// what it is asked to and nothing more: every effect of a change besides
// its rows is asked for by the service code that makes the change, through
// the methods below, in the same transaction —
//
//   - announce records an event and its webhook deliveries (the outbox),
//     and rings the event streams once committed;
//   - enqueueWork and rescheduleWork queue work and wake the worker once
//     committed;
//   - noteSettled tells the Meter, once committed, that a charge, refund
//     or cancel left pending;
//   - wakePolls wakes, once committed, the long polls of an object that
//     changed as a consequence of another (a subscription of its charge).
//
// The effects are gathered afresh on each run of the function (an engine
// may run it again after a conflict) and carried out only after a commit:
// nothing is told of what was rolled back.
type writeTx struct {
	payment.Tx
	s *Service
	// work: it queued work, or made some due, for the worker to wake to.
	// An event that no webhook hears queues none: waking the worker for it
	// cost an empty claim, a write of its own, per event.
	work bool
	// events: it recorded events, for the event streams to read.
	events bool
	// polls are objects whose long polls are woken once it commits.
	polls []uuid.UUID
	// settled are the charges, refunds and cancels it moved out of
	// pending, for the Meter once it commits.
	settled []settlement
}

// update runs fn in a read-write transaction and, once it has committed,
// carries out the effects fn asked for (writeTx). The transaction is timed
// for the Meter, whether it commits or not.
func (s *Service) update(ctx context.Context, fn func(w *writeTx) error) error {
	var w *writeTx
	// A stopwatch, not a rule's time: the injected clock may stand still.
	start := time.Now()
	err := s.storage.Update(ctx, func(tx payment.Tx) error {
		w = &writeTx{Tx: tx, s: s}
		return fn(w)
	})
	s.meter.Transaction(payment.TransactionUpdate, time.Since(start))
	if err != nil || w == nil {
		return err
	}
	for _, st := range w.settled {
		s.meter.Settled(st.kind, st.status, st.errorName)
	}
	if w.work {
		s.wakeWorker()
	}
	if w.events {
		s.events.Notify()
		s.outbox.Add(uuid.Nil, uuid.Nil, false, true)
	}
	for _, id := range w.polls {
		s.changes.Notify(id)
	}
	return nil
}

// view runs fn in a read-only transaction, timed for the Meter.
func (s *Service) view(ctx context.Context, fn func(payment.Tx) error) error {
	start := time.Now()
	err := s.storage.View(ctx, fn)
	s.meter.Transaction(payment.TransactionView, time.Since(start))
	return err
}

// enqueueWork queues an item of work due at due, and wakes the worker
// once the transaction commits.
func (w *writeTx) enqueueWork(ctx context.Context, kind payment.WorkKind, id uuid.UUID, due time.Time) error {
	if err := w.EnqueueWork(ctx, kind, id, due); err != nil {
		return err
	}
	w.work = true
	return nil
}

// rescheduleWork makes an item of work due at due (queuing it if it is
// not), and wakes the worker once the transaction commits.
func (w *writeTx) rescheduleWork(ctx context.Context, kind payment.WorkKind, id uuid.UUID, due time.Time) error {
	if err := w.RescheduleWork(ctx, kind, id, due); err != nil {
		return err
	}
	w.work = true
	return nil
}

// noteSettled tells the Meter, once the transaction commits, that a
// charge, refund or cancel (kind: SettledCharge…) reached status.
func (w *writeTx) noteSettled(kind string, status string, perr *payment.PaymentError) {
	w.settled = append(w.settled, settlement{kind, status, payment.PaymentErrorName(perr)})
}

// wakePolls wakes the long polls of id once the transaction commits.
func (w *writeTx) wakePolls(id uuid.UUID) {
	w.polls = append(w.polls, id)
}
