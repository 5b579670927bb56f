package card

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// allowedImports is everything the package may import directly. Each import
// is paid for in the widget's download, so adding one is a decision, not a
// convenience.
// time is not among them: its zone and GODEBUG code cost the widget about 45
// KiB after brotli, so the expiry rules take any Now (time.Time is one).
var allowedImports = map[string]bool{
	"errors": true, "strconv": true, "strings": true, "unicode": true, "unicode/utf8": true,
}

// forbiddenDeps would each add hundreds of kilobytes to the widget, and
// net/http would also be a sign that card logic grew a side effect. reflect
// is kept out by allowedImports instead: the standard library may one day
// use it underneath time or strings, and that is not this package's doing.
var forbiddenDeps = []string{"fmt", "encoding/json", "net/http", "log", "os", "time"}

// goList runs go list for the js/wasm build of this package, the build the
// widget ships.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not found:", err)
	}
	cmd := exec.Command(goBin, append([]string{"list"}, append(args, ".")...)...)
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm", "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go list %v: %v\n%s", args, err, ee.Stderr)
		}
		t.Fatalf("go list %v: %v", args, err)
	}
	return strings.Fields(string(out))
}

func TestImports(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	for _, imp := range goList(t, "-f", `{{join .Imports " "}}`) {
		if !allowedImports[imp] {
			t.Errorf("imports %s; allowed: errors, strconv, strings, unicode, unicode/utf8", imp)
		}
	}
	deps := map[string]bool{}
	for _, d := range goList(t, "-deps") {
		deps[d] = true
	}
	if !deps["strings"] {
		t.Fatal("go list -deps did not list strings; the check below would prove nothing")
	}
	for _, d := range forbiddenDeps {
		if deps[d] {
			t.Errorf("depends on %s when built for js/wasm", d)
		}
	}
	for d := range deps {
		if strings.HasPrefix(d, "encoding/") || strings.HasPrefix(d, "net/") || d == "net" {
			t.Errorf("depends on %s when built for js/wasm", d)
		}
	}
}
