package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The dependency floors of the module, in the manner of tailscale's
// deptest: what each package may depend on, read from go list -deps over
// the whole module, by path pattern, so that a package added tomorrow is
// held to the rule of its place. Only production code counts (the imports
// of _test.go files are free); a test-support package is one whose name
// ends in "test" (kessaitest, sqlitetest, gatewaytest, …).

const module = "github.com/kessai/kessai"

// modPackage is one package of the module as go list sees it.
type modPackage struct {
	path    string // inside the module: server/payment
	name    string
	imports []string // direct, production
	deps    []string // transitive, production
}

// support reports whether p is test support, which may import testing.
func (p modPackage) support() bool { return strings.HasSuffix(p.name, "test") }

// ours is d's path inside the module, or "" for a package from elsewhere.
func ours(d string) string {
	if d == module {
		return "."
	}
	rel, _ := strings.CutPrefix(d, module+"/")
	if rel == d {
		return ""
	}
	return rel
}

// under reports whether a module path is dir or below it.
func under(rel, dir string) bool { return rel == dir || strings.HasPrefix(rel, dir+"/") }

// engines are the storage engines; demoShared are the packages of this
// module the demo storefront may use: the embedded static files and
// templates, the static-file server and the message catalogue, which the
// gateway's pages use too but which hold none of the gateway's rules or
// data.
var (
	engines    = []string{"server/sqlite", "server/postgres"}
	storage    = append(slices.Clone(engines), "server/redis")
	demoShared = []string{"static", "templates", "web/asset", "web/message"}
)

// domainLayers are the domain's packages, lowest first; a package may
// import those of lower layers only.
var domainLayers = [][]string{
	{"server/payment"},
	{"server/payment/outbox"},
	{"server/payment/workqueue"},
	{"server/payment/access", "server/payment/charging", "server/payment/merchants", "server/payment/notify"},
	{"server/payment/subscriptions"},
	{"server/payment/services"},
}

// domainLayer is the layer of a package of the domain, -1 for none.
func domainLayer(rel string) int {
	for i, layer := range domainLayers {
		if slices.Contains(layer, rel) {
			return i
		}
	}
	return -1
}

// floor is one rule: the packages it holds, and a dependency they may not
// have (directly or through another package), with why not.
type floor struct {
	name      string
	holds     func(p modPackage) bool
	forbidden func(p modPackage, dep string) string // why p may not depend on dep; "" when it may
}

var floors = []floor{
	{
		// The rules live in the domain; adapters depend on it, never the
		// other way round.
		name:  "the domain imports nothing of ours but wasm/card",
		holds: func(p modPackage) bool { return under(p.path, "server/payment") && !p.support() },
		forbidden: func(p modPackage, d string) string {
			if rel := ours(d); rel != "" && !under(rel, "server/payment") && !under(rel, "wasm/card") {
				return "the domain depends on " + d
			}
			return ""
		},
	},
	{
		// The domain is layered: its root (types, rules, errors), the
		// outbox every capability writes through, then the capabilities,
		// each of which may use the layers below it and never one beside
		// or above it; services puts them together. A package of the domain
		// that is in no layer fails: its place must be chosen.
		name:  "each package of the domain imports only the layers below it",
		holds: func(p modPackage) bool { return under(p.path, "server/payment") && !p.support() },
		forbidden: func(p modPackage, d string) string {
			rel := ours(d)
			if rel == "" || !under(rel, "server/payment") {
				return ""
			}
			own, dep := domainLayer(p.path), domainLayer(rel)
			switch {
			case own < 0:
				return p.path + " is in no layer of the domain (domainLayers)"
			case dep < 0:
				return d + " is in no layer of the domain (domainLayers)"
			case dep >= own && rel != p.path:
				return "a capability depends on one beside or above it, " + d
			}
			return ""
		},
	},
	{
		// Each engine stands on the shared core alone: what one needs from
		// the other belongs in the core.
		name: "the storage engines never import each other",
		holds: func(p modPackage) bool {
			return slices.ContainsFunc(engines, func(e string) bool { return under(p.path, e) })
		},
		forbidden: func(p modPackage, d string) string {
			for _, e := range engines {
				if under(ours(d), e) && !under(p.path, e) {
					return "an engine depends on another engine, " + d
				}
			}
			return ""
		},
	},
	{
		// The pages reach data through the domain's interfaces, which a
		// test fills with whatever it likes.
		name:  "the web pages and the demo import no storage engine",
		holds: func(p modPackage) bool { return under(p.path, "web") && !p.support() },
		forbidden: func(p modPackage, d string) string {
			for _, s := range storage {
				if under(ours(d), s) {
					return "a page depends on the storage engine " + d
				}
			}
			return ""
		},
	},
	{
		// The storefront is a reference merchant, which reaches the gateway
		// only over HTTP with its app token's secret. It imports no package
		// of the gateway, directly or through another: nothing under
		// server/ (the domain, the API, storage) and not the gateway's own
		// pages.
		name:  "the demo imports no gateway package",
		holds: func(p modPackage) bool { return under(p.path, "web/demo") },
		forbidden: func(p modPackage, d string) string {
			switch rel := ours(d); {
			case rel == "" || under(rel, "web/demo") || slices.Contains(demoShared, rel):
				return ""
			case under(rel, "server"):
				return "the storefront depends on the gateway's " + d
			default:
				return "the storefront depends on " + d + ", which is not among the packages it may share with the gateway"
			}
		},
	},
	{
		// A production package that imports testing (a helper reaching for
		// testing.Testing, a test kit imported outside a test) drags the
		// testing flags and machinery in and makes its behaviour depend on
		// whether it runs under go test.
		name:  "production code imports no testing",
		holds: func(p modPackage) bool { return !p.support() },
		forbidden: func(p modPackage, d string) string {
			if d == "testing" || strings.HasPrefix(d, "testing/") {
				return "production code depends on " + d
			}
			return ""
		},
	},
}

// TestDependencyFloors holds every package of the module to the floors.
func TestDependencyFloors(t *testing.T) {
	pkgs := modulePackages(t)
	byPath := map[string]modPackage{}
	for _, p := range pkgs {
		byPath[p.path] = p
	}
	// The list must be the module's: without these the rules would pass on
	// anything.
	for _, must := range []string{"server", "server/payment", "server/sqlite", "server/postgres", "web/demo", "wasm/card"} {
		if _, ok := byPath[must]; !ok {
			t.Fatalf("go list did not list %s/%s; the rules below would prove nothing", module, must)
		}
	}
	for _, f := range floors {
		held := 0
		for _, p := range pkgs {
			if !f.holds(p) {
				continue
			}
			held++
			for _, d := range p.deps {
				why := f.forbidden(p, d)
				if why == "" {
					continue
				}
				t.Errorf("%s: %s (%s)", f.name, why, through(p, d, byPath))
			}
		}
		if held == 0 {
			t.Errorf("%s: holds no package; its pattern no longer matches the tree", f.name)
		}
	}
}

// through says how p comes to depend on d: directly, or by which of its
// own imports.
func through(p modPackage, d string, byPath map[string]modPackage) string {
	if slices.Contains(p.imports, d) {
		return module + "/" + p.path + " imports it"
	}
	for _, i := range p.imports {
		if q, ok := byPath[ours(i)]; ok && ours(i) != "" && slices.Contains(q.deps, d) {
			return module + "/" + p.path + " through " + i
		}
	}
	return module + "/" + p.path + " through a package from elsewhere"
}

// modulePackages lists every package of the module with its production
// imports and dependencies, from go list; skipped under -short.
func modulePackages(t *testing.T) []modPackage {
	t.Helper()
	if testing.Short() {
		t.Skip("runs go list")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool on PATH")
	}
	out, err := exec.Command(goTool, "list", "-f", "{{.ImportPath}}|{{.Name}}|{{join .Imports \" \"}}|{{join .Deps \" \"}}", module+"/...").Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	var pkgs []modPackage
	for line := range strings.Lines(string(out)) {
		f := strings.Split(strings.TrimSpace(line), "|")
		if len(f) != 4 {
			t.Fatalf("go list: unexpected line %q", line)
		}
		pkgs = append(pkgs, modPackage{path: ours(f[0]), name: f[1], imports: strings.Fields(f[2]), deps: strings.Fields(f[3])})
	}
	return pkgs
}

// TestBinaryImportsNoTesting: the gateway binary links no testing package,
// neither through a package of ours (TestDependencyFloors) nor through one
// from elsewhere.
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
