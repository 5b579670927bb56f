package asset

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/andybalholm/brotli"
)

// serveMux serves a table as the gateway does, under /static/.
func serveMux(t *Table) *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /static/{file...}", func(w http.ResponseWriter, r *http.Request) {
		t.Serve(w, r, r.PathValue("file"))
	})
	return mux
}

func get(t *testing.T, h http.Handler, target string, header ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, target, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func decode(t *testing.T, enc string, b []byte) []byte {
	t.Helper()
	var r io.Reader = bytes.NewReader(b)
	switch enc {
	case "gzip":
		zr, err := gzip.NewReader(r)
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	case "br":
		r = brotli.NewReader(r)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

var script = bytes.Repeat([]byte("function kessai() { return 'checkout'; }\n"), 64)

func standIn() fstest.MapFS {
	return fstest.MapFS{
		"checkout.js":         {Data: script},
		"widget.css":          {Data: bytes.Repeat([]byte(".kw{color:red}\n"), 64)},
		"img/brands/visa.svg": {Data: []byte(`<svg xmlns="http://www.w3.org/2000/svg"/>`)},
		"build/README.md":     {Data: []byte("# readme")},
		"static.go":           {Data: []byte("package static")},
	}
}

func TestServing(t *testing.T) {
	table, err := Load(standIn(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := serveMux(table)
	js := get(t, h, "/static/checkout.js")
	if js.Code != 200 || !bytes.Equal(js.Body.Bytes(), script) {
		t.Fatalf("checkout.js: %d", js.Code)
	}
	hdr := js.Header()
	for k, want := range map[string]string{
		"Content-Type": "text/javascript; charset=utf-8", "X-Content-Type-Options": "nosniff",
		"Cache-Control": revalidateCache, "Vary": "Accept-Encoding", "Access-Control-Allow-Origin": "*",
	} {
		if got := hdr.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	etag := hdr.Get("ETag")
	if !regexp.MustCompile(`^"[0-9a-f]{32}"$`).MatchString(etag) {
		t.Errorf("ETag %q is not a strong hash tag", etag)
	}
	if hdr.Get("Content-Encoding") != "" {
		t.Errorf("compressed without Accept-Encoding")
	}
	// Revalidation.
	if rec := get(t, h, "/static/checkout.js", "If-None-Match", etag); rec.Code != http.StatusNotModified || rec.Body.Len() != 0 {
		t.Errorf("If-None-Match: %d, %d bytes", rec.Code, rec.Body.Len())
	}
	if rec := get(t, h, "/static/checkout.js", "If-None-Match", `"nope", `+strings.TrimSuffix(etag, `"`)+`-br"`); rec.Code != http.StatusNotModified {
		t.Errorf("If-None-Match with the br variant's tag: %d", rec.Code)
	}
	if rec := get(t, h, "/static/checkout.js", "If-None-Match", `"0000"`); rec.Code != 200 {
		t.Errorf("stale If-None-Match: %d", rec.Code)
	}
	// Versioned URLs are immutable; a stale version is not.
	u := table.URL("checkout.js")
	if !regexp.MustCompile(`^/static/checkout\.js\?v=[0-9a-f]{8}$`).MatchString(u) {
		t.Fatalf("URL = %q", u)
	}
	if rec := get(t, h, u); rec.Header().Get("Cache-Control") != ImmutableCache {
		t.Errorf("%s: Cache-Control %q", u, rec.Header().Get("Cache-Control"))
	}
	if rec := get(t, h, "/static/checkout.js?v=00000000"); rec.Header().Get("Cache-Control") != revalidateCache {
		t.Errorf("stale ?v=: Cache-Control %q", rec.Header().Get("Cache-Control"))
	}
	if got := table.URL("nope.js"); got != "/static/nope.js" {
		t.Errorf("URL of a missing file = %q", got)
	}
	// Encodings: br preferred, gzip otherwise, q=0 honoured.
	for _, tt := range []struct{ accept, want string }{
		{"gzip, deflate, br", "br"}, {"br;q=1.0, gzip;q=0.8", "br"}, {"gzip", "gzip"}, {"gzip, br;q=0", "gzip"},
		{"identity", ""}, {"deflate", ""}, {"*", "br"}, {"br;q=0, gzip;q=0", ""},
	} {
		rec := get(t, h, "/static/checkout.js", "Accept-Encoding", tt.accept)
		if got := rec.Header().Get("Content-Encoding"); got != tt.want {
			t.Errorf("Accept-Encoding %q: Content-Encoding %q, want %q", tt.accept, got, tt.want)
			continue
		}
		if got := decode(t, tt.want, rec.Body.Bytes()); !bytes.Equal(got, script) {
			t.Errorf("Accept-Encoding %q: body does not decode to the file", tt.accept)
		}
		if tt.want != "" && rec.Body.Len() >= len(script) {
			t.Errorf("%s is not smaller", tt.want)
		}
		if tt.want != "" && rec.Header().Get("ETag") == etag {
			t.Errorf("%s variant has the identity ETag", tt.want)
		}
	}
	// Images, HEAD, misses.
	if rec := get(t, h, "/static/img/brands/visa.svg"); rec.Code != 200 || rec.Header().Get("Content-Type") != "image/svg+xml" {
		t.Errorf("visa.svg: %d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	head := httptest.NewRecorder()
	h.ServeHTTP(head, httptest.NewRequest(http.MethodHead, "/static/widget.css", nil))
	if head.Code != 200 || head.Body.Len() != 0 || head.Header().Get("Content-Length") == "" {
		t.Errorf("HEAD: %d, %d bytes", head.Code, head.Body.Len())
	}
	for _, p := range []string{"/static/nope.js", "/static/build/README.md", "/static/static.go", "/static/../go.mod", "/static/"} {
		if rec := get(t, h, p); rec.Code == 200 {
			t.Errorf("%s: 200", p)
		}
	}
	if table.Has("build/README.md") || table.Has("static.go") || !table.Has("img/brands/visa.svg") {
		t.Error("Has does not say which files are served")
	}
}

func TestIncludeAndRewrite(t *testing.T) {
	table, err := Load(standIn(), Options{
		Include: func(name string) bool { return strings.HasSuffix(name, ".js") },
		Rewrite: func(name string, body []byte) ([]byte, error) {
			return bytes.ReplaceAll(body, []byte("'checkout'"), []byte("'rewritten'")), nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if table.Has("widget.css") || !table.Has("checkout.js") {
		t.Error("Include was not applied")
	}
	rec := get(t, serveMux(table), table.URL("checkout.js"), "Accept-Encoding", "br")
	if got := decode(t, "br", rec.Body.Bytes()); !bytes.Contains(got, []byte("'rewritten'")) || bytes.Contains(got, []byte("'checkout'")) {
		t.Errorf("the served file is not the rewritten one: %.60s", got)
	}
	plain, _ := Load(standIn(), Options{})
	if plain.URL("checkout.js") == table.URL("checkout.js") {
		t.Error("the version does not follow the rewritten content")
	}
	refused := errors.New("refused")
	if _, err := Load(standIn(), Options{Rewrite: func(string, []byte) ([]byte, error) { return nil, refused }}); !errors.Is(err, refused) {
		t.Errorf("a failed rewrite: %v", err)
	}
}

// TestLargeFiles: a file too large to compress on loading goes out as it
// is until CompressLarge has run, then compressed; CompressLarge stops
// when told to and a later call finishes.
func TestLargeFiles(t *testing.T) {
	wasm := append([]byte("\x00asm\x01\x00\x00\x00"), bytes.Repeat([]byte("go wasm "), compressNowMax/4)...)
	table, err := Load(fstest.MapFS{
		"build/widget.wasm":  {Data: wasm},
		"build/wasm_exec.js": {Data: bytes.Repeat([]byte("// js\n"), 100)},
	}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := serveMux(table)
	u := table.URL("build/widget.wasm")
	if rec := get(t, h, u, "Accept-Encoding", "br"); rec.Header().Get("Content-Encoding") != "" || !bytes.Equal(rec.Body.Bytes(), wasm) {
		t.Fatalf("before CompressLarge: Content-Encoding %q", rec.Header().Get("Content-Encoding"))
	}
	if rec := get(t, h, "/static/build/wasm_exec.js", "Accept-Encoding", "br"); rec.Header().Get("Content-Encoding") != "br" {
		t.Error("a small file was not compressed on loading")
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := table.CompressLarge(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("CompressLarge after its context ended: %v", err)
	}
	if rec := get(t, h, u, "Accept-Encoding", "gzip"); rec.Header().Get("Content-Encoding") != "" {
		t.Error("a variant was published from stopped work")
	}
	if err := table.CompressLarge(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, enc := range []string{"", "gzip", "br"} {
		rec := get(t, h, u, "Accept-Encoding", enc)
		if rec.Code != 200 || rec.Header().Get("Content-Type") != "application/wasm" {
			t.Fatalf("%s (%q): %d %q", u, enc, rec.Code, rec.Header().Get("Content-Type"))
		}
		if got := rec.Header().Get("Content-Encoding"); got != enc {
			t.Errorf("Accept-Encoding %q: Content-Encoding %q", enc, got)
		}
		if rec.Header().Get("Cache-Control") != ImmutableCache {
			t.Errorf("versioned wasm not immutable")
		}
		if !bytes.Equal(decode(t, enc, rec.Body.Bytes()), wasm) {
			t.Errorf("%q body differs", enc)
		}
	}
}

// TestPrecompressed: the variants the build wrote beside a file (NAME.gz,
// NAME.br, made by Precompress) are served from the first request, large
// file or not, and CompressLarge has nothing left to do; a variant that
// does not decode to exactly the file (stale, truncated, of another file,
// not compressed at all) is never served: the file is compressed as if it
// had none.
func TestPrecompressed(t *testing.T) {
	wasm := append([]byte("\x00asm\x01\x00\x00\x00"), bytes.Repeat([]byte("go wasm "), compressNowMax/4)...)
	gz, br, err := Precompress(wasm)
	if err != nil || gz == nil || br == nil {
		t.Fatalf("Precompress: %d, %d bytes, %v", len(gz), len(br), err)
	}
	if !Matches(".gz", gz, wasm) || !Matches(".br", br, wasm) || Matches(".br", gz, wasm) || Matches(".zip", gz, wasm) {
		t.Fatal("Matches does not tell a variant of the file")
	}
	table, err := Load(fstest.MapFS{
		"build/widget.wasm":    {Data: wasm},
		"build/widget.wasm.gz": {Data: gz},
		"build/widget.wasm.br": {Data: br},
	}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := serveMux(table)
	for _, enc := range []string{"gzip", "br"} {
		rec := get(t, h, "/static/build/widget.wasm", "Accept-Encoding", enc)
		if rec.Header().Get("Content-Encoding") != enc || !bytes.Equal(decode(t, enc, rec.Body.Bytes()), wasm) {
			t.Errorf("%s: Content-Encoding %q before any compressing", enc, rec.Header().Get("Content-Encoding"))
		}
	}
	for _, p := range []string{"/static/build/widget.wasm.br", "/static/build/widget.wasm.gz"} {
		if rec := get(t, h, p); rec.Code == 200 {
			t.Errorf("%s is served as a file of its own", p)
		}
	}

	other := bytes.Repeat([]byte("other wasm"), compressNowMax/8)
	ogz, obr, _ := Precompress(other)
	longer := append(append([]byte{}, wasm...), '!')
	lgz, lbr, _ := Precompress(longer)
	for name, v := range map[string][2][]byte{
		"another file's":        {ogz, obr},
		"a longer file's":       {lgz, lbr},
		"truncated":             {gz[:len(gz)/2], br[:len(br)/2]},
		"the file uncompressed": {wasm, wasm},
		"empty":                 {{}, {}},
	} {
		table, err := Load(fstest.MapFS{
			"build/widget.wasm":    {Data: wasm},
			"build/widget.wasm.gz": {Data: v[0]},
			"build/widget.wasm.br": {Data: v[1]},
		}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		h := serveMux(table)
		for _, enc := range []string{"gzip", "br"} {
			if rec := get(t, h, "/static/build/widget.wasm", "Accept-Encoding", enc); rec.Header().Get("Content-Encoding") != "" {
				t.Errorf("%s variants: served as %q", name, rec.Header().Get("Content-Encoding"))
			}
		}
		if err := table.CompressLarge(context.Background()); err != nil {
			t.Fatal(err)
		}
		for _, enc := range []string{"gzip", "br"} {
			rec := get(t, h, "/static/build/widget.wasm", "Accept-Encoding", enc)
			if rec.Header().Get("Content-Encoding") != enc || !bytes.Equal(decode(t, enc, rec.Body.Bytes()), wasm) {
				t.Errorf("%s variants, after CompressLarge: %s is %q", name, enc, rec.Header().Get("Content-Encoding"))
			}
		}
	}
}

// TestBrotliWindow: brotli's window holds the whole file (so it compresses
// as well as the largest would), and no more than the next power of two.
func TestBrotliWindow(t *testing.T) {
	for _, n := range []int{0, 1, 256, 1000, 1008, 1009, 37 << 10, 200 << 10, 2 << 20, 4<<20 - 16, 4 << 20, 64 << 20} {
		w := brotliWindow(n)
		if w < 10 || w > 22 {
			t.Errorf("%d bytes: window 2^%d outside 10–22", n, w)
		}
		if n <= 4<<20-16 && 1<<w-16 < n {
			t.Errorf("%d bytes: window 2^%d (less 16) does not hold them", n, w)
		}
		if w > 10 && 1<<(w-1) > n+16 {
			t.Errorf("%d bytes: window 2^%d is larger than it needs", n, w)
		}
	}
}
