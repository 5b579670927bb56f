package site

import (
	"context"
	"html/template"
	"sync"

	"github.com/kessai/kessai/static"
	"github.com/kessai/kessai/web/asset"
)

// assets are the files of static.FS, read once per process, with the
// loader's texts written in from the catalogue (loader.go). One table
// serves the whole origin: the pages of every audience link its files by
// their content's hash, and web/checkout serves them.
var assets = sync.OnceValues(func() (*asset.Table, error) {
	return asset.Load(static.FS, asset.Options{Rewrite: writeLoaderTexts})
})

// Assets is the table of the static files, for the package that serves
// them and for a page that asks whether a file was built (the widget's
// WebAssembly).
func Assets() (*asset.Table, error) { return assets() }

// CompressLargeAssets compresses the static files too large to compress
// before the gateway starts serving and that the build did not compress: the
// widget's WebAssembly when it was built without make (make's wasm target
// writes its variants beside it, and then this has nothing to do), which
// brotli's best quality takes seconds and tens of megabytes over. Until it
// has, they go out uncompressed. It returns when it is done or soon after
// ctx ends; a later call takes up what is left. The gateway runs it beside
// its servers.
func CompressLargeAssets(ctx context.Context) error {
	t, err := assets()
	if err != nil {
		return err
	}
	return t.CompressLarge(ctx)
}

// StaticURL returns the versioned path of a file of static.FS,
// "/static/widget.css?v=1a2b3c4d", for pages to link.
func StaticURL(name string) string {
	t, err := assets()
	if err != nil {
		return "/static/" + name
	}
	return t.URL(name)
}

// Funcs are the functions every page template may use:
// {{static "widget.css"}} is StaticURL. A package adds its own to the map.
func Funcs() template.FuncMap {
	return template.FuncMap{"static": StaticURL}
}
