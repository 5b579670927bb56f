package charging

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/payment/outbox"
)

// workKind is how one kind of work is carried out: run does it, and
// completes the item in the transaction that applies the outcome; backoff
// says how long the item waits after its n-th failed attempt.
type workKind struct {
	run     func(s *Service, ctx context.Context, w payment.Work) error
	backoff func(failures int) time.Duration
}

var workKinds = map[payment.WorkKind]workKind{
	payment.WorkAuthorize:    {(*Service).authorize, retryDelay},
	payment.WorkCapture:      {(*Service).capture, retryDelay},
	payment.WorkRefund:       {(*Service).refund, retryDelay},
	payment.WorkCancel:       {(*Service).void, retryDelay},
	payment.WorkCVVAuthorize: {(*Service).cvvAuthorize, retryDelay},
	// Its own kind rather than a capture item due later: the merchant's
	// capture queues a capture item at once, and one of those already
	// queued for the charge would leave it waiting until capture_at.
	payment.WorkScheduledCapture:    {(*Service).scheduledCapture, retryDelay},
	payment.WorkTokenThreeDS:        {(*Service).tokenThreeDS, retryDelay},
	payment.WorkApprovalExpiry:      {(*Service).expireApproval, retryDelay},
	payment.WorkWebhookDelivery:     {(*Service).deliver, deliveryBackoff},
	payment.WorkSubscriptionPayment: {(*Service).chargePayment, retryDelay},
}

// retryDelay is how long an operation waits after its n-th failed
// attempt: doubling from a second, capped at five minutes, so that an
// acquirer outage is retried promptly and a hopeless operation (a card
// sealed with a key no longer configured) costs one log line every five
// minutes instead of one a second.
func retryDelay(n int) time.Duration {
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

// worker is the state a Service's worker keeps between items.
type worker struct {
	// id names this instance's claims; it is unique per Service, so two
	// services on one database are two workers.
	id          string
	concurrency int
	lease       time.Duration

	mu sync.Mutex
	// running holds the items this instance is carrying out, for the
	// lease renewals, and so that an item whose lease lapsed and that this
	// instance claimed again is not started a second time here.
	running map[payment.WorkKey]payment.Work
}

func newWorker(concurrency int, lease time.Duration) *worker {
	if concurrency <= 0 {
		concurrency = defaultWorkConcurrency
	}
	if lease <= 0 {
		lease = defaultWorkLease
	}
	host, _ := os.Hostname()
	return &worker{
		id:          fmt.Sprintf("%s/%d/%s", host, os.Getpid(), rand.Text()[:10]),
		concurrency: concurrency,
		lease:       lease,
		running:     map[payment.WorkKey]payment.Work{},
	}
}

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
func (s *Service) RunWorker(ctx context.Context, interval time.Duration, log *slog.Logger) {
	if interval <= 0 {
		interval = time.Second
	}
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	stopRenewing := s.renewLeases(ctx, log)
	defer stopRenewing()

	slots := s.work.concurrency
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
			work, claimed, err := s.claimWork(ctx, free)
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
				go func() { done <- s.runItem(ctx, w) }()
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
		case <-s.db.WorkerWake():
			more = true
		case <-ticker.C:
			more = true
		}
	}
}

// ProcessPending claims up to limit due items, carries them out (as many
// at once as RunWorker would) and returns how many it claimed once all are
// finished. It is RunWorker's single pass, for tests and tools.
func (s *Service) ProcessPending(ctx context.Context, limit int) (int, error) {
	work, claimed, err := s.claimWork(ctx, limit)
	if err != nil {
		return 0, err
	}
	stopRenewing := s.renewLeases(ctx, nil)
	defer stopRenewing()
	errs := make([]error, len(work))
	sem := make(chan struct{}, s.work.concurrency)
	var wg sync.WaitGroup
	for i, w := range work {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			errs[i] = s.runItem(ctx, w)
		})
	}
	wg.Wait()
	return claimed, errors.Join(errs...)
}

// claimWork claims up to limit items for this worker and returns those it
// is to start, and how many the claim returned. An item this instance is
// already running (claimed again after its lease lapsed) is not started
// twice: the run under way finishes it.
func (s *Service) claimWork(ctx context.Context, limit int) ([]payment.Work, int, error) {
	now := s.clock.Now()
	var claimed []payment.Work
	err := s.db.Update(ctx, func(tx *outbox.Tx) error {
		var err error
		claimed, err = tx.ClaimWork(ctx, s.work.id, now, now.Add(s.work.lease), limit)
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	s.work.mu.Lock()
	defer s.work.mu.Unlock()
	start := claimed[:0:0]
	for _, w := range claimed {
		if _, ok := s.work.running[w.Key()]; !ok {
			s.work.running[w.Key()] = w
			start = append(start, w)
		}
	}
	return start, len(claimed), nil
}

// runItem carries out one claimed item and settles its claim: its kind
// completes it in the transaction that applies the outcome; a failure
// makes it due again after its kind's back-off; a worker that is stopping
// gives it back as it was.
func (s *Service) runItem(ctx context.Context, w payment.Work) error {
	defer func() {
		s.work.mu.Lock()
		delete(s.work.running, w.Key())
		s.work.mu.Unlock()
	}()
	kind, known := workKinds[w.Kind]
	var err error
	if known {
		callCtx, cancel := context.WithTimeout(ctx, workCallTimeout)
		err = kind.run(s, callCtx, w)
		cancel()
	} else {
		// Queued by a newer version of the gateway: left, with its
		// back-off, for an instance that knows it.
		err = fmt.Errorf("unknown kind of work %q", w.Kind)
		kind.backoff = retryDelay
	}
	if err == nil || ctx.Err() == nil {
		meterKind := w.Kind
		if !known {
			meterKind = payment.UnknownWorkKind
		}
		s.meter.WorkAttempted(meterKind, err != nil)
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
		return s.db.Update(rctx, func(tx *outbox.Tx) error { return tx.ReleaseWork(rctx, w) })
	}
	due := s.clock.Now().Add(kind.backoff(w.Attempts + 1))
	uerr := s.db.Update(ctx, func(tx *outbox.Tx) error { return tx.RetryWork(ctx, w, due, truncateError(err)) })
	return errors.Join(fmt.Errorf("%s %s (attempt %d, next at %s): %w", w.Kind, w.ID, w.Attempts+1,
		due.Format(time.RFC3339), err), uerr)
}

// completeWork removes an item whose object no longer waits for it.
func (s *Service) completeWork(ctx context.Context, w payment.Work) error {
	return s.db.Update(ctx, func(tx *outbox.Tx) error { return tx.CompleteWork(ctx, w) })
}

// renewLeases extends, every third of a lease, the leases of the items this
// instance is running, until the returned function is called (which waits
// for it to stop).
func (s *Service) renewLeases(ctx context.Context, log *slog.Logger) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(max(s.work.lease/3, time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			s.work.mu.Lock()
			running := make([]payment.Work, 0, len(s.work.running))
			for _, w := range s.work.running {
				running = append(running, w)
			}
			s.work.mu.Unlock()
			if len(running) == 0 {
				continue
			}
			until := s.clock.Now().Add(s.work.lease)
			err := s.db.Update(ctx, func(tx *outbox.Tx) error {
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

// chargeAndCard reads a charge, its token and what the processor is
// given of it (paymentMethod.instrument: a card, opened from the vault).
func (s *Service) chargeAndCard(ctx context.Context, id uuid.UUID) (*payment.Charge, *payment.TransactionToken, payment.CardDetails, error) {
	var ch *payment.Charge
	var tok *payment.TransactionToken
	err := s.db.View(ctx, func(tx payment.Tx) error {
		var err error
		if ch, err = tx.Charge(ctx, id); err != nil {
			return err
		}
		tok, err = tx.Token(ctx, ch.TokenID)
		return err
	})
	if err != nil {
		return nil, nil, payment.CardDetails{}, err
	}
	m, err := methodOf(tok.PaymentType)
	if err != nil {
		return nil, nil, payment.CardDetails{}, err
	}
	card, err := m.instrument(s, tok)
	return ch, tok, card, err
}

// authorize carries a charge ready for its authorisation on, as its
// payment method does (paymentMethod.authorize): a card's to the
// acquirer's answer, after 3-D Secure where it is needed; a wallet's to
// awaiting its shopper.
func (s *Service) authorize(ctx context.Context, w payment.Work) error {
	ch, tok, card, err := s.chargeAndCard(ctx, w.ID)
	if err != nil {
		return err
	}
	if !ch.ReadyToAuthorize() {
		return s.completeWork(ctx, w)
	}
	m, err := methodOf(tok.PaymentType)
	if err != nil {
		return err
	}
	return m.authorize(ctx, s, w, ch, tok, card)
}

func (s *Service) capture(ctx context.Context, w payment.Work) error {
	id := w.ID
	ch, _, card, err := s.chargeAndCard(ctx, id)
	if err != nil {
		return err
	}
	if ch.CaptureState != payment.CaptureRequested || ch.Status != payment.ChargeAuthorized {
		return s.completeWork(ctx, w)
	}
	res, err := s.processor.Capture(ctx, ch.ID, card, ch.CaptureAmount, ch.Currency)
	if err != nil {
		return err
	}
	err = s.db.Update(ctx, func(tx *outbox.Tx) error {
		if err := tx.CompleteWork(ctx, w); err != nil {
			return err
		}
		ch, err := tx.Charge(ctx, id)
		if err != nil || ch.CaptureState != payment.CaptureRequested || ch.Status != payment.ChargeAuthorized {
			return err
		}
		if res.Error == nil {
			amount := ch.CaptureAmount
			ch.Status, ch.ChargedAmount, ch.CaptureState = payment.ChargeSuccessful, &amount, payment.CaptureDone
		} else {
			// Nothing was charged: the authorisation is gone with it.
			ch.Status, ch.Error, ch.CaptureState, ch.ChargedAmount = payment.ChargeFailed, res.Error, payment.CaptureNone, nil
		}
		ch.UpdatedOn = s.clock.Now()
		if err := s.moveCharge(ctx, tx, ch, payment.ChargeAuthorized); err != nil {
			return err
		}
		return tx.PutLedgerEntry(ctx, chargeLedgerEntry(ch))
	})
	if err == nil {
		s.db.Changed(id)
	}
	return err
}

// scheduledCapture asks, at a charge's capture_at, for the capture of the
// whole authorisation, as the merchant's capture would; the capture item it
// queues makes the acquirer call. A charge the merchant captured, voided,
// or asked to capture or void before then is left as it is: the merchant's
// own decision came first.
//
// The capture item is due at once; queuing it wakes the worker
// (requestCapture), so it does not wait for the next tick.
func (s *Service) scheduledCapture(ctx context.Context, w payment.Work) error {
	return s.db.Update(ctx, func(tx *outbox.Tx) error {
		if err := tx.CompleteWork(ctx, w); err != nil {
			return err
		}
		ch, err := tx.Charge(ctx, w.ID)
		if err != nil || ch.Status != payment.ChargeAuthorized || ch.CaptureState != payment.CaptureNone {
			return err
		}
		canceling, err := tx.PendingCancelFor(ctx, ch.ID)
		if err != nil || canceling {
			return err
		}
		return requestCapture(ctx, tx, ch, *ch.ChargedAmount, s.clock.Now())
	})
}

func (s *Service) refund(ctx context.Context, w payment.Work) error {
	id := w.ID
	var r *payment.Refund
	if err := s.db.View(ctx, func(tx payment.Tx) error {
		var err error
		r, err = tx.QueuedRefund(ctx, id)
		return err
	}); err != nil {
		return err
	}
	if r.Status != payment.OperationPending {
		return s.completeWork(ctx, w)
	}
	_, _, card, err := s.chargeAndCard(ctx, r.ChargeID)
	if err != nil {
		return err
	}
	res, err := s.processor.Refund(ctx, r.ID, card, r.Amount, r.Currency)
	if err != nil {
		return err
	}
	err = s.db.Update(ctx, func(tx *outbox.Tx) error {
		if err := tx.CompleteWork(ctx, w); err != nil {
			return err
		}
		r, err := tx.QueuedRefund(ctx, id)
		if err != nil || r.Status != payment.OperationPending {
			return err
		}
		r.Status, r.Error = operationOutcome(res)
		r.UpdatedOn = s.clock.Now()
		if err := tx.UpdateRefund(ctx, r); err != nil {
			return err
		}
		tx.NoteSettled(payment.SettledRefund, string(r.Status), r.Error)
		if err := tx.Announce(ctx, payment.EventRefundFinished, r); err != nil {
			return err
		}
		return tx.PutLedgerEntry(ctx, refundLedgerEntry(r))
	})
	if err == nil {
		s.db.Changed(id)
		s.db.Changed(r.ChargeID)
	}
	return err
}

func (s *Service) void(ctx context.Context, w payment.Work) error {
	id := w.ID
	var cn *payment.Cancel
	if err := s.db.View(ctx, func(tx payment.Tx) error {
		var err error
		cn, err = tx.QueuedCancel(ctx, id)
		return err
	}); err != nil {
		return err
	}
	if cn.Status != payment.OperationPending {
		return s.completeWork(ctx, w)
	}
	_, _, card, err := s.chargeAndCard(ctx, cn.ChargeID)
	if err != nil {
		return err
	}
	res, err := s.processor.Void(ctx, cn.ID, card)
	if err != nil {
		return err
	}
	err = s.db.Update(ctx, func(tx *outbox.Tx) error {
		if err := tx.CompleteWork(ctx, w); err != nil {
			return err
		}
		cn, err := tx.QueuedCancel(ctx, id)
		if err != nil || cn.Status != payment.OperationPending {
			return err
		}
		now := s.clock.Now()
		cn.Status, cn.Error = operationOutcome(res)
		if cn.Status == payment.OperationSuccessful {
			ch, err := tx.Charge(ctx, cn.ChargeID)
			if err != nil {
				return err
			}
			if ch.Status != payment.ChargeAuthorized || ch.CaptureState != payment.CaptureNone {
				// Captured meanwhile: the void came too late.
				cn.Status, cn.Error = payment.OperationFailed, payment.NewPaymentError(payment.ErrCancelUnavailable, "the charge was captured")
			} else {
				ch.Status, ch.UpdatedOn = payment.ChargeCanceled, now
				if err := s.moveCharge(ctx, tx, ch, payment.ChargeAuthorized); err != nil {
					return err
				}
				if err := tx.PutLedgerEntry(ctx, chargeLedgerEntry(ch)); err != nil {
					return err
				}
			}
		}
		cn.UpdatedOn = now
		if err := tx.UpdateCancel(ctx, cn); err != nil {
			return err
		}
		tx.NoteSettled(payment.SettledCancel, string(cn.Status), cn.Error)
		return tx.Announce(ctx, payment.EventCancelFinished, cn)
	})
	if err == nil {
		s.db.Changed(id)
		s.db.Changed(cn.ChargeID)
	}
	return err
}

func operationOutcome(res payment.ProcessorResult) (payment.OperationStatus, *payment.PaymentError) {
	switch {
	case res.Error == nil:
		return payment.OperationSuccessful, nil
	case res.Error.Code == payment.ErrProcessingError:
		return payment.OperationError, res.Error
	default:
		return payment.OperationFailed, res.Error
	}
}
