package openapi_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kessai/kessai/server/openapi"
)

// TestLoadRefusesBrokenDocuments: what the gateway serves must load and
// validate as OpenAPI 3.1; these do not.
func TestLoadRefusesBrokenDocuments(t *testing.T) {
	const info = "info: {title: t, version: '1'}\n"
	for _, c := range []struct{ name, doc, want string }{
		{"not YAML", "openapi: [3.1.0\n", "load"},
		{"OpenAPI 3.0", "openapi: 3.0.3\n" + info + "paths: {}\n", "want 3.1"},
		{"dangling $ref", "openapi: 3.1.0\n" + info + "paths: {/x: {get: {responses: {'200': {$ref: '#/components/responses/Nope'}}}}}\n", "failed to resolve"},
		{"undeclared path parameter", "openapi: 3.1.0\n" + info + "paths: {'/x/{id}': {get: {responses: {'200': {description: ok}}}}}\n", "path parameters"},
		{"unknown schema type", "openapi: 3.1.0\n" + info + "paths: {/x: {get: {responses: {'200': {description: ok, content: {application/json: {schema: {type: strung}}}}}}}}\n", "strung"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := openapi.Publish([]byte(c.doc)); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("publishing:\n%s\nerror %v, want one mentioning %q", c.doc, err, c.want)
			}
		})
	}
}

// TestPublishResolvesAnchors: the JSON holds the anchors' copies in place
// and none of the x-kessai-* sections that held them.
func TestPublishResolvesAnchors(t *testing.T) {
	const doc = `openapi: 3.1.0
info: {title: t, version: '1'}
x-kessai-headers:
  std: &std
    X-Request-Id: {schema: {type: string}}
x-other: kept
paths:
  /x:
    get:
      responses:
        '200': {description: ok, headers: *std}
`
	body, err := openapi.Publish([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	if _, ok := got["x-kessai-headers"]; ok {
		t.Errorf("x-kessai-headers served: %s", body)
	}
	if got["x-other"] != "kept" {
		t.Errorf("another extension dropped: %s", body)
	}
	if !strings.Contains(string(body), `"X-Request-Id"`) {
		t.Errorf("the anchor's copy is missing: %s", body)
	}
}
