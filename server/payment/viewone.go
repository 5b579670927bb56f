package payment

import (
	"context"
	"time"
)

// OneReadViewer is a Storage that can run a function making exactly one
// read without a transaction around it: a single statement is its own
// consistent snapshot, so the transaction's begin and end would buy
// nothing. The hottest reads (GET of a charge, polled by every checkout)
// go through it when the engine offers it.
type OneReadViewer interface {
	// ViewOne runs fn, which must make exactly one read.
	ViewOne(ctx context.Context, fn func(Tx) error) error
}

// ViewOne passes a one-read view to the engine, or runs it as a View when
// the engine offers none.
func (e *eventingStorage) ViewOne(ctx context.Context, fn func(Tx) error) error {
	v, ok := e.Storage.(OneReadViewer)
	if !ok {
		return e.View(ctx, fn)
	}
	start := time.Now()
	err := v.ViewOne(ctx, fn)
	e.s.meter.Transaction(TransactionOneRead, time.Since(start))
	return err
}

// viewOne runs fn, which makes exactly one read, in the cheapest view the
// storage offers.
func (s *Service) viewOne(ctx context.Context, fn func(Tx) error) error {
	if v, ok := s.storage.(OneReadViewer); ok {
		return v.ViewOne(ctx, fn)
	}
	return s.storage.View(ctx, fn)
}
