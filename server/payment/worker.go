package payment

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
)

// WorkKind is what the worker has to do.
type WorkKind string

// The kinds of work: authorise a pending charge, capture a requested
// capture, carry out a pending refund or cancel.
const (
	WorkAuthorize WorkKind = "authorize"
	WorkCapture   WorkKind = "capture"
	WorkRefund    WorkKind = "refund"
	WorkCancel    WorkKind = "cancel"
)

// Work is one unfinished operation, found in storage. Because the state of
// every operation is stored before the request that asked for it is
// answered, a crash loses nothing: after a restart the worker finds it again
// and finishes it. The acquirer is called outside any transaction and the
// answer is applied only if the object is still waiting for it, so running
// an operation twice (a crash between the call and the commit) changes
// nothing: the acquirer is idempotent per operation id.
type Work struct {
	Kind WorkKind
	ID   uuid.UUID
	// Attempts counts the earlier failed attempts at this kind of work on
	// this object: a charge's capture counts its own, not its
	// authorisation's, so it starts at the shortest retry delay.
	Attempts int
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

// RunWorker processes work until ctx ends: at once when woken, and every
// interval otherwise (to pick up what another instance or a restart left).
func (s *Service) RunWorker(ctx context.Context, interval time.Duration, log *slog.Logger) {
	if interval <= 0 {
		interval = time.Second
	}
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		for {
			n, err := s.ProcessPending(ctx, 32)
			if err != nil && ctx.Err() == nil {
				log.Error("worker", "error", err)
			}
			if n == 0 || err != nil {
				break
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
		case <-ticker.C:
		}
	}
}

func (s *Service) wakeWorker() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// ProcessPending carries out up to limit unfinished operations and returns
// how many it found.
func (s *Service) ProcessPending(ctx context.Context, limit int) (int, error) {
	var work []Work
	err := s.storage.View(ctx, func(tx Tx) error {
		var err error
		work, err = tx.PendingWork(ctx, s.clock.Now(), limit)
		return err
	})
	if err != nil {
		return 0, err
	}
	// Acquirer calls are slow (a real one takes about a second), so the
	// batch runs concurrently: throughput is then bounded by the acquirer's
	// capacity, not by 1/latency. Each item is distinct and re-checks its
	// state before and after the call, so order does not matter.
	errs := make([]error, len(work))
	sem := make(chan struct{}, workerConcurrency)
	var wg sync.WaitGroup
	for i, w := range work {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := s.process(ctx, w); err != nil {
				errs[i] = s.deferWork(ctx, w, err)
			}
		}()
	}
	wg.Wait()
	return len(work), errors.Join(errs...)
}

// workerConcurrency is how many acquirer calls one instance makes at once.
const workerConcurrency = 16

// deferWork holds a failed operation back for its retry delay and returns
// the failure, annotated, for the log.
func (s *Service) deferWork(ctx context.Context, w Work, failure error) error {
	if ctx.Err() != nil {
		return nil // shutting down: the operation is simply picked up again
	}
	until := s.clock.Now().Add(retryDelay(w.Attempts + 1))
	err := s.storage.Update(ctx, func(tx Tx) error { return tx.DeferWork(ctx, w, until) })
	return errors.Join(fmt.Errorf("%s %s (attempt %d, next at %s): %w", w.Kind, w.ID, w.Attempts+1,
		until.Format(time.RFC3339), failure), err)
}

func (s *Service) process(ctx context.Context, w Work) error {
	switch w.Kind {
	case WorkAuthorize:
		return s.authorize(ctx, w.ID)
	case WorkCapture:
		return s.capture(ctx, w.ID)
	case WorkRefund:
		return s.refund(ctx, w.ID)
	case WorkCancel:
		return s.void(ctx, w.ID)
	}
	return nil
}

// openCard decrypts a token's card for one acquirer call.
func (s *Service) openCard(tok *TransactionToken) (CardDetails, error) {
	number, err := s.vault.Open(tok.Card.SealedNumber, tok.ID[:])
	if err != nil {
		return CardDetails{}, err
	}
	d := CardDetails{Number: string(number), ExpMonth: tok.Card.ExpMonth, ExpYear: tok.Card.ExpYear, Cardholder: tok.Card.Cardholder}
	if tok.Card.SealedCVC.Data != nil {
		cvc, err := s.vault.Open(tok.Card.SealedCVC, cvcAssociated(tok.ID))
		if err != nil {
			return CardDetails{}, err
		}
		d.CVC = string(cvc)
	}
	return d, nil
}

// chargeAndCard reads a charge, its token and the card behind it.
func (s *Service) chargeAndCard(ctx context.Context, id uuid.UUID) (*Charge, *TransactionToken, CardDetails, error) {
	var ch *Charge
	var tok *TransactionToken
	err := s.storage.View(ctx, func(tx Tx) error {
		var err error
		if ch, err = tx.Charge(ctx, id); err != nil {
			return err
		}
		tok, err = tx.Token(ctx, ch.TokenID)
		return err
	})
	if err != nil {
		return nil, nil, CardDetails{}, err
	}
	card, err := s.openCard(tok)
	return ch, tok, card, err
}

func (s *Service) authorize(ctx context.Context, id uuid.UUID) error {
	ch, tok, card, err := s.chargeAndCard(ctx, id)
	if err != nil {
		return err
	}
	if ch.Status != ChargePending {
		return nil
	}
	res, err := s.processor.Authorize(ctx, AuthorizeRequest{
		ChargeID: ch.ID, Mode: ch.Mode, Card: card, Email: tok.Email,
		Amount: ch.RequestedAmount, Currency: ch.Currency, Capture: ch.Capture,
	})
	if err != nil {
		return err
	}
	err = s.storage.Update(ctx, func(tx Tx) error {
		ch, err := tx.Charge(ctx, id)
		if err != nil || ch.Status != ChargePending {
			return err
		}
		now := s.clock.Now()
		switch {
		case res.Error == nil && ch.Capture:
			amount := ch.RequestedAmount
			ch.Status, ch.ChargedAmount, ch.CaptureState = ChargeSuccessful, &amount, CaptureDone
		case res.Error == nil:
			amount := ch.RequestedAmount
			ch.Status, ch.ChargedAmount = ChargeAuthorized, &amount
		case res.Error.Code == ErrProcessingError:
			ch.Status, ch.Error = ChargeError, res.Error
		default:
			ch.Status, ch.Error = ChargeFailed, res.Error
		}
		ch.UpdatedOn = now
		if err := tx.UpdateCharge(ctx, ch); err != nil {
			return err
		}
		if err := tx.PutLedgerEntry(ctx, chargeLedgerEntry(ch)); err != nil {
			return err
		}
		// The CVC is kept only until the first authorisation.
		return tx.EraseTokenCVC(ctx, ch.TokenID)
	})
	if err == nil {
		s.changes.notify(id)
	}
	return err
}

func (s *Service) capture(ctx context.Context, id uuid.UUID) error {
	ch, _, card, err := s.chargeAndCard(ctx, id)
	if err != nil {
		return err
	}
	if ch.CaptureState != CaptureRequested || ch.Status != ChargeAuthorized {
		return nil
	}
	res, err := s.processor.Capture(ctx, ch.ID, card, ch.CaptureAmount, ch.Currency)
	if err != nil {
		return err
	}
	err = s.storage.Update(ctx, func(tx Tx) error {
		ch, err := tx.Charge(ctx, id)
		if err != nil || ch.CaptureState != CaptureRequested || ch.Status != ChargeAuthorized {
			return err
		}
		if res.Error == nil {
			amount := ch.CaptureAmount
			ch.Status, ch.ChargedAmount, ch.CaptureState = ChargeSuccessful, &amount, CaptureDone
		} else {
			// Nothing was charged: the authorisation is gone with it.
			ch.Status, ch.Error, ch.CaptureState, ch.ChargedAmount = ChargeFailed, res.Error, CaptureNone, nil
		}
		ch.UpdatedOn = s.clock.Now()
		if err := tx.UpdateCharge(ctx, ch); err != nil {
			return err
		}
		return tx.PutLedgerEntry(ctx, chargeLedgerEntry(ch))
	})
	if err == nil {
		s.changes.notify(id)
	}
	return err
}

func (s *Service) refund(ctx context.Context, id uuid.UUID) error {
	var r *Refund
	if err := s.storage.View(ctx, func(tx Tx) error {
		var err error
		r, err = tx.Refund(ctx, id)
		return err
	}); err != nil {
		return err
	}
	if r.Status != OperationPending {
		return nil
	}
	_, _, card, err := s.chargeAndCard(ctx, r.ChargeID)
	if err != nil {
		return err
	}
	res, err := s.processor.Refund(ctx, r.ID, card, r.Amount, r.Currency)
	if err != nil {
		return err
	}
	err = s.storage.Update(ctx, func(tx Tx) error {
		r, err := tx.Refund(ctx, id)
		if err != nil || r.Status != OperationPending {
			return err
		}
		r.Status, r.Error = operationOutcome(res)
		r.UpdatedOn = s.clock.Now()
		if err := tx.UpdateRefund(ctx, r); err != nil {
			return err
		}
		return tx.PutLedgerEntry(ctx, refundLedgerEntry(r))
	})
	if err == nil {
		s.changes.notify(id)
	}
	return err
}

func (s *Service) void(ctx context.Context, id uuid.UUID) error {
	var cn *Cancel
	if err := s.storage.View(ctx, func(tx Tx) error {
		var err error
		cn, err = tx.Cancel(ctx, id)
		return err
	}); err != nil {
		return err
	}
	if cn.Status != OperationPending {
		return nil
	}
	_, _, card, err := s.chargeAndCard(ctx, cn.ChargeID)
	if err != nil {
		return err
	}
	res, err := s.processor.Void(ctx, cn.ID, card)
	if err != nil {
		return err
	}
	err = s.storage.Update(ctx, func(tx Tx) error {
		cn, err := tx.Cancel(ctx, id)
		if err != nil || cn.Status != OperationPending {
			return err
		}
		now := s.clock.Now()
		cn.Status, cn.Error = operationOutcome(res)
		if cn.Status == OperationSuccessful {
			ch, err := tx.Charge(ctx, cn.ChargeID)
			if err != nil {
				return err
			}
			if ch.Status != ChargeAuthorized || ch.CaptureState != CaptureNone {
				// Captured meanwhile: the void came too late.
				cn.Status, cn.Error = OperationFailed, NewPaymentError(ErrCancelUnavailable, "the charge was captured")
			} else {
				ch.Status, ch.UpdatedOn = ChargeCanceled, now
				if err := tx.UpdateCharge(ctx, ch); err != nil {
					return err
				}
				if err := tx.PutLedgerEntry(ctx, chargeLedgerEntry(ch)); err != nil {
					return err
				}
			}
		}
		cn.UpdatedOn = now
		return tx.UpdateCancel(ctx, cn)
	})
	if err == nil {
		s.changes.notify(id)
		s.changes.notify(cn.ChargeID)
	}
	return err
}

func operationOutcome(res ProcessorResult) (OperationStatus, *PaymentError) {
	switch {
	case res.Error == nil:
		return OperationSuccessful, nil
	case res.Error.Code == ErrProcessingError:
		return OperationError, res.Error
	default:
		return OperationFailed, res.Error
	}
}

// changeNotifier wakes long polls when an object they wait on changes on
// this instance. Changes made by other instances are seen by re-reading.
type changeNotifier struct {
	mu      sync.Mutex
	waiters map[uuid.UUID][]chan struct{}
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

func (n *changeNotifier) notify(id uuid.UUID) {
	n.mu.Lock()
	list := n.waiters[id]
	delete(n.waiters, id)
	n.mu.Unlock()
	for _, c := range list {
		close(c)
	}
}

// longPollRecheck is how often, by default, a long poll re-reads storage,
// for changes made by another instance that this one is not told about
// (Config.LongPollRecheck).
const longPollRecheck = time.Second

// longPoll reads an object and, while waiting() says it is still being
// processed, waits for a change up to wait before reading it again.
func (s *Service) longPoll(ctx context.Context, id uuid.UUID, wait time.Duration, read func() error, waiting func() bool) error {
	if wait <= 0 {
		return read()
	}
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	for {
		changed, unsubscribe := s.changes.subscribe(id)
		if err := read(); err != nil || !waiting() {
			unsubscribe()
			return err
		}
		recheck := time.NewTimer(s.pollRecheck)
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
