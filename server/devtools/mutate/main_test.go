package main

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	list := "# a comment\n\nmutation first\ntest go test ./x -run '^TestA$'\nfile a/b.go\n" +
		"<<<<<<<\n\tif x {\n\t\treturn\n\t}\n=======\n>>>>>>>\n" +
		"file c.go\n<<<<<<<\none\n=======\ntwo\n\n>>>>>>>\n\n" +
		"mutation second\nfile d.go\ntest true\n<<<<<<<\n# kept: inside a snippet\n=======\nx\n>>>>>>>\n"
	muts, err := Parse(strings.NewReader(list))
	if err != nil {
		t.Fatal(err)
	}
	if len(muts) != 2 {
		t.Fatalf("%d mutations, want 2", len(muts))
	}
	first := muts[0]
	if first.Name != "first" || first.Test != "go test ./x -run '^TestA$'" || first.Line != 3 || len(first.Edits) != 2 {
		t.Fatalf("first = %+v", first)
	}
	want := []Edit{
		{File: "a/b.go", Original: "\tif x {\n\t\treturn\n\t}", Replacement: ""},
		{File: "c.go", Original: "one", Replacement: "two\n"},
	}
	for i, e := range first.Edits {
		if e != want[i] {
			t.Errorf("edit %d = %q, want %q", i, e, want[i])
		}
	}
	if e := muts[1].Edits[0]; e.File != "d.go" || e.Original != "# kept: inside a snippet" || e.Replacement != "x" {
		t.Errorf("second's edit = %q", e)
	}
}

func TestParseErrors(t *testing.T) {
	snippet := "file a.go\n<<<<<<<\nx\n=======\ny\n>>>>>>>\n"
	for _, tc := range []struct{ name, list, want string }{
		{"no test", "mutation m\n" + snippet, "no test command"},
		{"no edit", "mutation m\ntest true\n", "no edit"},
		{"twice", "mutation m\ntest true\n" + snippet + "mutation m\ntest true\n" + snippet, "named twice"},
		{"two words", "mutation a b\n", "one word"},
		{"before a mutation", "test true\n", "before the first mutation"},
		{"no file", "mutation m\ntest true\n<<<<<<<\nx\n=======\n>>>>>>>\n", "without a file"},
		{"outside", "mutation m\ntest true\nfile ../x.go\n", "inside the repository"},
		{"unclosed", "mutation m\ntest true\n" + strings.TrimSuffix(snippet, ">>>>>>>\n"), "not closed"},
		{"no separator", "mutation m\ntest true\nfile a.go\n<<<<<<<\nx\n>>>>>>>\n", "inside the original"},
		{"empty original", "mutation m\ntest true\nfile a.go\n<<<<<<<\n=======\ny\n>>>>>>>\n", "empty original"},
		{"unknown line", "mutation m\ntest true\nfiel a.go\n", "unknown line"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(tc.list))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
}

func TestApply(t *testing.T) {
	files := map[string]*File{
		"a.go": {Data: []byte("x := 1\ny := 2\ny := 2\n")},
		"b.go": {Data: []byte("z\n")},
	}
	for _, tc := range []struct {
		name  string
		edits []Edit
		want  map[string]string // the changed files
		err   string
	}{
		{"once", []Edit{{File: "a.go", Original: "x := 1", Replacement: "x := 0"}},
			map[string]string{"a.go": "x := 0\ny := 2\ny := 2\n"}, ""},
		{"two edits, one file", []Edit{{File: "a.go", Original: "x := 1\n", Replacement: ""}, {File: "a.go", Original: "x", Replacement: "q"}},
			nil, "not in a.go"}, // the second edit sees the first's result
		{"two files", []Edit{{File: "a.go", Original: "x", Replacement: "w"}, {File: "b.go", Original: "z", Replacement: ""}},
			map[string]string{"a.go": "w := 1\ny := 2\ny := 2\n", "b.go": "\n"}, ""},
		{"missing", []Edit{{File: "a.go", Original: "x := 9", Replacement: ""}}, nil, "not in a.go"},
		{"twice", []Edit{{File: "a.go", Original: "y := 2", Replacement: ""}}, nil, "2 times"},
		{"no such file", []Edit{{File: "c.go", Original: "x", Replacement: ""}}, nil, "not a file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Apply(&Mutation{Name: "m", Edits: tc.edits}, files)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("changed %d files, want %d", len(got), len(tc.want))
			}
			for name, content := range tc.want {
				if string(got[name]) != content {
					t.Errorf("%s = %q, want %q", name, got[name], content)
				}
			}
		})
	}
	if string(files["a.go"].Data) != "x := 1\ny := 2\ny := 2\n" {
		t.Error("Apply changed the snapshot")
	}
}

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    runResult
		want string
	}{
		{"tests failed", runResult{output: "--- FAIL: TestX\nFAIL\tpkg\t1.2s\n"}, Killed},
		{"tests passed", runResult{exitOK: true, output: "ok  \tpkg\t1.2s\n"}, Survived},
		{"build failed", runResult{output: "# pkg\nx.go:1: undefined: y\nFAIL\tpkg [build failed]\n"}, Broken},
		{"timed out", runResult{timedOut: true}, Killed},
	} {
		if got := classify(tc.r); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
	for _, tc := range []struct {
		output string
		want   bool
	}{
		{"ok  \tpkg\t0.01s [no tests to run]\n", true},
		{"ok  \tpkg\t(cached) [no tests to run]\n", true},
		{"ok  \tpkg\t0.01s [no tests to run]\nok  \tpkg2\t1s\n", false},
		{"ok  \tpkg\t1s\n", false},
	} {
		if got := ranNoTest(tc.output); got != tc.want {
			t.Errorf("ranNoTest(%q) = %v, want %v", tc.output, got, tc.want)
		}
	}
}
