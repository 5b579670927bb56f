package asset

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
)

// FuzzAcceptEncoding sends a static file with any Accept-Encoding value.
// Properties: no panic; the Content-Encoding chosen is one the header
// accepts with a weight above zero (identity is always acceptable); when
// the header accepts br, br is sent (it is the smallest), else gzip when it
// accepts gzip; the body decodes to the file.
func FuzzAcceptEncoding(f *testing.F) {
	body := bytes.Repeat([]byte("function kessai() { return 'checkout'; }\n"), 64)
	table, err := Load(fstest.MapFS{"checkout.js": {Data: body}}, Options{})
	if err != nil {
		f.Fatal(err)
	}
	a := table.files["checkout.js"]
	if a.br.Load() == nil || a.gz.Load() == nil || len(*a.br.Load()) >= len(body) || len(*a.gz.Load()) >= len(body) {
		f.Fatal("the stand-in file has no smaller variants")
	}
	mux := serveMux(table)

	for _, s := range []string{
		"", "gzip", "br", "gzip, deflate, br, zstd", "identity", "*", "*;q=0", "br;q=0", "gzip;q=0, br;q=0",
		"br;q=0, *", "gzip;q=0, *", "x-gzip", "GZIP", "Br", "br;Q=0", "br ; q=0", "br;q=0.000", "br;q=0.001",
		"br;q=1.000", "br;q=1.0001", "br;q=2", "br;q=-1", "br;q=-0", "br;q=NaN", "br;q=Inf", "br;q=1e-3",
		"br;q=0e5", "br;q=.5", "br;q=", "br;q", "br;level=1;q=0", "br;q=0;q=1", "br, br;q=0", "br;q=0, br",
		"gzip;q=0, x-gzip", "\tgzip\t", "br\x00", "ｂｒ", "br,gzip;q=0.5", ",,,", ";q=1", "*;q=0.5, br;q=0",
		"compress, gzip;q=0", "identity;q=0", "identity;q=0, *;q=0", strings.Repeat("gzip;q=0.5,", 200),
	} {
		f.Add(s)
	}
	url := table.URL("checkout.js")
	f.Fuzz(func(t *testing.T, header string) {
		req, err := http.NewRequest(http.MethodGet, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Accept-Encoding", header)
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Fatalf("Accept-Encoding %q: status %d", header, rec.Code)
		}
		enc := rec.Header().Get("Content-Encoding")
		want := ""
		switch {
		case encodingAcceptable(header, "br"):
			want = "br"
		case encodingAcceptable(header, "gzip"):
			want = "gzip"
		}
		if enc != want {
			t.Fatalf("Accept-Encoding %q: Content-Encoding %q, want %q", header, enc, want)
		}
		if got := decode(t, enc, rec.Body.Bytes()); !bytes.Equal(got, body) {
			t.Fatalf("Accept-Encoding %q: the %q body does not decode to the file", header, enc)
		}
	})
}

// qvalueSyntax is RFC 9110 §12.4.2's qvalue.
var qvalueSyntax = regexp.MustCompile(`^(0(\.[0-9]{0,3})?|1(\.0{0,3})?)$`)

// encodingAcceptable is RFC 9110 §12.5.3 read strictly, written apart from
// the code under test: a coding listed (x-gzip counting as gzip) is
// acceptable only if every listing of it has a valid weight above zero; one
// not listed is acceptable only if "*" is listed, always with a valid
// weight above zero. A weight that is not a qvalue refuses.
func encodingAcceptable(header, coding string) bool {
	listed, refused, star, starRefused := false, false, false, false
	for _, element := range strings.Split(header, ",") {
		params := strings.Split(element, ";")
		name := strings.ToLower(strings.TrimSpace(params[0]))
		if name == "x-gzip" {
			name = "gzip"
		}
		positive := true
		for _, p := range params[1:] {
			k, v, _ := strings.Cut(p, "=")
			if !strings.EqualFold(strings.TrimSpace(k), "q") {
				continue
			}
			v = strings.TrimSpace(v)
			q, err := strconv.ParseFloat(v, 64)
			positive = qvalueSyntax.MatchString(v) && err == nil && q > 0
			break
		}
		switch name {
		case coding:
			listed, refused = true, refused || !positive
		case "*":
			star, starRefused = true, starRefused || !positive
		}
	}
	if listed {
		return !refused
	}
	return star && !starRefused
}
