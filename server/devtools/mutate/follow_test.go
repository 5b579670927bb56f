package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// entry is one mutation of a test's list.
func entry(name, test string, edits ...string) string {
	return "mutation " + name + "\ntest " + test + "\n" + strings.Join(edits, "")
}

// edit is a file line and one snippet; file "" leaves the line out (the
// snippet is under the entry's previous file line).
func edit(file, orig string) string {
	s := ""
	if file != "" {
		s = "file " + file + "\n"
	}
	return s + "<<<<<<<\n" + orig + "\n=======\n>>>>>>>\n"
}

// TestFollow runs -follow on a tree in a temporary git work tree: moved
// snippets and tests are followed, everything else reported and left as it
// was.
func TestFollow(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	const listName = "tools/mutations.txt"
	tree := map[string]string{
		"a/a.go":        "package a\n\nfunc stays() { rule() }\n",
		"b/b.go":        "package b\n\nfunc moved() { guarded() }\nfunc other() { second() }\n",
		"c/c.go":        "package c\n\nfunc twice() { copied() }\n",
		"d/d.go":        "package d\n\nfunc twice() { copied() }\n",
		"a/a_test.go":   "package a\n\nfunc TestStays(t *testing.T) {}\n",
		"b/b_test.go":   "package b\n\nfunc TestMoved(t *testing.T) {}\nfunc TestBoth(t *testing.T) {}\n",
		"c/c_test.go":   "package c\n\nfunc TestSplit(t *testing.T) {}\nfunc TestBoth(t *testing.T) {}\n",
		"d/d_test.go":   "package d\n\nfunc TestOther(t *testing.T) {}\n",
		"e/e_test.go":   "package e\n\nfunc TestMoved(t *testing.T) {}\n",
		"e/nothing.txt": "\n",
	}
	for _, tc := range []struct {
		name      string
		list      string // one or more entries
		run       string // -run; "" selects all
		want      string // the list afterwards; "" for unchanged
		unfixed   bool
		wantPrint []string
	}{
		{
			name: "in place",
			list: entry("m", "go test ./a -run '^TestStays$'", edit("a/a.go", "func stays() { rule() }")),
		},
		{
			name:      "snippet moved",
			list:      entry("m", "go test ./b -run '^TestMoved$'", edit("a/old.go", "func moved() { guarded() }")),
			want:      entry("m", "go test ./b -run '^TestMoved$'", edit("b/b.go", "func moved() { guarded() }")),
			wantPrint: []string{"m: file a/old.go → b/b.go (snippet 1)"},
		},
		{
			name: "first snippet moved, second stays",
			list: entry("m", "go test ./b -run '^TestMoved$'",
				edit("a/a.go", "func moved() { guarded() }"), edit("", "func stays() { rule() }")),
			want: entry("m", "go test ./b -run '^TestMoved$'",
				edit("b/b.go", "func moved() { guarded() }"), edit("a/a.go", "func stays() { rule() }")),
		},
		{
			name: "second snippet moved",
			list: entry("m", "go test ./b -run '^TestMoved$'",
				edit("a/a.go", "func stays() { rule() }"), edit("", "func other() { second() }")),
			want: entry("m", "go test ./b -run '^TestMoved$'",
				edit("a/a.go", "func stays() { rule() }"), edit("b/b.go", "func other() { second() }")),
		},
		{
			name:      "snippet in two files",
			list:      entry("m", "go test ./c -run '^TestSplit$'", edit("a/a.go", "func twice() { copied() }")),
			unfixed:   true,
			wantPrint: []string{"exactly once in 2 files (c/c.go, d/d.go)"},
		},
		{
			name:      "snippet changed",
			list:      entry("m", "go test ./a -run '^TestStays$'", edit("a/a.go", "func renamed() { rule() }")),
			unfixed:   true,
			wantPrint: []string{"exactly once in 0 files"},
		},
		{
			name:      "test moved",
			list:      entry("m", "go test ./a -run '^TestOther$'", edit("a/a.go", "func stays() { rule() }")),
			want:      entry("m", "go test ./d -run '^TestOther$'", edit("a/a.go", "func stays() { rule() }")),
			wantPrint: []string{"m: test go test ./a -run '^TestOther$' → go test ./d -run '^TestOther$'"},
		},
		{
			name: "tests moved together, with a subtest and a trailing slash",
			list: entry("m", "go test ./a/ -run '^(TestSplit|TestBoth)$/^case$'", edit("a/a.go", "func stays() { rule() }")),
			want: entry("m", "go test ./c -run '^(TestSplit|TestBoth)$/^case$'", edit("a/a.go", "func stays() { rule() }")),
		},
		{
			name: "a prefix",
			list: entry("m", "go test ./a -run '^TestOth'", edit("a/a.go", "func stays() { rule() }")),
			want: entry("m", "go test ./d -run '^TestOth'", edit("a/a.go", "func stays() { rule() }")),
		},
		{
			name: "a prefix still matching",
			list: entry("m", "go test ./c -run '^TestSpl'", edit("a/a.go", "func stays() { rule() }")),
		},
		{
			name: "the second of two commands",
			list: entry("m", "go test ./a -run '^TestStays$' && go test ./a -run '^TestOther$'", edit("a/a.go", "func stays() { rule() }")),
			want: entry("m", "go test ./a -run '^TestStays$' && go test ./d -run '^TestOther$'", edit("a/a.go", "func stays() { rule() }")),
		},
		{
			name:      "tests in two packages",
			list:      entry("m", "go test ./a -run '^(TestSplit|TestOther)$'", edit("a/a.go", "func stays() { rule() }")),
			unfixed:   true,
			wantPrint: []string{"TestSplit, TestOther not there, and not all in one package"},
		},
		{
			name:    "a test of one name in two packages",
			list:    entry("m", "go test ./a -run '^TestMoved$'", edit("a/a.go", "func stays() { rule() }")),
			unfixed: true,
		},
		{
			name: "several packages holding the tests",
			list: entry("m", "go test ./b ./c -run '^(TestMoved|TestSplit)$'", edit("a/a.go", "func stays() { rule() }")),
		},
		{
			name: "not selected",
			list: entry("m", "go test ./a -run '^TestOther$'", edit("a/old.go", "func moved() { guarded() }")) + "\n" +
				entry("n", "go test ./a -run '^TestOther$'", edit("a/old.go", "func moved() { guarded() }")),
			run: "^n$",
			want: entry("m", "go test ./a -run '^TestOther$'", edit("a/old.go", "func moved() { guarded() }")) + "\n" +
				entry("n", "go test ./d -run '^TestOther$'", edit("b/b.go", "func moved() { guarded() }")),
		},
		{
			name: "comments and blank lines kept",
			list: "# head\n\n" + entry("m", "go test ./b -run '^TestMoved$'", edit("a/old.go", "func moved() { guarded() }")) + "\n# tail\n",
			want: "# head\n\n" + entry("m", "go test ./b -run '^TestMoved$'", edit("b/b.go", "func moved() { guarded() }")) + "\n# tail\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			if out, err := exec.Command("git", "-C", root, "init", "-q").CombinedOutput(); err != nil {
				t.Skipf("git init: %v %s", err, out)
			}
			for name, data := range tree {
				write(t, filepath.Join(root, name), data)
			}
			listPath := filepath.Join(root, listName)
			write(t, listPath, tc.list)
			selected := func(string) bool { return true }
			if tc.run != "" {
				selected = func(name string) bool { return "^"+name+"$" == tc.run }
			}
			var out strings.Builder
			code, err := followList(root, listPath, []byte(tc.list), selected, &out)
			if err != nil {
				t.Fatal(err)
			}
			if got := code != 0; got != tc.unfixed {
				t.Errorf("exit %d, want unfixed %v\n%s", code, tc.unfixed, out.String())
			}
			want := tc.want
			if want == "" {
				want = tc.list
			}
			got, err := os.ReadFile(listPath)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != want {
				t.Errorf("list afterwards:\n%s\nwant:\n%s\nprinted:\n%s", got, want, out.String())
			}
			if _, err := Parse(strings.NewReader(string(got))); err != nil {
				t.Errorf("the list afterwards does not parse: %v", err)
			}
			for _, p := range tc.wantPrint {
				if !strings.Contains(out.String(), p) {
					t.Errorf("printed:\n%s\nwant it to say %q", out.String(), p)
				}
			}
		})
	}
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
