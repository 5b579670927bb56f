// Command precompress writes FILE.gz and FILE.br beside each FILE named, as
// web/asset would make them at start, so that the gateway serves the
// widget's WebAssembly compressed from its first request without spending
// seconds and tens of megabytes on brotli's best quality when it starts.
// make's wasm target runs it on static/build/widget.wasm; web/asset takes the
// variants up only when they decode to exactly the file they sit beside, so a
// stale one is ignored, never served.
//
// A variant that already decodes to the file is left as it is (a rebuild
// that changed nothing costs a decompression, not a compression); one that
// would not be smaller than the file is removed.
//
//	go run ./server/devtools/precompress FILE...
package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/kessai/kessai/web/asset"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: precompress FILE...")
		os.Exit(2)
	}
	for _, name := range os.Args[1:] {
		if err := precompress(name); err != nil {
			fmt.Fprintln(os.Stderr, "precompress:", err)
			os.Exit(1)
		}
	}
}

func precompress(name string) error {
	body, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	if current(name+".gz", ".gz", body) && current(name+".br", ".br", body) {
		return nil
	}
	gz, br, err := asset.Precompress(body)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	for _, v := range []struct {
		path string
		data []byte
	}{{name + ".gz", gz}, {name + ".br", br}} {
		if v.data == nil {
			if err := os.Remove(v.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			continue
		}
		tmp := v.path + ".tmp"
		if err := os.WriteFile(tmp, v.data, 0o644); err != nil {
			return err
		}
		if err := os.Rename(tmp, v.path); err != nil {
			return err
		}
	}
	fmt.Printf("precompress: %s %d bytes, gzip %d, brotli %d\n", name, len(body), len(gz), len(br))
	return nil
}

// current reports whether path holds a variant of body already.
func current(path, ext string, body []byte) bool {
	b, err := os.ReadFile(path)
	return err == nil && asset.Matches(ext, b, body)
}
