package payment

import (
	"context"
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
