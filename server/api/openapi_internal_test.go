package api

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/kessai/kessai/server/openapi"
)

// RouterOperations lists every "METHOD /template" the API's router serves,
// sorted. The traffic tests (package api_test) check each was exercised.
func RouterOperations(s *Server) ([]string, error) {
	cases, err := routeCases(s)
	var ops []string
	for _, c := range cases {
		if len(c.methods) == 0 {
			return nil, fmt.Errorf("route %s has no methods", c.tpl)
		}
		for _, m := range c.methods {
			ops = append(ops, m+" "+c.tpl)
		}
	}
	slices.Sort(ops)
	return slices.Compact(ops), err
}

// DocumentOperations lists every "METHOD /template" a document describes,
// sorted.
func DocumentOperations(doc *openapi3.T) []string {
	var ops []string
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			ops = append(ops, strings.ToUpper(method)+" "+path)
		}
	}
	slices.Sort(ops)
	return ops
}

// OperationMismatches names each operation the router serves and the
// document lacks, and each the document describes and the router lacks.
func OperationMismatches(routes, described []string) []string {
	var out []string
	for _, op := range routes {
		if !slices.Contains(described, op) {
			out = append(out, "the router serves "+op+"; the document does not describe it")
		}
	}
	for _, op := range described {
		if !slices.Contains(routes, op) {
			out = append(out, "the document describes "+op+"; the router does not serve it")
		}
	}
	return out
}

// TestOpenAPIDocumentMatchesRouter: the served document is OpenAPI 3.1,
// valid, and describes exactly the router's routes and methods — a route
// added without its description, or a description left behind, fails.
func TestOpenAPIDocumentMatchesRouter(t *testing.T) {
	s := New(Config{})
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/openapi.json", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /openapi.json: %d %s", rec.Code, rec.Body)
	}
	for name, want := range map[string]string{"Content-Type": "application/json", "Cache-Control": "public, max-age=300"} {
		if got := rec.Header().Get(name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if rec.Header().Get("ETag") == "" {
		t.Error("no ETag")
	}
	doc, err := openapi.Load(rec.Body.Bytes())
	if err != nil {
		t.Fatalf("the served document: %v", err)
	}
	for name := range doc.Extensions {
		if strings.HasPrefix(name, "x-kessai-") {
			t.Errorf("the served document keeps the YAML's %s", name)
		}
	}
	if doc.OpenAPI != "3.1.0" || doc.Info == nil || doc.Info.Title == "" || doc.Info.Version == "" || doc.Info.Description == "" {
		t.Errorf("openapi %q, info %+v", doc.OpenAPI, doc.Info)
	}

	routes, err := RouterOperations(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(routes) < 80 {
		t.Fatalf("walked %d operations: %v", len(routes), routes)
	}
	for _, m := range OperationMismatches(routes, DocumentOperations(doc)) {
		t.Error(m)
	}
	t.Logf("%d operations on %d paths, %d bytes", len(routes), doc.Paths.Len(), rec.Body.Len())
}

// TestOpenAPIConditionalGet: a client holding the current document gets a
// 304 without a body.
func TestOpenAPIConditionalGet(t *testing.T) {
	s := New(Config{})
	first := httptest.NewRecorder()
	s.ServeHTTP(first, httptest.NewRequest(http.MethodGet, "/openapi.json", nil))
	req := httptest.NewRequest(http.MethodGet, "/openapi.json", nil)
	req.Header.Set("If-None-Match", first.Header().Get("ETag"))
	again := httptest.NewRecorder()
	s.ServeHTTP(again, req)
	if again.Code != http.StatusNotModified || again.Body.Len() != 0 {
		t.Errorf("with the ETag: %d, %d bytes; want 304 and none", again.Code, again.Body.Len())
	}
}

// TestOpenAPIJSONIsGenerated: the JSON the gateway serves is the one the
// YAML makes as it stands; after an edit of the YAML, go generate
// ./server/api makes it again.
func TestOpenAPIJSONIsGenerated(t *testing.T) {
	yaml, err := os.ReadFile("openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want, err := openapi.Publish(yaml)
	if err != nil {
		t.Fatalf("openapi.yaml: %v", err)
	}
	if !bytes.Equal(openAPIJSON, want) {
		t.Fatal("openapi.json is not what openapi.yaml makes: run go generate ./server/api")
	}
}

// TestOpenAPIErrorCodes: the document's ErrorCode enum is the error
// table's codes, no more and no fewer. A code answered without being in
// the enum fails every client that validates answers against the
// document, the first time a request meets it (the traffic tests see
// only the codes they provoke).
func TestOpenAPIErrorCodes(t *testing.T) {
	doc, err := openapi.Load(openAPIJSON)
	if err != nil {
		t.Fatal(err)
	}
	ref := doc.Components.Schemas["ErrorCode"]
	if ref == nil || ref.Value == nil {
		t.Fatal("the document has no ErrorCode schema")
	}
	var described []string
	for _, v := range ref.Value.Enum {
		described = append(described, fmt.Sprint(v))
	}
	var table []string
	for code := range statusByCode {
		table = append(table, string(code))
	}
	slices.Sort(described)
	slices.Sort(table)
	for _, code := range table {
		if !slices.Contains(described, code) {
			t.Errorf("the API answers %s; the document's ErrorCode does not list it", code)
		}
	}
	for _, code := range described {
		if !slices.Contains(table, code) {
			t.Errorf("the document's ErrorCode lists %s; the API has no status for it", code)
		}
	}
}
