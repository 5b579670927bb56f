package demo

import (
	"os/exec"
	"strings"
	"testing"
)

// shared are the packages of this module the storefront may use: the
// embedded static files and templates, the static-file server and the
// message catalogue, which the gateway's pages use too but which hold none
// of the gateway's rules or data.
var shared = map[string]bool{
	"github.com/kessai/kessai/static":      true,
	"github.com/kessai/kessai/templates":   true,
	"github.com/kessai/kessai/web/asset":   true,
	"github.com/kessai/kessai/web/message": true,
}

// gatewayPages are the packages of the gateway's own pages and what they
// share.
var gatewayPages = map[string]bool{"web/checkout": true, "web/console": true, "web/sandboxpages": true, "web/site": true}

// TestNoGatewayImports: the storefront is a reference merchant, which
// reaches the gateway only over HTTP with its app token's secret. It
// imports no package of the gateway, directly or through another: nothing
// under server/ (the domain, the API, storage) and not the gateway's own
// pages (gatewayPages).
func TestNoGatewayImports(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not found:", err)
	}
	out, err := exec.Command(goBin, "list", "-deps", "-f", "{{.ImportPath}}", ".").Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go list -deps: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	listed := map[string]bool{}
	for _, d := range deps {
		listed[d] = true
	}
	// Prove the list is the storefront's own: without these the checks
	// below would pass on anything.
	for _, must := range []string{"github.com/kessai/kessai/web/demo", "github.com/kessai/kessai/web/message", "net/http"} {
		if !listed[must] {
			t.Fatalf("go list -deps did not list %s:\n%s", must, out)
		}
	}
	for _, d := range deps {
		mine, ok := strings.CutPrefix(d, "github.com/kessai/kessai/")
		if !ok || d == "github.com/kessai/kessai/web/demo" {
			continue
		}
		switch {
		case strings.HasPrefix(mine, "server/") || mine == "server":
			t.Errorf("the storefront depends on the gateway's %s", d)
		case gatewayPages[mine]:
			t.Errorf("the storefront depends on the gateway's pages, %s", d)
		case !shared[d]:
			t.Errorf("the storefront depends on %s, which is not among the packages it may share with the gateway", d)
		}
	}
}
