package site

import (
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/gorilla/mux"
)

// Read are the methods of a page that is only read: GET, and HEAD, which
// a client may send instead of any GET.
var Read = []string{http.MethodGet, http.MethodHead}

// NewRouter is the router of one audience's pages. It matches the path as
// it was escaped, as the gateway's own mux in front of it does: a %2F in
// an id stays inside its segment (PathValue unescapes it), so that a
// path the gateway took as clean is not cleaned into another one here. A
// path that some route takes, but not with the request's method, is
// answered 405 with the methods that route does take in Allow, as the
// pages have always answered it; one that no route takes, 404.
func NewRouter() *mux.Router {
	r := mux.NewRouter().UseEncodedPath()
	r.MethodNotAllowedHandler = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Allow", strings.Join(allowedMethods(r, req), ", "))
		http.Error(w, http.StatusText(http.StatusMethodNotAllowed), http.StatusMethodNotAllowed)
	})
	return r
}

// allowedMethods are the methods of the routes of r that take req's path,
// sorted.
func allowedMethods(r *mux.Router, req *http.Request) []string {
	var allowed []string
	_ = r.Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		methods, err := route.GetMethods()
		if err != nil {
			return nil // a route for every method, which would have matched
		}
		for _, m := range methods {
			probe := *req
			probe.Method = m
			if !slices.Contains(allowed, m) && route.Match(&probe, &mux.RouteMatch{}) {
				allowed = append(allowed, m)
			}
		}
		return nil
	})
	slices.Sort(allowed)
	return allowed
}

// PathValue is the route's variable name in the request's path, unescaped.
func PathValue(r *http.Request, name string) string {
	v := mux.Vars(r)[name]
	if u, err := url.PathUnescape(v); err == nil {
		return u
	}
	return v
}
