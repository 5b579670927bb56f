package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The widget's WebAssembly is downloaded by every shopper before the card
// form is fully enhanced. The Go runtime alone is about 1.8 MB; fmt adds
// ~0.6 MB, encoding/json ~1.3 MB and net/http ~8 MB (measured on
// an empty program); time brings syscall and internal/godebug with it,
// 0.25 MB (45 KiB after brotli) for what the browser's Date says; and
// syscall/js, with the code that drove the page through it, 26 KiB after
// brotli for what //go:wasmexport functions do (the page calls in; nothing
// here calls the page). These must never
// come in, not even through the card package or a helper.
var forbiddenDeps = []string{"fmt", "encoding/json", "net", "net/http", "reflect", "log", "os", "regexp", "text/template", "html/template",
	"time", "syscall", "syscall/js", "internal/godebug"}

func TestWASMImports(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not found:", err)
	}
	cmd := exec.Command(goBin, "list", "-deps", ".")
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm", "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go list -deps: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list -deps: %v", err)
	}
	deps := map[string]bool{}
	for _, d := range strings.Fields(string(out)) {
		deps[d] = true
	}
	// Prove the list is the js/wasm build of the widget, not an empty
	// host package: only that build has the card and field packages.
	for _, must := range []string{"github.com/kessai/kessai/wasm/card", "github.com/kessai/kessai/wasm/widget/field", "github.com/kessai/kessai/wasm/widget"} {
		if !deps[must] {
			t.Fatalf("go list -deps did not list %s; the check below would prove nothing:\n%s", must, out)
		}
	}
	for _, d := range forbiddenDeps {
		if deps[d] {
			t.Errorf("the widget's WebAssembly depends on %s", d)
		}
	}
	for d := range deps {
		if strings.HasPrefix(d, "encoding/") || strings.HasPrefix(d, "net/") {
			t.Errorf("the widget's WebAssembly depends on %s", d)
		}
	}
}
