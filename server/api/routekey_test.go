package api

import (
	"net/http/httptest"
	"regexp"
	"testing"

	"github.com/gorilla/mux"
)

// routeCase is a route of the API's router, with its template, its
// methods and a concrete path of the template (every variable an id).
type routeCase struct {
	route   *mux.Route
	tpl     string
	methods []string
	path    string
}

var routeVariable = regexp.MustCompile(`\{[^}]+\}`)

// routeCases walks s's router: every route that has a template.
func routeCases(s *Server) ([]routeCase, error) {
	var cases []routeCase
	err := s.router.Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		tpl, err := route.GetPathTemplate()
		if err != nil {
			return nil
		}
		methods, _ := route.GetMethods()
		path := routeVariable.ReplaceAllString(tpl, "01a2055a-cd9c-7c13-8567-80fb9a170a93")
		cases = append(cases, routeCase{route: route, tpl: tpl, methods: methods, path: path})
		return nil
	})
	return cases, err
}

// mustRouteCases is routeCases, failing the test unless it walked the
// whole router (at least min routes).
func mustRouteCases(tb testing.TB, s *Server, min int) []routeCase {
	tb.Helper()
	cases, err := routeCases(s)
	if err != nil || len(cases) < min {
		tb.Fatalf("walked %d routes, err %v", len(cases), err)
	}
	return cases
}

// TestRouteKeyMatchesTemplates keeps routeKey's shortcut honest: for every
// route of the API, a concrete path must collapse to the route's template.
func TestRouteKeyMatchesTemplates(t *testing.T) {
	s := New(Config{})
	for _, c := range mustRouteCases(t, s, 20) {
		r := httptest.NewRequest("GET", c.path, nil)
		if got, want := s.routeKey(r), collapseTemplate(c.tpl); got != want {
			t.Errorf("route %s: routeKey(%s) = %s, want %s", c.tpl, c.path, got, want)
		}
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
	for _, c := range mustRouteCases(t, s, 1) {
		for _, m := range c.methods {
			var match mux.RouteMatch
			if !s.router.Match(httptest.NewRequest(m, c.path, nil), &match) || match.MatchErr != nil || match.Route != c.route {
				got := "no route"
				if match.Route != nil {
					got, _ = match.Route.GetPathTemplate()
				}
				t.Errorf("%s %s (route %s): matched %s, %v", m, c.path, c.tpl, got, match.MatchErr)
			}
		}
	}
}
