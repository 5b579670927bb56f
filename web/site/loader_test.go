package site

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kessai/kessai/static"
	"github.com/kessai/kessai/web/message"
)

// TestLoaderTexts: the loader is served with the catalogue's Loader texts
// written in, and keeps none of its own, so the two cannot drift apart.
func TestLoaderTexts(t *testing.T) {
	keys := message.Loader.Keys()
	if !slices.Equal(keys, slices.Sorted(slices.Values(loaderTextKeys))) {
		t.Fatalf("the catalogue's Loader has %v, the loader reads %v", keys, loaderTextKeys)
	}
	raw, err := static.FS.ReadFile("checkout.js")
	if err != nil {
		t.Fatal(err)
	}
	served := servedScript(t, "checkout.js")
	if bytes.Contains(served, []byte("kessai:loader-texts")) {
		t.Error("the served loader still has the mark where its texts go")
	}
	want, err := loaderTexts()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(served, []byte("var TEXT = "+string(want)+";")) {
		t.Errorf("the served loader does not have the catalogue's texts %s", want)
	}
	var got map[message.Locale][]string
	if err := json.Unmarshal(want, &got); err != nil {
		t.Fatal(err)
	}
	for _, l := range message.Locales() {
		for i, k := range loaderTextKeys {
			text := message.Loader.Get(k, l)
			if got[l][i] != text {
				t.Errorf("%s %s is %q in the loader, %q in the catalogue", l, k, got[l][i], text)
			}
			if bytes.Contains(raw, []byte(text)) {
				t.Errorf("static/checkout.js has its own copy of %q", text)
			}
		}
	}
}

// TestScriptsKeepNoTexts: the frame's scripts and the WebAssembly's source
// show only what the frame gives them; none has a copy of a text of the
// catalogue's tables for them.
func TestScriptsKeepNoTexts(t *testing.T) {
	sources := map[string][]byte{}
	names, err := fs.Glob(static.FS, "*.js")
	if err != nil || !slices.Contains(names, "widget.js") {
		t.Fatalf("scripts %v: %v", names, err)
	}
	for _, name := range names {
		b, err := static.FS.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		sources["static/"+name] = b
	}
	wasmSrc, err := os.ReadFile(filepath.Join("..", "..", "wasm", "widget", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	sources["wasm/widget/main.go"] = wasmSrc
	for _, table := range []*message.Table{message.FrameScript, message.Loader, message.Frame} {
		for _, k := range table.Keys() {
			x, _ := table.Text(k)
			for name, src := range sources {
				for _, text := range []string{x.EN, x.JA} {
					// Short words ("Pay", "Close") occur in code for other reasons.
					if len(text) >= 16 && bytes.Contains(src, []byte(text)) {
						t.Errorf("%s has its own copy of %s's %s: %q", name, table.Name(), k, text)
					}
				}
			}
		}
	}
}

// TestLoaderLocaleRuleIsNegotiate runs the loader's lang function, as the
// gateway serves it, in Node.js on the cases of message.Negotiate: a locale
// option, and the browser's languages (what it sends as Accept-Language).
func TestLoaderLocaleRuleIsNegotiate(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not found; make test installs Node.js, which this test needs")
	}
	fn := jsFunction(servedScript(t, "checkout.js"), "function lang(l) {")
	if fn == nil {
		t.Fatal("checkout.js has no function lang(l)")
	}
	type lcase struct {
		Explicit *string  `json:"explicit"`
		Langs    []string `json:"langs"`
	}
	str := func(s string) *string { return &s }
	var cases []lcase
	explicits := []*string{nil, str(""), str("auto"), str("ja"), str("JA"), str("ja-JP"), str("ja_JP"), str("Ja-jP"),
		str("en"), str("en-GB"), str("en_us"), str("en-Latn-US"), str("en-001"), str("japanese"), str("english"), str(" ja"),
		str("ja "), str("jam"), str("jv"), str("fr"), str("ja-"), str("ja--JP"), str("ja-JP!"), str("ja-toolongsubtag"),
		str("ja-12345678"), str("日本語"), str("ja,en"), str("ja;q=1"), str("ja-\u212a"), str("en-ſ")}
	browsers := [][]string{nil, {"ja"}, {"en-US", "en"}, {"ja-JP", "ja", "en-US", "en"}, {"fr-FR", "fr", "ja"},
		{"de", "en-GB", "ja"}, {"zh-CN", "ko"}, {"JA"}, {"jv", "jam", "en"}}
	for _, e := range explicits {
		for _, b := range browsers {
			cases = append(cases, lcase{e, b})
		}
	}
	input, _ := json.Marshal(cases)
	script := "var navigator = { languages: [] };\n" + string(fn) + `
var cases = JSON.parse(require("fs").readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify(cases.map(function (c) {
  navigator.languages = c.langs || [];
  return lang(c.explicit === null ? undefined : c.explicit);
})));`
	cmd := exec.Command(node, "-e", script)
	cmd.Stdin = bytes.NewReader(input)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var got []string
	if err := json.Unmarshal(out, &got); err != nil || len(got) != len(cases) {
		t.Fatalf("node answered %s (%v)", out, err)
	}
	for i, c := range cases {
		var header []string
		for j, l := range c.Langs {
			header = append(header, fmt.Sprintf("%s;q=%.1f", l, 1-float64(j)/10))
		}
		explicit := ""
		if c.Explicit != nil {
			explicit = *c.Explicit
		}
		want := message.Negotiate(explicit, strings.Join(header, ", "))
		if got[i] != string(want) {
			t.Errorf("locale %q, browser languages %v: the loader says %s, Negotiate %s", explicit, c.Langs, got[i], want)
		}
	}
}

// TestLoaderCompacted: the loader and its HTML mode go out without comment
// lines and indentation, which can change nothing they do only because no
// string of theirs spans lines (no template literal, no line continued with
// a backslash); they still parse (node --check, when Node.js is here).
func TestLoaderCompacted(t *testing.T) {
	for _, name := range []string{"checkout.js", "checkout-html.js"} {
		src, err := static.FS.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.ContainsRune(src, '`') || regexp.MustCompile(`\\\r?\n`).Match(src) {
			t.Errorf("static/%s has a string that may span lines; compactScript would change it", name)
		}
		served := servedScript(t, name)
		for i, line := range strings.Split(strings.TrimSuffix(string(served), "\n"), "\n") {
			if line == "" || line != strings.TrimSpace(line) || strings.HasPrefix(line, "//") {
				t.Errorf("%s line %d is not compacted: %q", name, i+1, line)
				break
			}
		}
		if len(served) >= len(src) {
			t.Errorf("%s is served at %d bytes, its source is %d", name, len(served), len(src))
		}
		node, err := exec.LookPath("node")
		if err != nil {
			continue
		}
		f := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(f, served, 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(node, "--check", f).CombinedOutput(); err != nil {
			t.Errorf("%s as served does not parse: %v\n%s", name, err, out)
		}
	}
	if got := compactScript([]byte("  // note\n\tvar a = 1; // kept\n\n  }\r\n")); string(got) != "var a = 1; // kept\n}\n" {
		t.Errorf("compactScript = %q", got)
	}
}

// jsFunction cuts a function out of a script: from head to the brace that
// closes the one head ends with (braces counted, which holds for a function
// whose strings and regular expressions have theirs in pairs).
func jsFunction(src []byte, head string) []byte {
	i := bytes.Index(src, []byte(head))
	if i < 0 {
		return nil
	}
	depth := 0
	for j := i; j < len(src); j++ {
		switch src[j] {
		case '{':
			depth++
		case '}':
			if depth--; depth == 0 {
				return src[i : j+1]
			}
		}
	}
	return nil
}
