package charging

import (
	"context"

	"github.com/kessai/kessai/server/payment"
)

// recordEffect notes on the key a request runs under (ref; nil for a
// request without one) what the transaction makes, in that transaction.
// A reservation taken over meanwhile fails it with IDEMPOTENCY_KEY_CONFLICT,
// so that it rolls back: the retry that took the key over runs the request
// itself, and one key never makes two objects.
func recordEffect(ctx context.Context, tx payment.Tx, ref *payment.IdempotencyRef, eff payment.IdempotentEffect) error {
	if ref == nil {
		return nil
	}
	held, err := tx.RecordIdempotentEffect(ctx, *ref, eff)
	if err != nil {
		return err
	}
	if !held {
		return payment.Errorf(payment.CodeIdempotencyConflict,
			"the idempotency key was taken over by a retry of this request, which runs it instead")
	}
	return nil
}
