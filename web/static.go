package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/andybalholm/brotli"

	"github.com/kessai/kessai/static"
)

// Static files are served from memory. At startup every file of static.FS
// is read once and hashed (SHA-256); the hash is its strong ETag and the
// "v" of the links pages make (assetURL). Text and WebAssembly files are
// compressed once, with gzip and brotli, and the smallest representation
// the client accepts is sent.
//
// Caching: a URL whose ?v= names the file's current hash never changes and
// is cached for a year as immutable. Any other URL (/client/checkout.js,
// which merchants link at a fixed address, or a stale ?v=) is cached for
// five minutes and revalidated with the ETag.
//
// Compressing is cheap except for brotli's best quality on the widget's
// WebAssembly (seconds for megabytes). Files up to compressNowMax bytes are
// compressed before the gateway starts serving; larger ones in the
// background, and until their variants are ready they go out as they are
// (or gzipped, once that is done).

const (
	// compressNowMax is the largest file compressed before serving starts.
	compressNowMax = 256 << 10
	// immutableCache and revalidateCache are the two Cache-Control values.
	immutableCache  = "public, max-age=31536000, immutable"
	revalidateCache = "public, max-age=300"
)

// backgroundCompress is off in test binaries, which never ask for the large
// files compressed and would only lose a CPU to it (under the race
// detector, minutes of it).
var backgroundCompress = !testing.Testing()

// asset is one static file and its representations.
type asset struct {
	name        string // path inside static.FS, e.g. "build/widget.wasm"
	contentType string
	hash        string // hex SHA-256 of the content
	etag        string // strong ETag of the uncompressed content
	body        []byte
	compress    bool
	// variants are the compressed bodies, published when ready; a variant
	// that did not make the file smaller is left nil.
	br, gz atomic.Pointer[[]byte]
}

// version is the ?v= value of the file's links.
func (a *asset) version() string { return a.hash[:8] }

// assetTable is every static file by name.
type assetTable struct {
	files map[string]*asset
}

var (
	assetsOnce sync.Once
	assets     *assetTable
	assetsErr  error
)

// loadAssets reads static.FS once per process.
func loadAssets() (*assetTable, error) {
	assetsOnce.Do(func() {
		assets, assetsErr = newAssetTable(static.FS)
		if assetsErr != nil {
			return
		}
		var later []*asset
		for _, a := range assets.sortedFiles() {
			if !a.compress {
				continue
			}
			if len(a.body) <= compressNowMax {
				a.compressAll()
			} else {
				later = append(later, a)
			}
		}
		if len(later) > 0 && backgroundCompress {
			go func() {
				for _, a := range later {
					a.compressAll()
				}
			}()
		}
	})
	return assets, assetsErr
}

func newAssetTable(fsys fs.FS) (*assetTable, error) {
	t := &assetTable{files: map[string]*asset{}}
	err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		ct, ok := contentTypes[path.Ext(name)]
		if !ok {
			return nil // not something we serve (README.md, sources)
		}
		body, err := fs.ReadFile(fsys, name)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		h := hex.EncodeToString(sum[:])
		t.files[name] = &asset{
			name: name, contentType: ct, hash: h, etag: `"` + h[:32] + `"`, body: body,
			compress: compressible(ct) && len(body) >= 256,
		}
		return nil
	})
	return t, err
}

func (t *assetTable) sortedFiles() []*asset {
	out := make([]*asset, 0, len(t.files))
	for _, a := range t.files {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// contentTypes are the types of the files served; other files are not.
var contentTypes = map[string]string{
	".js":    "text/javascript; charset=utf-8",
	".mjs":   "text/javascript; charset=utf-8",
	".css":   "text/css; charset=utf-8",
	".wasm":  "application/wasm",
	".svg":   "image/svg+xml",
	".png":   "image/png",
	".jpg":   "image/jpeg",
	".jpeg":  "image/jpeg",
	".webp":  "image/webp",
	".avif":  "image/avif",
	".gif":   "image/gif",
	".ico":   "image/x-icon",
	".json":  "application/json",
	".txt":   "text/plain; charset=utf-8",
	".woff2": "font/woff2",
}

func compressible(ct string) bool {
	return strings.HasPrefix(ct, "text/") || ct == "application/wasm" || ct == "image/svg+xml" ||
		ct == "application/json" || ct == "image/x-icon"
}

// compressAll makes the gzip and brotli variants, gzip first since it is
// the quick one.
func (a *asset) compressAll() {
	if a.gz.Load() == nil {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		_, _ = zw.Write(a.body)
		_ = zw.Close()
		a.publish(&a.gz, buf.Bytes())
	}
	if a.br.Load() == nil {
		var buf bytes.Buffer
		bw := brotli.NewWriterOptions(&buf, brotli.WriterOptions{Quality: brotli.BestCompression, LGWin: 22})
		_, _ = bw.Write(a.body)
		_ = bw.Close()
		a.publish(&a.br, buf.Bytes())
	}
}

// publish keeps a variant only when it saves something.
func (a *asset) publish(p *atomic.Pointer[[]byte], b []byte) {
	if len(b) >= len(a.body) {
		b = a.body // marker: "done, not worth it"
	}
	p.Store(&b)
}

// variant returns the representation to send for an Accept-Encoding
// value: its body, its Content-Encoding ("" for none) and its ETag.
func (a *asset) variant(acceptEncoding string) (body []byte, encoding, etag string) {
	if a.compress {
		br, gz := acceptsEncoding(acceptEncoding)
		if p := a.br.Load(); br && p != nil && len(*p) < len(a.body) {
			return *p, "br", a.etag[:len(a.etag)-1] + `-br"`
		}
		if p := a.gz.Load(); gz && p != nil && len(*p) < len(a.body) {
			return *p, "gzip", a.etag[:len(a.etag)-1] + `-gz"`
		}
	}
	return a.body, "", a.etag
}

// acceptsEncoding reads Accept-Encoding for br and gzip (RFC 9110
// §12.5.3). A coding the header lists is accepted only if no listing of it
// has weight zero or a weight that is not a qvalue; one it does not list
// only if "*" is listed the same way. When in doubt the file goes out as it
// is, which every client accepts.
func acceptsEncoding(header string) (br, gz bool) {
	var brList, gzList, star codingListing
	for _, part := range strings.Split(header, ",") {
		name, params, _ := strings.Cut(part, ";")
		positive := positiveWeight(params)
		switch strings.ToLower(strings.TrimSpace(name)) {
		case "br":
			brList.add(positive)
		case "gzip", "x-gzip":
			gzList.add(positive)
		case "*":
			star.add(positive)
		}
	}
	return brList.accepted(star), gzList.accepted(star)
}

// codingListing is what an Accept-Encoding header says of one coding.
type codingListing struct{ listed, refused bool }

func (l *codingListing) add(positive bool) {
	l.listed = true
	l.refused = l.refused || !positive
}

// accepted applies the listing, or "*" for a coding not listed.
func (l codingListing) accepted(star codingListing) bool {
	if l.listed {
		return !l.refused
	}
	return star.listed && !star.refused
}

// positiveWeight reports whether an element's parameters give it a weight
// above zero: no q parameter, or a qvalue ("0.5", "1.000") that is not
// zero. qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] ).
func positiveWeight(params string) bool {
	for _, p := range strings.Split(params, ";") {
		k, v, _ := strings.Cut(p, "=")
		if !strings.EqualFold(strings.TrimSpace(k), "q") {
			continue
		}
		whole, frac, _ := strings.Cut(strings.TrimSpace(v), ".")
		if len(frac) > 3 || strings.Trim(frac, "0123456789") != "" {
			return false
		}
		switch whole {
		case "1":
			return strings.Trim(frac, "0") == ""
		case "0":
			return strings.Trim(frac, "0") != ""
		}
		return false
	}
	return true
}

func qValue(params string) (float64, bool) {
	for _, p := range strings.Split(params, ";") {
		k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
		if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
			q, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return q, err == nil
		}
	}
	return 1, false
}

// etagMatches reports whether an If-None-Match value names any
// representation of the file. The compressed variants carry the same
// content, so a cached one of them is as good as the others.
func (a *asset) etagMatches(ifNoneMatch string) bool {
	base := strings.Trim(a.etag, `"`)
	for _, tag := range strings.Split(ifNoneMatch, ",") {
		tag = strings.TrimSpace(tag)
		if tag == "*" {
			return true
		}
		tag = strings.TrimPrefix(tag, "W/")
		tag = strings.Trim(tag, `"`)
		tag = strings.TrimSuffix(strings.TrimSuffix(tag, "-br"), "-gz")
		if tag == base {
			return true
		}
	}
	return false
}

// serve writes the file for r.
func (a *asset) serve(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", a.contentType)
	h.Set("X-Content-Type-Options", "nosniff")
	if a.compress {
		h.Set("Vary", "Accept-Encoding")
	}
	if v := r.URL.Query().Get("v"); v != "" && v == a.version() {
		h.Set("Cache-Control", immutableCache)
	} else {
		h.Set("Cache-Control", revalidateCache)
	}
	// Loader and frame are fetched cross-origin by merchant pages only as
	// classic scripts; fonts and the like need CORS. Nothing here is secret.
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Cross-Origin-Resource-Policy", "cross-origin")
	body, enc, etag := a.variant(r.Header.Get("Accept-Encoding"))
	h.Set("ETag", etag)
	if inm := r.Header.Get("If-None-Match"); inm != "" && a.etagMatches(inm) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	if enc != "" {
		h.Set("Content-Encoding", enc)
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

// lookup finds a static file by its path inside static.FS.
func (t *assetTable) lookup(name string) *asset {
	if t == nil {
		return nil
	}
	return t.files[name]
}

// url returns the versioned link of a static file, "/static/x?v=hash8",
// or the bare path when there is no such file (a link to a file that was
// not built answers 404, which is what it should do).
func (t *assetTable) url(name string) string {
	if a := t.lookup(name); a != nil {
		return "/static/" + name + "?v=" + a.version()
	}
	return "/static/" + name
}

// has reports whether a static file exists (the WebAssembly is optional).
func (t *assetTable) has(name string) bool { return t.lookup(name) != nil }

// StaticURL returns the versioned path of a file of static.FS,
// "/static/widget.css?v=1a2b3c4d", for pages to link: such a URL is cached
// as immutable, and changes when the file does. Prefix it with the
// gateway's URL on pages served from another origin.
func StaticURL(name string) string {
	t, _ := loadAssets()
	return t.url(name)
}

// templateFuncs are the functions every page template may use:
// {{static "widget.css"}} is StaticURL.
func templateFuncs() template.FuncMap {
	return template.FuncMap{"static": StaticURL}
}

// staticRoutes serves the embedded static files.
func (p *pages) staticRoutes(mux *http.ServeMux) error {
	t, err := loadAssets()
	if err != nil {
		return err
	}
	t.routes(mux)
	return nil
}

// routes serves the table under /static/ and the loader under UnivaPay's
// path, /client/checkout.js.
func (t *assetTable) routes(mux *http.ServeMux) {
	serve := func(w http.ResponseWriter, r *http.Request, name string) {
		a := t.lookup(name)
		if a == nil {
			http.NotFound(w, r)
			return
		}
		a.serve(w, r)
	}
	mux.HandleFunc("GET /client/checkout.js", func(w http.ResponseWriter, r *http.Request) {
		serve(w, r, "checkout.js")
	})
	mux.HandleFunc("GET /static/{file...}", func(w http.ResponseWriter, r *http.Request) {
		serve(w, r, r.PathValue("file"))
	})
}
