package univapay

import "github.com/kessai/kessai/server/payment"

// startOn is a subscription's schedule_settings.start_on
// (Subscription.StartsOn): the day asked for; else, when an initial amount
// comes first (charged, or a free first period), the day the recurring
// payments start, one cycle on, as UnivaPay's own answers show it beside an
// initial amount; else null (they start today).
//
// univapay-node's pollSubscriptionWithFirstCharge waits for a first charge
// unless initial_amount is falsy and start_on is ahead (hasImmediateCharge,
// dist/esm/resources/Subscriptions.js): with start_on null, a free first
// period (initial_amount 0, nothing charged) had it wait its ten minutes
// for a charge that never comes. Today's date is not written for a
// subscription that starts at once: the SDK reads YYYY-MM-DD as midnight
// UTC, which in Tokyo's morning is still ahead, so it would skip the
// charge made now.
func startOn(sub *payment.Subscription) *string { return optionalDate(sub.StartsOn()) }
