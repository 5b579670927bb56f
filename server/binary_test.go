package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// gatewayBin is the gateway binary the tests that run it as a process
// (crash recovery, webhooks across a crash, scale-out) share: built once
// per test binary, since every `go build` links anew.
var gatewayBin struct {
	once sync.Once
	dir  string
	path string
	took time.Duration
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if gatewayBin.dir != "" {
		os.RemoveAll(gatewayBin.dir)
	}
	os.Exit(code)
}

// gatewayBinary returns the path of the gateway built from this package
// with goTool, building it on the first call.
func gatewayBinary(t *testing.T, goTool string) string {
	t.Helper()
	gatewayBin.once.Do(func() {
		start := time.Now()
		if gatewayBin.dir, gatewayBin.err = os.MkdirTemp("", "kessai-gateway-"); gatewayBin.err != nil {
			return
		}
		gatewayBin.path = filepath.Join(gatewayBin.dir, "kessai")
		if out, err := exec.Command(goTool, "build", "-o", gatewayBin.path, "./").CombinedOutput(); err != nil {
			gatewayBin.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
		gatewayBin.took = time.Since(start)
	})
	if gatewayBin.err != nil {
		t.Fatal(gatewayBin.err)
	}
	t.Logf("built the gateway in %v (once for this test binary)", gatewayBin.took.Round(time.Millisecond))
	return gatewayBin.path
}
