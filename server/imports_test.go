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
	imports := binaryImports(t)
	isTesting := func(p string) bool { return p == "testing" || strings.HasPrefix(p, "testing/") }
	for pkg, deps := range imports {
		for _, d := range deps {
			if isTesting(d) && !isTesting(pkg) {
				t.Errorf("the gateway binary imports %s through %s", d, pkg)
			}
		}
	}
}

// TestBinaryLinksNoOpenAPILibrary: the gateway serves /openapi.json as
// JSON made ahead of time (server/openapi is for the tools and tests):
// kin-openapi's JSON Schema compiler would cost every process 1.7 MB at
// start for a document that never changes while it runs.
func TestBinaryLinksNoOpenAPILibrary(t *testing.T) {
	for pkg, deps := range binaryImports(t) {
		for _, d := range deps {
			if strings.HasPrefix(d, "github.com/getkin/kin-openapi/") || strings.HasPrefix(d, "github.com/santhosh-tekuri/jsonschema/") ||
				d == "github.com/kessai/kessai/server/openapi" {
				t.Errorf("the gateway binary imports %s through %s", d, pkg)
			}
		}
	}
}

// binaryImports is what each package of the gateway binary imports, from
// go list; skipped under -short.
func binaryImports(t *testing.T) map[string][]string {
	t.Helper()
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
	return imports
}
