// Package services puts the domain's capabilities together over one
// storage engine: the set the gateway serves (server/gateway) and the tests
// drive. Each capability is a service of its own, with its own methods;
// they share one outbox.DB, so that a change and its effects commit
// together whichever capability makes it.
package services

import (
	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/payment/access"
	"github.com/kessai/kessai/server/payment/charging"
	"github.com/kessai/kessai/server/payment/merchants"
	"github.com/kessai/kessai/server/payment/notify"
	"github.com/kessai/kessai/server/payment/outbox"
	"github.com/kessai/kessai/server/payment/subscriptions"
	"github.com/kessai/kessai/server/payment/workqueue"
)

// Set is the domain's services, one per capability, over one DB.
type Set struct {
	// DB runs the transactions of all of them; its RunChangeFeed links
	// this process with the others on the same database.
	DB *outbox.DB
	// Work is the work queue, whose worker carries out what the others
	// queue (each registers its kinds when it is made).
	Work *workqueue.Queue
	// Access holds the keys (app tokens, Authenticate); Console the
	// console's accounts.
	Access  *access.Service
	Console *access.Console
	// Charging, Tokens and Refunds are the payment rules' three faces.
	Charging *charging.Service
	Tokens   *charging.Tokens
	Refunds  *charging.Refunds
	Notify   *notify.Service
	// Subscriptions charge through Charging, which they follow.
	Subscriptions *subscriptions.Service
	Merchants     *merchants.Service
}

// New returns the services over a storage engine.
func New(storage payment.Storage, clock payment.Clock, codec payment.TokenCodec, cfg payment.Config) *Set {
	db := outbox.New(storage, outbox.Config{
		Clock: clock, Meter: cfg.Meter, EncodeEvent: cfg.EncodeEvent,
		ChangeFeed: cfg.ChangeFeed, LongPollRecheck: cfg.LongPollRecheck,
	})
	work := workqueue.New(db, workqueue.Config{
		Clock: clock, Meter: cfg.Meter, Concurrency: cfg.WorkConcurrency, Lease: cfg.WorkLease,
	})
	charges, tokens, refunds := charging.New(db, work, clock, cfg)
	keys, console := access.New(db, clock, codec, cfg)
	return &Set{
		DB:            db,
		Work:          work,
		Access:        keys,
		Console:       console,
		Charging:      charges,
		Tokens:        tokens,
		Refunds:       refunds,
		Notify:        notify.New(db, work, clock, cfg),
		Subscriptions: subscriptions.New(db, work, charges, clock, cfg),
		Merchants:     merchants.New(db, clock, cfg),
	}
}

// Pages answers, as one value, what the hosted pages ask of the domain:
// their packages each declare what they ask as one interface
// (checkout.Service, console.Service, sandboxpages.Service), whose methods
// belong to several capabilities.
type Pages struct {
	*accessRules
	*consoleRules
	*chargingRules
	*tokenRules
	*refundRules
	*notifyRules
	*subscriptionRules
	*merchantRules
}

// The capabilities under names of their own, so that Pages can hold them
// side by side.
type (
	accessRules       = access.Service
	consoleRules      = access.Console
	chargingRules     = charging.Service
	tokenRules        = charging.Tokens
	refundRules       = charging.Refunds
	notifyRules       = notify.Service
	subscriptionRules = subscriptions.Service
	merchantRules     = merchants.Service
)

// Pages returns the services as the hosted pages use them.
func (s *Set) Pages() *Pages {
	return &Pages{s.Access, s.Console, s.Charging, s.Tokens, s.Refunds, s.Notify, s.Subscriptions, s.Merchants}
}
