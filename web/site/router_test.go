package site

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestRouter: a page's router answers what no route takes as the pages
// answered on http.ServeMux (and as the gateway's mux in front of them
// does): 405 with the methods the path takes in Allow, 404 for a path no
// route takes; it matches the escaped path, so that an escaped slash stays
// in its segment, and PathValue unescapes it.
func TestRouter(t *testing.T) {
	r := NewRouter()
	var got string
	r.HandleFunc("/pages/{id}", func(w http.ResponseWriter, r *http.Request) { got = PathValue(r, "id") }).Methods(Read...)
	r.HandleFunc("/pages/{id}/act", func(http.ResponseWriter, *http.Request) {}).Methods(http.MethodPost)
	serve := func(method, target string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, httptest.NewRequest(method, target, nil))
		return rec
	}
	for _, tc := range []struct {
		method, target string
		status         int
		allow          string
	}{
		{http.MethodGet, "/pages/a", 200, ""},
		{http.MethodHead, "/pages/a", 200, ""},
		{http.MethodPost, "/pages/a", 405, "GET, HEAD"},
		{http.MethodDelete, "/pages/a/act", 405, "POST"},
		{http.MethodPost, "/pages/a/act", 200, ""},
		{http.MethodGet, "/pages/a/other", 404, ""},
		{http.MethodPost, "/other", 404, ""},
	} {
		rec := serve(tc.method, tc.target)
		if rec.Code != tc.status || rec.Header().Get("Allow") != tc.allow {
			t.Errorf("%s %s: %d, Allow %q; want %d, %q", tc.method, tc.target, rec.Code, rec.Header().Get("Allow"), tc.status, tc.allow)
		}
		if tc.status == 405 && rec.Body.String() != "Method Not Allowed\n" {
			t.Errorf("%s %s: body %q", tc.method, tc.target, rec.Body)
		}
	}
	for target, want := range map[string]string{"/pages/a%2Fb": "a/b", "/pages/..%2f..%2fadmin": "../../admin", "/pages/%61": "a"} {
		got = ""
		if rec := serve(http.MethodGet, target); rec.Code != 200 || got != want {
			t.Errorf("GET %s: %d, id %q; want 200, %q", target, rec.Code, got, want)
		}
	}
}
