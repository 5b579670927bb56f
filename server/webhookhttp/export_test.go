package webhookhttp

import (
	"errors"
	"net/netip"
	"testing"
)

// errFenced is the error of a connection the test fence refused: the rule
// let it through to an address off this machine.
var errFenced = errors.New("webhookhttp test fence: an address off this machine")

// NewFenced is New for tests: after the rule, the dialer also refuses any
// address that is not loopback or unspecified (which connects to this
// machine), failing the test, so that a broken rule sends no packet off
// the machine.
func NewFenced(t testing.TB, cfg Config) *Sender {
	s := New(cfg)
	s.fence = func(a netip.Addr) error {
		if a = a.Unmap(); a.IsLoopback() || a.IsUnspecified() {
			return nil
		}
		t.Errorf("the dialer was about to connect to %s", a)
		return errFenced
	}
	return s
}
