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
// WebAssembly (seconds and tens of megabytes for megabytes). So the build
// compresses it (Precompress, which make's wasm target runs through
// server/devtools/precompress): a file's NAME.br and NAME.gz beside it in the file
// system are its variants when they decode to exactly its content, and are
// ignored otherwise (a stale or foreign one). Files up to compressNowMax
// bytes without them are compressed by Load, each with a brotli window no
// larger than itself (brotli's memory grows with the window: 32 MiB at the
// default for the smallest file); larger ones only when the owner of the
// table calls CompressLarge (the gateway does, beside its servers), and until
// then they go out as they are.
package asset

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"math/bits"
	"net/http"
	"path"
	"runtime/debug"
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
// the table serves, takes up the variants the build made, and compresses
// those up to 256 KiB that have none.
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
		f := &file{
			name: name, contentType: ct, hash: h, etag: `"` + h[:32] + `"`, body: body,
			compress: compressible(ct) && len(body) >= 256,
		}
		if f.compress {
			f.precompressed(fsys)
		}
		t.files[name] = f
		return nil
	})
	if err != nil {
		return nil, err
	}
	worked := false
	for _, f := range t.sortedFiles() {
		if f.compress && len(f.body) <= compressNowMax && (f.gz.Load() == nil || f.br.Load() == nil) {
			worked = true
			_ = f.compressAll(context.Background())
		}
	}
	if worked {
		// The compressors' buffers (about 4 MiB a file at their best
		// qualities) are garbage now; hand them back rather than leave the
		// process that much larger for good.
		debug.FreeOSMemory()
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
// alone for their size (those the build did not compress). It returns when
// they are made, or with ctx's error soon after ctx ends, in which case a
// later call takes up what is left. Having compressed anything, it hands the
// compressors' memory back to the operating system at once.
func (t *Table) CompressLarge(ctx context.Context) error {
	t.compressing.Lock()
	defer t.compressing.Unlock()
	worked := false
	defer func() {
		if worked {
			debug.FreeOSMemory()
		}
	}()
	for _, f := range t.sortedFiles() {
		if f.compress && len(f.body) > compressNowMax && (f.gz.Load() == nil || f.br.Load() == nil) {
			worked = true
			if err := f.compressAll(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

// precompressed takes up NAME.gz and NAME.br from fsys as the file's
// variants, each only if it decodes to exactly the file's content.
func (f *file) precompressed(fsys fs.FS) {
	for _, ext := range []string{".gz", ".br"} {
		b, err := fs.ReadFile(fsys, f.name+ext)
		if err != nil {
			continue
		}
		if p := f.decoded(ext, b); p != nil {
			f.publish(p, b)
		}
	}
}

// decoded returns the variant ext names (".gz" or ".br") if b decodes to
// exactly the file's content, else nil.
func (f *file) decoded(ext string, b []byte) *atomic.Pointer[[]byte] {
	var r io.Reader
	var p *atomic.Pointer[[]byte]
	switch ext {
	case ".gz":
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil
		}
		r, p = zr, &f.gz
	case ".br":
		r, p = brotli.NewReader(bytes.NewReader(b)), &f.br
	default:
		return nil
	}
	if !sameContent(r, f.body) {
		return nil
	}
	return p
}

// sameContent reports whether r reads exactly body, reading at most one
// byte past it.
func sameContent(r io.Reader, body []byte) bool {
	buf := make([]byte, 32<<10)
	for {
		n, err := io.ReadFull(r, buf[:min(len(buf), len(body)+1)])
		if n > len(body) || !bytes.Equal(buf[:n], body[:n]) {
			return false
		}
		body = body[n:]
		if err != nil {
			return (err == io.EOF || err == io.ErrUnexpectedEOF) && len(body) == 0
		}
	}
}

// Precompress returns body's gzip and brotli variants as Load would make
// them, for a build step to write beside the file as NAME.gz and NAME.br;
// nil for one that would not be smaller than body.
func Precompress(body []byte) (gz, br []byte, err error) {
	f := &file{body: body}
	if err := f.compressAll(context.Background()); err != nil {
		return nil, nil, err
	}
	smaller := func(b []byte) []byte {
		if len(b) >= len(body) {
			return nil
		}
		return b
	}
	return smaller(*f.gz.Load()), smaller(*f.br.Load()), nil
}

// Matches reports whether variant, a gzip (ext ".gz") or brotli (".br")
// stream, decodes to exactly body: whether Load would take it up.
func Matches(ext string, variant, body []byte) bool {
	f := &file{body: body}
	p := f.decoded(ext, variant)
	return p != nil
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
		bw := brotli.NewWriterOptions(&buf, brotli.WriterOptions{Quality: brotli.BestCompression, LGWin: brotliWindow(len(f.body))})
		if err := writeAll(ctx, bw, f.body); err != nil {
			return err
		}
		f.publish(&f.br, buf.Bytes())
	}
	return nil
}

// brotliWindow is the log2 of the smallest brotli window (within brotli's
// 10–24, and at most 22, what a browser's decoder is sure to be given memory
// for) that holds n bytes: a larger one compresses no better and costs
// memory in proportion (brotli's best quality keeps 8 bytes per window byte).
func brotliWindow(n int) int {
	return min(22, max(10, bits.Len(uint(n+16))))
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
