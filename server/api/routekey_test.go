package api

import (
	"net/http/httptest"
	"regexp"
	"testing"

	"github.com/gorilla/mux"
)

// TestRouteKeyMatchesTemplates keeps routeKey's shortcut honest: for every
// route of the API, a concrete path must collapse to the route's template.
func TestRouteKeyMatchesTemplates(t *testing.T) {
	s := New(Config{})
	variable := regexp.MustCompile(`\{[^}]+\}`)
	n := 0
	err := s.router.Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		tpl, err := route.GetPathTemplate()
		if err != nil {
			return nil
		}
		n++
		path := variable.ReplaceAllString(tpl, "01a2055a-cd9c-7c13-8567-80fb9a170a93")
		r := httptest.NewRequest("GET", path, nil)
		if got, want := s.routeKey(r), collapseTemplate(tpl); got != want {
			t.Errorf("route %s: routeKey(%s) = %s, want %s", tpl, path, got, want)
		}
		return nil
	})
	if err != nil || n < 20 {
		t.Fatalf("walked %d routes, err %v", n, err)
	}
}

func TestRouteKeyIgnoresMethodAndUnmatchedPaths(t *testing.T) {
	s := New(Config{})
	for _, c := range []struct{ method, path, want string }{
		{"GET", "/charges/abc1", "/charges/{id}"},
		{"DELETE", "/charges/abc1", "/charges/{id}"},
		{"GET", "/foo/xyz2/bar", "/foo/{id}/bar"},
		{"GET", "/foo/abc", "/foo/abc"},
		{"PATCH", "/stores/01a2055a-cd9c-7c13-8567-80fb9a170a93/charges/01a2055a-cd9c-7c13-8567-80fb9a170a94/refunds", "/stores/{id}/charges/{id}/refunds"},
	} {
		if got := s.routeKey(httptest.NewRequest(c.method, c.path, nil)); got != c.want {
			t.Errorf("%s %s: %s, want %s", c.method, c.path, got, c.want)
		}
	}
}

// TestRoutesShadowNothing: for every route and each of its methods, a
// concrete path of its template is matched by that very route, whatever
// routes stand in front of it. It keeps the router's order free to put the
// hottest routes first.
func TestRoutesShadowNothing(t *testing.T) {
	s := New(Config{})
	variable := regexp.MustCompile(`\{[^}]+\}`)
	err := s.router.Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		tpl, err := route.GetPathTemplate()
		if err != nil {
			return nil
		}
		methods, _ := route.GetMethods()
		path := variable.ReplaceAllString(tpl, "01a2055a-cd9c-7c13-8567-80fb9a170a93")
		for _, m := range methods {
			var match mux.RouteMatch
			if !s.router.Match(httptest.NewRequest(m, path, nil), &match) || match.MatchErr != nil || match.Route != route {
				got := "no route"
				if match.Route != nil {
					got, _ = match.Route.GetPathTemplate()
				}
				t.Errorf("%s %s (route %s): matched %s, %v", m, path, tpl, got, match.MatchErr)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
