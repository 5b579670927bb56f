package kessaitest

import (
	"bytes"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// goroutineWait bounds how long CheckGoroutines lets goroutines that are
// already on their way out finish: a stopped server's connection goroutines
// and a closed database's opener return a few scheduler turns after the call
// that stopped them.
const goroutineWait = 5 * time.Second

// CheckGoroutines fails the test if goroutines it started are still running
// after it, printing their stacks. Call it first in the test, so that its
// cleanup runs after every cleanup registered later (the fixture's shutdown
// among them). Goroutines that existed before the call are not counted, nor
// are the testing package's own and the process-lifetime goroutine the
// signal package starts the first time anything calls signal.Notify.
//
// It sees every goroutine of the process, so a test that uses it must not run
// in parallel with others. It says nothing after a failed test: a test that
// stops at a t.Fatal skips its own shutdown, and its leaks would bury the
// failure that matters.
func CheckGoroutines(tb testing.TB) {
	tb.Helper()
	checkGoroutines(tb, goroutineWait)
}

func checkGoroutines(tb testing.TB, wait time.Duration) {
	before := make(map[int64]bool)
	for _, g := range goroutines() {
		before[g.id] = true
	}
	tb.Cleanup(func() {
		if tb.Failed() {
			return
		}
		deadline := time.Now().Add(wait)
		interval := firstPoll
		for {
			left := startedSince(before)
			if len(left) == 0 {
				return
			}
			if !time.Now().Before(deadline) {
				var b strings.Builder
				for _, g := range left {
					b.WriteString("\n")
					b.WriteString(g.stack)
					b.WriteString("\n")
				}
				tb.Errorf("%d goroutine(s) started during the test still running %v after it:\n%s",
					len(left), wait, b.String())
				return
			}
			time.Sleep(min(interval, time.Until(deadline)))
			interval = min(2*interval, maxPoll)
		}
	})
}

type goroutine struct {
	id    int64
	stack string
}

// ignored are frames that mark a goroutine as the test framework's or the
// runtime's: test and subtest runners, the -timeout alarm, and the signal
// loop, which lives as long as the process once started.
var ignored = []string{
	"testing.tRunner(",
	"testing.(*M).",
	"testing.runTests",
	"testing.runFuzzing",
	"testing.(*F).",
	"os/signal.loop(",
	"os/signal.signal_recv(",
	"runtime.ensureSigM",
}

func startedSince(before map[int64]bool) []goroutine {
	var left []goroutine
	for _, g := range goroutines() {
		if before[g.id] || slices.ContainsFunc(ignored, func(f string) bool { return strings.Contains(g.stack, f) }) {
			continue
		}
		left = append(left, g)
	}
	return left
}

// goroutines returns every goroutine of the process, parsed from the text
// runtime.Stack writes: blocks separated by blank lines, each starting with
// "goroutine ID [state]:".
func goroutines() []goroutine {
	buf := make([]byte, 64<<10)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var gs []goroutine
	for block := range bytes.SplitSeq(buf, []byte("\n\n")) {
		header, _, _ := bytes.Cut(block, []byte("\n"))
		fields := strings.Fields(string(header))
		if len(fields) < 2 || fields[0] != "goroutine" {
			continue
		}
		id, err := strconv.ParseInt(fields[1], 10, 64)
		if err != nil {
			panic(fmt.Sprintf("kessaitest: cannot parse goroutine header %q", header))
		}
		gs = append(gs, goroutine{id: id, stack: string(bytes.TrimSpace(block))})
	}
	return gs
}
