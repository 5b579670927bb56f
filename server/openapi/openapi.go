// Package openapi turns the API's description, written by hand in YAML
// (server/api/openapi.yaml), into the JSON the gateway serves, and loads a
// description as OpenAPI 3.1 for the tests that prove it against real
// traffic, on kin-openapi.
//
// The gateway itself does not link this package: it serves the JSON made
// from the YAML ahead of time (server/devtools/openapijson, go generate
// ./server/api), because kin-openapi brings a JSON Schema compiler whose
// initialisation alone costs every process 1.7 MB and a few milliseconds
// at start, for a document that never changes while it runs.
package openapi

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// Load parses an OpenAPI 3.1 document (YAML or JSON) and validates it as
// one, JSON Schema 2020-12 and its examples included.
func Load(data []byte) (*openapi3.T, error) {
	doc, err := openapi3.NewLoader().LoadFromData(data)
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

// Publish is the JSON the gateway serves for a description in YAML: the
// document loaded and validated, its anchors resolved in place, without
// the x-kessai-* sections that only hold the YAML's anchors.
func Publish(yaml []byte) ([]byte, error) {
	doc, err := Load(yaml)
	if err != nil {
		return nil, err
	}
	for name := range doc.Extensions {
		if strings.HasPrefix(name, "x-kessai-") {
			delete(doc.Extensions, name)
		}
	}
	body, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("openapi: encode: %w", err)
	}
	return append(body, '\n'), nil
}
