package kessaitest

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// recorder stands in for a testing.TB so that the kit's own failures can be
// observed instead of failing these tests. Methods it does not override go to
// the real test.
type recorder struct {
	testing.TB
	mu       sync.Mutex
	failed   bool
	msgs     []string
	cleanups []func()
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed = true
	r.msgs = append(r.msgs, fmt.Sprintf(format, args...))
}

// Fatalf returns instead of ending the goroutine; the kit returns after it.
func (r *recorder) Fatalf(format string, args ...any) { r.Errorf(format, args...) }

func (r *recorder) Failed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failed
}

func (r *recorder) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }

func (r *recorder) runCleanups() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
}

func (r *recorder) message() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.msgs, "\n")
}

func TestClock(t *testing.T) {
	tokyo := time.FixedZone("JST", 9*3600)
	start := time.Date(2026, 4, 1, 9, 0, 0, 0, tokyo)
	c := NewClock(start)
	if got := c.Now(); !got.Equal(start) || got.Location() != time.UTC {
		t.Fatalf("Now() = %v, want %v in UTC", got, start)
	}
	c.Advance(90 * time.Second)
	if got, want := c.Now(), start.Add(90*time.Second); !got.Equal(want) {
		t.Fatalf("after Advance(90s): %v, want %v", got, want)
	}
	c.Advance(-time.Hour)
	if got, want := c.Now(), start.Add(90*time.Second-time.Hour); !got.Equal(want) {
		t.Fatalf("after Advance(-1h): %v, want %v", got, want)
	}
	later := time.Date(2027, 1, 1, 0, 0, 0, 0, tokyo)
	c.Set(later)
	if got := c.Now(); !got.Equal(later) || got.Location() != time.UTC {
		t.Fatalf("after Set: %v, want %v in UTC", got, later)
	}
}

func TestClockConcurrent(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := NewClock(start)
	const workers, steps = 8, 500
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range steps {
				c.Advance(time.Millisecond)
				_ = c.Now()
			}
		})
	}
	wg.Wait()
	if got, want := c.Now(), start.Add(workers*steps*time.Millisecond); !got.Equal(want) {
		t.Fatalf("after %d concurrent steps: %v, want %v", workers*steps, got, want)
	}
}

func TestWaitForReturnsOnceTrue(t *testing.T) {
	var ready atomic.Bool
	time.AfterFunc(20*time.Millisecond, func() { ready.Store(true) })
	r := &recorder{TB: t}
	start := time.Now()
	WaitFor(r, 5*time.Second, "the flag", ready.Load)
	if r.Failed() {
		t.Fatalf("WaitFor failed: %s", r.message())
	}
	if !ready.Load() {
		t.Fatal("WaitFor returned before the condition held")
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("WaitFor took %v for a condition true after 20ms", took)
	}
}

func TestWaitForTimesOut(t *testing.T) {
	r := &recorder{TB: t}
	calls := 0
	start := time.Now()
	WaitFor(r, 30*time.Millisecond, "the impossible", func() bool { calls++; return false })
	if took := time.Since(start); took < 30*time.Millisecond {
		t.Fatalf("gave up after %v, before the 30ms timeout", took)
	}
	if !r.Failed() {
		t.Fatal("WaitFor did not fail on timeout")
	}
	if msg := r.message(); !strings.Contains(msg, "the impossible") || !strings.Contains(msg, "30ms") {
		t.Fatalf("message %q does not name what was awaited and the timeout", msg)
	}
	if calls < 2 {
		t.Fatalf("cond called %d times in 30ms", calls)
	}
}

// A condition that becomes true exactly as the timeout runs out still counts:
// WaitFor looks once more at the deadline instead of sleeping past it.
func TestWaitForLooksAtDeadline(t *testing.T) {
	r := &recorder{TB: t}
	start := time.Now()
	const timeout = 40 * time.Millisecond
	WaitFor(r, timeout, "the deadline", func() bool { return time.Since(start) >= timeout })
	if r.Failed() {
		t.Fatalf("WaitFor failed: %s", r.message())
	}
}

// leakyWorker is named so that the leak report can be checked for it.
func leakyWorker(stop <-chan struct{}, done chan<- struct{}) {
	<-stop
	close(done)
}

func startLeakyWorker() (stop func()) {
	stopc, done := make(chan struct{}), make(chan struct{})
	go leakyWorker(stopc, done)
	return func() {
		close(stopc)
		<-done
	}
}

func TestCheckGoroutinesReportsLeak(t *testing.T) {
	r := &recorder{TB: t}
	checkGoroutines(r, 50*time.Millisecond)
	stop := startLeakyWorker()
	defer stop()
	r.runCleanups()
	if !r.Failed() {
		t.Fatal("a goroutine still running after the test was not reported")
	}
	if msg := r.message(); !strings.Contains(msg, "kessaitest.leakyWorker") || !strings.Contains(msg, "1 goroutine(s)") {
		t.Fatalf("report does not show the leaked goroutine's stack:\n%s", msg)
	}
}

func TestCheckGoroutinesWaitsForExit(t *testing.T) {
	r := &recorder{TB: t}
	checkGoroutines(r, 5*time.Second)
	stop := startLeakyWorker()
	time.AfterFunc(30*time.Millisecond, stop)
	r.runCleanups()
	if r.Failed() {
		t.Fatalf("a goroutine that ended within the wait was reported: %s", r.message())
	}
}

func TestCheckGoroutinesIgnoresOlder(t *testing.T) {
	stop := startLeakyWorker()
	defer stop()
	r := &recorder{TB: t}
	checkGoroutines(r, 50*time.Millisecond)
	r.runCleanups()
	if r.Failed() {
		t.Fatalf("a goroutine started before the check was reported: %s", r.message())
	}
}

func TestCheckGoroutinesQuietAfterFailure(t *testing.T) {
	r := &recorder{TB: t}
	checkGoroutines(r, 50*time.Millisecond)
	stop := startLeakyWorker()
	defer stop()
	r.Errorf("the test's own failure")
	r.runCleanups()
	if msg := r.message(); msg != "the test's own failure" {
		t.Fatalf("a failed test's report grew leak noise:\n%s", msg)
	}
}

// The real thing, on a real test: goroutines that end before the test does
// pass, subtests included.
func TestCheckGoroutines(t *testing.T) {
	CheckGoroutines(t)
	stop := startLeakyWorker()
	t.Run("subtest", func(t *testing.T) {})
	stop()
}

func TestBufferConcurrent(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 100 {
				b.Write([]byte("line\n"))
				_ = b.String()
			}
		})
	}
	wg.Wait()
	if got := strings.Count(b.String(), "line\n"); got != 400 {
		t.Fatalf("%d lines, want 400", got)
	}
}
