// Package services puts the domain's capabilities together over one
// storage engine: the set the gateway serves (server/gateway) and the tests
// drive. Each capability is a service of its own, with its own methods;
// they share one outbox.DB, so that a change and its effects commit
// together whichever capability makes it.
package services

import (
	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/payment/charging"
)

// Set is the domain's services, one per capability.
type Set struct {
	Charging *charging.Service
}

// New returns the services over a storage engine.
func New(storage payment.Storage, clock payment.Clock, codec payment.TokenCodec, cfg payment.Config) *Set {
	return &Set{Charging: charging.NewService(storage, clock, codec, cfg)}
}
