package api

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"net/http"
	"sync"
)

// The API's description, GET /openapi.json: integrators generate clients
// and validators from it instead of reading the UnivaPay reference and
// this gateway's decisions side by side. It is written by hand in YAML
// (openapi.yaml), where it is compact enough to review, and served as the
// JSON made from it ahead of time (openapi.json, package server/openapi),
// so that the gateway links no OpenAPI library. The tests check the JSON
// is made from the YAML as it stands, walk the router against it and
// validate real traffic with it, so a route or a field that drifts from
// the document fails a test rather than an integrator.

//go:generate go run ../devtools/openapijson -in openapi.yaml -out openapi.json

//go:embed openapi.json
var openAPIJSON []byte

// openAPIETag names this binary's document, made the first time it is
// asked for.
var openAPIETag = sync.OnceValue(func() string {
	sum := sha256.Sum256(openAPIJSON)
	return `"` + hex.EncodeToString(sum[:12]) + `"`
})

// openAPI serves the document. It needs no credential (a client generator
// runs before anyone has a token) and may be cached: it changes only with
// the binary, which the ETag tells.
func (s *Server) openAPI(w http.ResponseWriter, r *http.Request) {
	etag := openAPIETag()
	h := w.Header()
	h.Set("Cache-Control", "public, max-age=300")
	h.Set("ETag", etag)
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(openAPIJSON)
	}
}
