// Package asset serves static files from memory, as the gateway's pages and
// the demo storefront both do: each file is read once and hashed (SHA-256);
// the hash is its strong ETag and the "v" of the links pages make (URL).
// Text and WebAssembly files are compressed once, with gzip and brotli, and
// the smallest representation the client accepts is sent.
//
// Caching: a URL whose ?v= names the file's current hash never changes and
// is cached for a year as immutable. Any other URL (/client/checkout.js,
// which merchants link at a fixed address, or a stale ?v=) is cached for
// five minutes and revalidated with the ETag.
//
// Compressing is cheap except for brotli's best quality on the widget's
// WebAssembly (seconds for megabytes). Files up to compressNowMax bytes are
// compressed by Load; larger ones only when the owner of the table calls
// CompressLarge (the gateway does, beside its servers), and until then they
// go out as they are.
package asset

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"net/http"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/andybalholm/brotli"
)

const (
	// compressNowMax is the largest file Load compresses.
	compressNowMax = 256 << 10
	// compressChunk is how much of a large file is compressed between
	// looks at whether to stop.
	compressChunk = 64 << 10

	// ImmutableCache is the Cache-Control of a URL whose content never
	// changes: a versioned link, or one whose query is its content.
	ImmutableCache = "public, max-age=31536000, immutable"
	// revalidateCache is the Cache-Control of every other URL.
	revalidateCache = "public, max-age=300"
)

// Options say which files a table serves and how they are made.
type Options struct {
	// Include says which files of the file system the table serves; nil
	// means all of the types it knows.
	Include func(name string) bool
	// Rewrite, when set, makes a file's served content from its content in
	// the file system, before it is hashed: the gateway writes its message
	// catalogue into the loader this way. It returns body to leave a file
	// as it is.
	Rewrite func(name string, body []byte) ([]byte, error)
}

// file is one static file and its representations.
type file struct {
	name        string // path inside the file system, e.g. "build/widget.wasm"
	contentType string
	hash        string // hex SHA-256 of the content
	etag        string // strong ETag of the uncompressed content
	body        []byte
	compress    bool
	// variants are the compressed bodies, published when ready; a variant
	// that did not make the file smaller is the body itself.
	br, gz atomic.Pointer[[]byte]
}

// version is the ?v= value of the file's links.
func (f *file) version() string { return f.hash[:8] }

// Table is a set of static files, by their path in the file system.
type Table struct {
	files map[string]*file
	// compressing keeps two CompressLarge calls from doing the same work.
	compressing sync.Mutex
}

// Load reads the files of fsys that opts include and that are of a type
// the table serves, and compresses those up to 256 KiB.
func Load(fsys fs.FS, opts Options) (*Table, error) {
	t := &Table{files: map[string]*file{}}
	err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		ct, ok := contentTypes[path.Ext(name)]
		if !ok || (opts.Include != nil && !opts.Include(name)) {
			return nil // not something we serve (README.md, sources)
		}
		body, err := fs.ReadFile(fsys, name)
		if err != nil {
			return err
		}
		if opts.Rewrite != nil {
			if body, err = opts.Rewrite(name, body); err != nil {
				return err
			}
		}
		sum := sha256.Sum256(body)
		h := hex.EncodeToString(sum[:])
		t.files[name] = &file{
			name: name, contentType: ct, hash: h, etag: `"` + h[:32] + `"`, body: body,
			compress: compressible(ct) && len(body) >= 256,
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, f := range t.sortedFiles() {
		if f.compress && len(f.body) <= compressNowMax {
			_ = f.compressAll(context.Background())
		}
	}
	return t, nil
}

func (t *Table) sortedFiles() []*file {
	out := make([]*file, 0, len(t.files))
	for _, f := range t.files {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// CompressLarge makes the compressed variants of the files Load left
// alone for their size. It returns when they are made, or with ctx's error
// soon after ctx ends, in which case a later call takes up what is left.
func (t *Table) CompressLarge(ctx context.Context) error {
	t.compressing.Lock()
	defer t.compressing.Unlock()
	for _, f := range t.sortedFiles() {
		if f.compress && len(f.body) > compressNowMax {
			if err := f.compressAll(ctx); err != nil {
				return err
			}
		}
	}
	return nil
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

// compressAll makes the gzip and brotli variants that are not made yet,
// gzip first since it is the quick one.
func (f *file) compressAll(ctx context.Context) error {
	if f.gz.Load() == nil {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		if err := writeAll(ctx, zw, f.body); err != nil {
			return err
		}
		f.publish(&f.gz, buf.Bytes())
	}
	if f.br.Load() == nil {
		var buf bytes.Buffer
		bw := brotli.NewWriterOptions(&buf, brotli.WriterOptions{Quality: brotli.BestCompression, LGWin: 22})
		if err := writeAll(ctx, bw, f.body); err != nil {
			return err
		}
		f.publish(&f.br, buf.Bytes())
	}
	return nil
}

// writeAll compresses body through w in chunks, giving up between chunks
// once ctx ends.
func writeAll(ctx context.Context, w io.WriteCloser, body []byte) error {
	for len(body) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := min(len(body), compressChunk)
		if _, err := w.Write(body[:n]); err != nil {
			return err
		}
		body = body[n:]
	}
	return w.Close()
}

// publish keeps a variant only when it saves something.
func (f *file) publish(p *atomic.Pointer[[]byte], b []byte) {
	if len(b) >= len(f.body) {
		b = f.body // marker: "done, not worth it"
	}
	p.Store(&b)
}

// variant returns the representation to send for an Accept-Encoding
// value: its body, its Content-Encoding ("" for none) and its ETag.
func (f *file) variant(acceptEncoding string) (body []byte, encoding, etag string) {
	if f.compress {
		br, gz := acceptsEncoding(acceptEncoding)
		if p := f.br.Load(); br && p != nil && len(*p) < len(f.body) {
			return *p, "br", f.etag[:len(f.etag)-1] + `-br"`
		}
		if p := f.gz.Load(); gz && p != nil && len(*p) < len(f.body) {
			return *p, "gzip", f.etag[:len(f.etag)-1] + `-gz"`
		}
	}
	return f.body, "", f.etag
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

// etagMatches reports whether an If-None-Match value names any
// representation of the file. The compressed variants carry the same
// content, so a cached one of them is as good as the others.
func (f *file) etagMatches(ifNoneMatch string) bool {
	base := strings.Trim(f.etag, `"`)
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
func (f *file) serve(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", f.contentType)
	h.Set("X-Content-Type-Options", "nosniff")
	if f.compress {
		h.Set("Vary", "Accept-Encoding")
	}
	if v := r.URL.Query().Get("v"); v != "" && v == f.version() {
		h.Set("Cache-Control", ImmutableCache)
	} else {
		h.Set("Cache-Control", revalidateCache)
	}
	// Loader and frame are fetched cross-origin by merchant pages only as
	// classic scripts; fonts and the like need CORS. Nothing here is secret.
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Cross-Origin-Resource-Policy", "cross-origin")
	body, enc, etag := f.variant(r.Header.Get("Accept-Encoding"))
	h.Set("ETag", etag)
	if inm := r.Header.Get("If-None-Match"); inm != "" && f.etagMatches(inm) {
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

// Serve writes the file called name (its path in the file system) for r,
// or a 404 when the table has no such file.
func (t *Table) Serve(w http.ResponseWriter, r *http.Request, name string) {
	f := t.files[name]
	if f == nil {
		http.NotFound(w, r)
		return
	}
	f.serve(w, r)
}

// Has reports whether the table serves a file (the WebAssembly is only
// there once built).
func (t *Table) Has(name string) bool { return t.files[name] != nil }

// URL returns the versioned link of a file, "/static/x?v=hash8", which is
// cached as immutable and changes when the file does; or the bare path when
// there is no such file (a link to a file that was not built answers 404,
// which is what it should do). Prefix it with the server's URL on pages
// served from another origin.
func (t *Table) URL(name string) string {
	if f := t.files[name]; f != nil {
		return "/static/" + name + "?v=" + f.version()
	}
	return "/static/" + name
}
