package gateway_test

import (
	"context"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/kessai/kessai/server/gateway"
	"github.com/kessai/kessai/server/gateway/gatewaytest"
	"github.com/kessai/kessai/server/kessaitest"
)

// backgroundFrames are the functions the gateway's background goroutines
// run: the worker, the idempotency sweeper and the rate limiters' sweepers.
var backgroundFrames = []string{
	").RunWorker(", // the work queue's worker, wherever the domain keeps it
	"kessai/server/gateway.sweepEvery(",
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
	g := gatewaytest.Start(t, gatewaytest.Options{Demo: true})

	stacks := allStacks()
	for _, f := range backgroundFrames {
		if !strings.Contains(stacks, f) {
			t.Fatalf("no goroutine runs %s while the gateway serves; the check below would prove nothing", f)
		}
	}
	// Like a sweep in the middle of a pass, it still uses the store for a
	// while after it is told to stop.
	late := make(chan error, 1)
	g.Background(func(ctx context.Context) {
		<-ctx.Done()
		time.Sleep(50 * time.Millisecond)
		late <- g.SQLite().Exec(context.Background(), `SELECT 1`)
	})

	g.Stop()
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

// TestStartFailureStopsWhatItStarted: when start fails after the worker and
// the sweepers are running and the store is open (here: the demo
// storefront's port is taken), it stops them and closes the store before it
// returns the error. The store's connection opener would outlive an open
// store, so the leak check sees that too.
func TestStartFailureStopsWhatItStarted(t *testing.T) {
	kessaitest.CheckGoroutines(t)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	cfg, opts := gatewaytest.Config(t, gatewaytest.Options{Configure: func(c *gateway.Config) { c.DemoAddr = taken.Addr().String() }})
	logs := &kessaitest.Buffer{}
	r, err := gateway.Start(context.Background(), cfg, cfg.Logger(logs), opts...)
	if err == nil {
		r.Shutdown()
		t.Fatal("start succeeded on a port already in use")
	}
	if !strings.Contains(err.Error(), "address already in use") {
		t.Errorf("start: %v, want the port in use", err)
	}
}
