package site

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

func staticGet(t *testing.T, h http.Handler, target string, header ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, target, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// servedScript is a script as the gateway serves it.
func servedScript(t *testing.T, name string) []byte {
	t.Helper()
	table, err := assets()
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /static/{file...}", func(w http.ResponseWriter, r *http.Request) { table.Serve(w, r, r.PathValue("file")) })
	rec := staticGet(t, mux, "/static/"+name)
	if rec.Code != 200 {
		t.Fatalf("%s is not served: %d", name, rec.Code)
	}
	return rec.Body.Bytes()
}

// TestScriptsProtocolHygiene reads the loader and the frame's script for
// the rules of the protocol that a browser test would only catch by luck:
// every postMessage names its target origin, every message listener checks
// the sender's origin, and the loader stays within its size budget.
func TestScriptsProtocolHygiene(t *testing.T) {
	post := regexp.MustCompile(`postMessage\(([^;]*)\)`)
	for name, target := range map[string]string{"checkout.js": "GW", "widget.js": "cfg.origin"} {
		src := string(servedScript(t, name))
		calls := post.FindAllStringSubmatch(src, -1)
		if len(calls) == 0 {
			t.Errorf("%s: no postMessage call found", name)
		}
		for _, c := range calls {
			if !strings.HasSuffix(strings.TrimSpace(c[1]), ", "+target) {
				t.Errorf("%s: postMessage(%s) does not target %s", name, c[1], target)
			}
		}
		if !strings.Contains(src, `e.origin === GW`) && !strings.Contains(src, `e.origin !== cfg.origin`) {
			t.Errorf("%s: the message listener does not check the origin", name)
		}
		if !strings.Contains(src, "e.source") {
			t.Errorf("%s: the message listener does not check the sender window", name)
		}
	}
	loader := servedScript(t, "checkout.js")
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	_, _ = zw.Write(loader)
	_ = zw.Close()
	if gz.Len() > 5<<10 {
		t.Errorf("checkout.js is %d bytes gzipped; the budget is 5 KiB", gz.Len())
	}
	for _, name := range []string{"checkout.js", "checkout-html.js"} {
		for _, s := range []string{"innerHTML", "setAttribute(\"style\"", "createElement(\"style\")", "eval(", "new Function", "postMessage"} {
			if bytes.Contains(servedScript(t, name), []byte(s)) && (s != "postMessage" || name != "checkout.js") {
				t.Errorf("%s uses %s, which a strict merchant CSP (or safety) forbids", name, s)
			}
		}
	}
}
