package checkout

import (
	"net/http"
	"strings"
	"testing"

	"github.com/gorilla/mux"
)

// TestPathsCoverRoutes: every route New serves is under Paths, which are
// all the gateway routes here: a path under none of them would never
// arrive.
func TestPathsCoverRoutes(t *testing.T) {
	f := newWidgetFixture(t)
	if n := routesOutside(t, f.handler, Paths); n < 8 {
		t.Fatalf("only %d routes walked", n)
	}
}

// routesOutside fails for each route of h that the gateway's mux would
// not send here by paths (an exact path, or a prefix ending in "/"), and
// returns how many routes it walked.
func routesOutside(t *testing.T, h http.Handler, paths []string) int {
	t.Helper()
	r, ok := h.(*mux.Router)
	if !ok {
		t.Fatalf("the handler is a %T, not a router", h)
	}
	n := 0
	err := r.Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		tpl, err := route.GetPathTemplate()
		if err != nil {
			return err
		}
		n++
		for _, p := range paths {
			if tpl == p || strings.HasSuffix(p, "/") && strings.HasPrefix(tpl, p) {
				return nil
			}
		}
		t.Errorf("route %s is under none of %v", tpl, paths)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
