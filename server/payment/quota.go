package payment

import (
	"context"
	"time"
)

// QuotaKey names one counter of a limited resource: what is counted, for
// whom, and in which period ("" for resources counted while active, the UTC
// date for daily ones).
type QuotaKey struct {
	Resource string
	Scope    string
	Period   string
}

// Quota is a resource limit (README, "Rate limits and other limits"). Adding a limited resource
// is one Quota value and a call to take it inside the creating transaction.
type Quota struct {
	// Resource is also the field named in the RESOURCE_LIMIT_REACHED error.
	Resource string
	Limit    int
	// Daily quotas count what was created in the current UTC day; the
	// others count what is active now and are released when an object
	// stops being active.
	Daily bool
}

// ResourceLimits are the resource limits' numbers; configuration may
// change them.
type ResourceLimits struct {
	AppTokens         int
	TestChargesPerDay int
	// Webhooks is how many active webhooks a store may have, and a
	// merchant merchant-level ones; 0 is the default.
	Webhooks int
	// DuplicateWindow is the duplicate-charge rule's window.
	DuplicateWindow time.Duration
}

// DefaultWebhooks is the active webhooks per store and per merchant.
const DefaultWebhooks = 20

// DefaultResourceLimits are the spec's values.
func DefaultResourceLimits() ResourceLimits {
	return ResourceLimits{AppTokens: 20, TestChargesPerDay: 1440, DuplicateWindow: 30 * time.Second, Webhooks: DefaultWebhooks}
}

func (q Quota) key(scope string, now time.Time) QuotaKey {
	k := QuotaKey{Resource: q.Resource, Scope: scope}
	if q.Daily {
		k.Period = now.UTC().Format(time.DateOnly)
	}
	return k
}

// Take counts one unit for scope, or answers RESOURCE_LIMIT_REACHED. It must
// run in the transaction that creates the object, so that the count and the
// object land together or not at all.
func (q Quota) Take(ctx context.Context, tx Tx, scope string, now time.Time) error {
	ok, err := tx.TakeQuota(ctx, q.key(scope, now), q.Limit)
	if err != nil {
		return err
	}
	if !ok {
		return &Error{
			Code:    CodeResourceLimit,
			Fields:  []FieldError{{Field: q.Resource, Reason: string(CodeResourceLimit)}},
			Message: q.Resource + " limit reached",
		}
	}
	return nil
}

// Release gives back the unit of an object that stopped being active.
func (q Quota) Release(ctx context.Context, tx Tx, scope string, now time.Time) error {
	if q.Daily {
		return nil
	}
	return tx.ReleaseQuota(ctx, q.key(scope, now))
}
