package sandboxpages

import (
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/gorilla/mux"
)

// TestPathsCoverRoutes: every route New serves is under Paths, which are
// all the gateway routes here: a path under none of them would never
// arrive.
func TestPathsCoverRoutes(t *testing.T) {
	f := newSandboxFixture(t)
	r, ok := f.h.(*mux.Router)
	if !ok {
		t.Fatalf("the handler is a %T, not a router", f.h)
	}
	n := 0
	err := r.Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		tpl, err := route.GetPathTemplate()
		if err != nil {
			return err
		}
		n++
		for _, p := range Paths {
			if tpl == p || strings.HasSuffix(p, "/") && strings.HasPrefix(tpl, p) {
				return nil
			}
		}
		t.Errorf("route %s is under none of %v", tpl, Paths)
		return nil
	})
	if err != nil || n < 9 {
		t.Fatalf("%d routes walked: %v", n, err)
	}
}

// The gateway the fixtures' pages are on, and their session key; the same
// as web/checkout's tests use.
const testGateway = "http://pay.kessai.test"

var testSessionKey = []byte("link-form-test-session-key-0123456789abcdef")

func frameAncestorsOf(t *testing.T, rec *httptest.ResponseRecorder) string {
	t.Helper()
	csp := rec.Header().Get("Content-Security-Policy")
	for _, d := range strings.Split(csp, ";") {
		if d = strings.TrimSpace(d); strings.HasPrefix(d, "frame-ancestors ") {
			return strings.TrimPrefix(d, "frame-ancestors ")
		}
	}
	t.Fatalf("no frame-ancestors in %q", csp)
	return ""
}

// csrfField is a form's CSRF token.
var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

var (
	scriptTag  = regexp.MustCompile(`<script([^>]*)>`)
	styleAttr  = regexp.MustCompile(`\sstyle=`)
	inlineHook = regexp.MustCompile(`\son[a-z]+=`)
)

// checkNoInline fails on anything the pages' CSP would refuse: inline
// scripts, style attributes, event-handler attributes, <style> blocks.
func checkNoInline(t *testing.T, body string) {
	t.Helper()
	for _, m := range scriptTag.FindAllStringSubmatch(body, -1) {
		if !strings.Contains(m[1], "src=") && !strings.Contains(m[1], `type="application/json"`) {
			t.Errorf("inline script: %s", m[0])
		}
	}
	if styleAttr.MatchString(body) || strings.Contains(body, "<style") || inlineHook.MatchString(body) {
		t.Error("inline style or event handler in the page")
	}
}
