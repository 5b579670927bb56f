package api

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
)

// The API's description, GET /openapi.json: integrators generate clients
// and validators from it instead of reading the UnivaPay reference and
// this gateway's decisions side by side. It is written by hand in YAML
// (openapi.yaml), where it is compact enough to review, and served as
// JSON, which every tool reads. The tests walk the router against it and
// validate real traffic with it, so a route or a field that drifts from
// the document fails a test rather than an integrator.

//go:embed openapi.yaml
var openAPIYAML []byte

// openAPIDocument is the served document: loaded, validated and encoded
// once per process, the first time it is asked for (a gateway that is
// never asked pays nothing at start).
var openAPIDocument = sync.OnceValues(func() (openAPIJSON, error) {
	doc, err := loadOpenAPI(openAPIYAML)
	if err != nil {
		return openAPIJSON{}, err
	}
	// The x-kessai-* sections only hold the YAML's anchors (header and
	// error sets that operations share); their copies are in place.
	for name := range doc.Extensions {
		if strings.HasPrefix(name, "x-kessai-") {
			delete(doc.Extensions, name)
		}
	}
	body, err := json.Marshal(doc)
	if err != nil {
		return openAPIJSON{}, fmt.Errorf("openapi: encode: %w", err)
	}
	sum := sha256.Sum256(body)
	return openAPIJSON{body: body, etag: `"` + hex.EncodeToString(sum[:12]) + `"`}, nil
})

type openAPIJSON struct {
	body []byte
	etag string
}

// loadOpenAPI parses an OpenAPI 3.1 document and validates it as one,
// JSON Schema 2020-12 included. The tests load the served JSON with it too.
func loadOpenAPI(data []byte) (*openapi3.T, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(data)
	if err != nil {
		return nil, fmt.Errorf("openapi: load: %w", err)
	}
	if !doc.IsOpenAPI31OrLater() {
		return nil, fmt.Errorf("openapi: version %q, want 3.1", doc.OpenAPI)
	}
	if err := doc.Validate(context.Background(), openapi3.IsOpenAPI31OrLater(), openapi3.EnableExamplesValidation()); err != nil {
		return nil, fmt.Errorf("openapi: invalid: %w", err)
	}
	return doc, nil
}

// openAPI serves the document. It needs no credential (a client generator
// runs before anyone has a token) and may be cached: it changes only with
// the binary, which the ETag tells.
func (s *Server) openAPI(w http.ResponseWriter, r *http.Request) {
	doc, err := openAPIDocument()
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	h := w.Header()
	h.Set("Cache-Control", "public, max-age=300")
	h.Set("ETag", doc.etag)
	if r.Header.Get("If-None-Match") == doc.etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(doc.body)
	}
}
