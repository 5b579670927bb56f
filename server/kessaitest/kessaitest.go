// Package kessaitest is the test kit every package of the gateway shares: a
// fake clock, WaitFor for conditions that become true in the background, and
// CheckGoroutines, which fails a test that leaves goroutines running.
//
// It imports no package of this module, so the tests of any package —
// including the domain and the storage engines — can use it without an
// import cycle. The gateway fixture lives in package main's tests instead,
// because it must build the gateway through the same function main uses.
package kessaitest

import (
	"sync"
	"testing"
	"time"
)

// Clock is a clock that moves only when told. It satisfies payment.Clock and
// limit.Clock and is safe for concurrent use, so a test can move it while the
// gateway's goroutines read it.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock stopped at start, in UTC as the gateway's own
// clock reports it.
func NewClock(start time.Time) *Clock {
	return &Clock{now: start.UTC()}
}

// Now returns the clock's current time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock by d; a negative d moves it back, as a wall clock
// stepped by NTP would.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t.UTC()
}

// The polling interval of WaitFor starts small so that a condition that is
// almost true costs a test little, and grows so that a slow one does not keep
// a CPU busy (the race detector makes every poll expensive). It stays short
// enough for a benchmark to time the wait for a drain with it.
const (
	firstPoll = time.Millisecond
	maxPoll   = 25 * time.Millisecond
)

// WaitFor polls cond until it returns true and fails the test, naming what it
// waited for, if that takes longer than timeout. cond runs on the calling
// goroutine; it is always called at least once, and once more at the
// deadline, so a condition that turns true while the last interval elapses
// still counts.
func WaitFor(tb testing.TB, timeout time.Duration, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	interval := firstPoll
	for {
		if cond() {
			return
		}
		left := time.Until(deadline)
		if left <= 0 {
			tb.Fatalf("timed out after %v waiting for %s", timeout, what)
			return
		}
		time.Sleep(min(interval, left))
		interval = min(2*interval, maxPoll)
	}
}
