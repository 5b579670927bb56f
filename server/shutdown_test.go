package main

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"
)

// backgroundFrames are the functions the gateway's background goroutines
// run: the worker, the idempotency sweeper and the rate limiters' sweepers.
var backgroundFrames = []string{
	"payment.(*Service).RunWorker(",
	"kessai/server.sweepEvery(",
	"limit.(*Memory).SweepEvery(",
}

func allStacks() string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return string(buf[:n])
		}
		buf = make([]byte, 2*len(buf))
	}
}

// TestShutdownStopsBackgroundBeforeStore: the store closes last. When the
// gateway has stopped, the worker and every sweeper have returned; and
// background work still busy when shutdown begins (a sweep caught in the
// middle of a pass) finishes its use of the store before the store closes.
func TestShutdownStopsBackgroundBeforeStore(t *testing.T) {
	g := startGateway(t, gatewayOptions{demo: true})

	stacks := allStacks()
	for _, f := range backgroundFrames {
		if !strings.Contains(stacks, f) {
			t.Fatalf("no goroutine runs %s while the gateway serves; the check below would prove nothing", f)
		}
	}
	// Like a sweep in the middle of a pass, it still uses the store for a
	// while after it is told to stop.
	late := make(chan error, 1)
	g.background.run(func(ctx context.Context) {
		<-ctx.Done()
		time.Sleep(50 * time.Millisecond)
		late <- g.db.Exec(context.Background(), `SELECT 1`)
	})

	g.stop()
	stacks = allStacks()
	for _, f := range backgroundFrames {
		if strings.Contains(stacks, f) {
			t.Errorf("%s still runs after the gateway stopped:\n%s", f, stacks)
		}
	}
	select {
	case err := <-late:
		if err != nil {
			t.Errorf("the store closed under background work still using it: %v", err)
		}
	default:
		t.Error("the gateway stopped before its background work returned")
	}
}
