// Command openapijson writes the JSON the gateway serves at /openapi.json
// from the description written in YAML (server/openapi.Publish). Run it
// after changing the YAML; a test of server/api fails while the two differ:
//
//	go generate ./server/api
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/kessai/kessai/server/openapi"
)

func main() {
	in := flag.String("in", "openapi.yaml", "the description in YAML")
	out := flag.String("out", "openapi.json", "where to write the JSON")
	flag.Parse()
	if err := run(*in, *out); err != nil {
		fmt.Fprintln(os.Stderr, "openapijson:", err)
		os.Exit(1)
	}
}

func run(in, out string) error {
	yaml, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	body, err := openapi.Publish(yaml)
	if err != nil {
		return err
	}
	return os.WriteFile(out, body, 0o644)
}
