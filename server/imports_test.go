package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestBinaryImportsNoTesting: the gateway binary links no testing package.
// A production package that imports one (a helper reaching for
// testing.Testing, a test kit imported outside a test) drags the testing
// flags and machinery into the binary and makes its behaviour depend on
// whether it runs under go test.
func TestBinaryImportsNoTesting(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool on PATH")
	}
	out, err := exec.Command(goTool, "list", "-deps", "-f", `{{.ImportPath}} {{join .Imports " "}}`, ".").Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go list -deps: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list -deps: %v", err)
	}
	imports := map[string][]string{} // package → what it imports
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		if len(fields) > 0 {
			imports[fields[0]] = fields[1:]
		}
	}
	// The list must be the binary's, not an empty package's: only the
	// binary has its main package, the API and the store in it.
	for _, must := range []string{"github.com/kessai/kessai/server", "github.com/kessai/kessai/server/api", "github.com/kessai/kessai/server/sqlite"} {
		if _, ok := imports[must]; !ok {
			t.Fatalf("go list -deps did not list %s; the check below would prove nothing:\n%s", must, out)
		}
	}
	isTesting := func(p string) bool { return p == "testing" || strings.HasPrefix(p, "testing/") }
	for pkg, deps := range imports {
		for _, d := range deps {
			if isTesting(d) && !isTesting(pkg) {
				t.Errorf("the gateway binary imports %s through %s", d, pkg)
			}
		}
	}
}
