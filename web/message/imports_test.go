package message

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestImports keeps the catalogue light enough for the widget's
// WebAssembly, where every dependency is downloaded by every shopper: no
// fmt, no encoding, no net, no templates, no reflect-based packages.
func TestImports(t *testing.T) {
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
		t.Fatalf("go list -deps: %v", err)
	}
	deps := map[string]bool{}
	for _, d := range strings.Fields(string(out)) {
		deps[d] = true
	}
	if !deps["strings"] || !deps["github.com/kessai/kessai/web/message"] {
		t.Fatalf("go list -deps did not list the package and strings; the check below would prove nothing:\n%s", out)
	}
	for d := range deps {
		switch {
		case d == "fmt", d == "reflect", d == "log", d == "os", d == "regexp", d == "net",
			strings.HasPrefix(d, "net/"), strings.HasPrefix(d, "encoding/"), strings.HasSuffix(d, "/template"),
			strings.HasPrefix(d, "github.com/") && d != "github.com/kessai/kessai/web/message":
			t.Errorf("the catalogue depends on %s", d)
		}
	}
}
