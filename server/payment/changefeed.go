package payment

import (
	"context"

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
