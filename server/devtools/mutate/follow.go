package main

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"
)

// Follow brings a list back to code that moved (-follow): several people
// move code and tests at once, each fixing the entries they know of, and
// after a merge the others' entries point at the old places. It rewrites
// only what it can tell for certain, and names everything else:
//
//   - a snippet not found exactly once in its file, found exactly once in
//     exactly one file of the tree, gets that file (the entry's file line
//     is rewritten, or a file line added where the entry's other snippets
//     stay behind);
//   - a `go test ./PKG -run '^TestX$'` (or '^(TestX|TestY)$', subtests
//     after a /, a prefix without the $) whose tests are not all in PKG gets the package that holds
//     them all, when one package does.
//
// A snippet whose text changed (a renamed identifier) cannot be followed:
// it is reported, and its entry is for a person to fix. Comments, blank
// lines and the order of the entries are kept as they are.
//
// listName is the list's own path in files, which holds every snippet and
// is never where one moved to.
func Follow(list []byte, listName string, files map[string]*File, selected func(name string) bool, w io.Writer) (out []byte, unfixed int, err error) {
	if _, err := Parse(bytes.NewReader(list)); err != nil {
		return nil, 0, err
	}
	if _, ok := files[listName]; ok {
		files = maps.Clone(files)
		delete(files, listName)
	}
	tests := testFuncs(files)
	lines := strings.SplitAfter(string(list), "\n")
	var (
		b        strings.Builder
		name     string
		listed   string // the file the entry's last file line names
		current  string // the file the snippets are applied to now (after any rewrite)
		fileLine = -1   // index in lines of the entry's last file line
		fileOut  = -1   // where that line was written in b, to rewrite it
		snippets int    // snippets since that file line
	)
	report := func(format string, args ...any) { fmt.Fprintf(w, "%s: "+format+"\n", append([]any{name}, args...)...) }
	skip := func() bool { return name == "" || !selected(name) }
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		text := strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
		trimmed := strings.TrimSpace(text)
		key, value, _ := strings.Cut(trimmed, " ")
		value = strings.TrimSpace(value)
		switch {
		case key == "mutation" && text == trimmed:
			name, listed, current, fileLine, fileOut, snippets = value, "", "", -1, -1, 0
		case key == "test" && text == trimmed && !skip():
			if fixed, ok := followTests(value, tests, report); ok && fixed != value {
				report("test %s → %s", value, fixed)
				line = strings.Replace(line, value, fixed, 1)
			} else if !ok {
				unfixed++
			}
		case key == "file" && text == trimmed:
			listed, current = path.Clean(value), path.Clean(value)
			fileLine, fileOut, snippets = i, b.Len(), 0
		case text == markOriginal:
			// The snippet, verbatim, up to the separator.
			j := i + 1
			for j < len(lines) && strings.TrimSuffix(strings.TrimSuffix(lines[j], "\n"), "\r") != markReplacement {
				j++
			}
			var orig []string
			for _, l := range lines[i+1 : j] {
				orig = append(orig, strings.TrimSuffix(strings.TrimSuffix(l, "\n"), "\r"))
			}
			snippets++
			want := listed // where the snippet is now, if it did not move
			if !skip() && count(files, listed, strings.Join(orig, "\n")) != 1 {
				found := onceIn(files, strings.Join(orig, "\n"))
				if len(found) == 1 {
					want = found[0]
					report("file %s → %s (snippet %d)", listed, want, snippets)
				} else {
					unfixed++
					report("snippet %d of %s could not be followed: it is exactly once in %d files%s", snippets, listed, len(found), listFiles(found))
				}
			}
			if want != current {
				if snippets == 1 && fileLine >= 0 {
					// The file line is this snippet's alone so far: rewrite it.
					s := b.String()
					old := lines[fileLine]
					b.Reset()
					b.WriteString(s[:fileOut])
					b.WriteString(strings.Replace(old, listed, want, 1))
					b.WriteString(s[fileOut+len(old):])
				} else {
					b.WriteString("file " + want + "\n")
				}
				current = want
			}
		}
		b.WriteString(line)
	}
	return []byte(b.String()), unfixed, nil
}

// count is how many times snippet occurs in the named file (0 when it is
// no file of the tree).
func count(files map[string]*File, name, snippet string) int {
	f := files[name]
	if f == nil || f.Link != "" {
		return 0
	}
	return bytes.Count(f.Data, []byte(snippet))
}

// onceIn lists the files of the tree holding snippet exactly once.
func onceIn(files map[string]*File, snippet string) []string {
	var found []string
	for name, f := range files {
		if f.Link == "" && bytes.Count(f.Data, []byte(snippet)) == 1 {
			found = append(found, name)
		}
	}
	slices.Sort(found)
	return found
}

func listFiles(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return " (" + strings.Join(names, ", ") + ")"
}

// testFunc is a top-level test function's declaration in a _test.go file.
var testFunc = regexp.MustCompile(`(?m)^func ((?:Test|Fuzz|Benchmark|Example)\w*)\(`)

// testFuncs maps each test function's name to the package directories
// that declare one of that name.
func testFuncs(files map[string]*File) map[string][]string {
	out := map[string][]string{}
	for name, f := range files {
		if f.Link != "" || !strings.HasSuffix(name, "_test.go") {
			continue
		}
		dir := path.Dir(name)
		for _, m := range testFunc.FindAllSubmatch(f.Data, -1) {
			if n := string(m[1]); !slices.Contains(out[n], dir) {
				out[n] = append(out[n], dir)
			}
		}
	}
	return out
}

// goTest is one `go test` of a test command: its packages, then its -run
// pattern in single quotes.
var goTest = regexp.MustCompile(`go test((?: +\./[^\s']*)+) +-run +'([^']*)'`)

// runNames are the top-level test names a -run pattern names, when it is
// of the forms the list uses ('^TestX$', '^(TestX|TestY)$', each maybe
// followed by /subtest patterns); nil otherwise. Without the $ each name
// is a prefix (every test whose name starts with it).
func runNames(pattern string) (names []string, prefix bool) {
	top, _, _ := strings.Cut(pattern, "/")
	top, prefix = strings.TrimPrefix(top, "^"), !strings.HasSuffix(top, "$")
	top = strings.TrimSuffix(top, "$")
	if strings.HasPrefix(top, "(") && strings.HasSuffix(top, ")") {
		top = top[1 : len(top)-1]
	}
	for _, n := range strings.Split(top, "|") {
		if !word.MatchString(n) {
			return nil, false
		}
		names = append(names, n)
	}
	return names, prefix
}

var word = regexp.MustCompile(`^\w+$`)

// dirsOf are the packages declaring a test named n (or, for a prefix,
// one whose name starts with n).
func dirsOf(tests map[string][]string, n string, prefix bool) []string {
	if !prefix {
		return tests[n]
	}
	var dirs []string
	for name, ds := range tests {
		if strings.HasPrefix(name, n) {
			for _, d := range ds {
				if !slices.Contains(dirs, d) {
					dirs = append(dirs, d)
				}
			}
		}
	}
	slices.Sort(dirs)
	return dirs
}

// followTests rewrites the package of each `go test ./PKG -run '…'` of
// command whose tests are not all in PKG to the one package that declares
// them all. ok is false when some go test names tests that are not in its
// packages and cannot be followed.
func followTests(command string, tests map[string][]string, report func(string, ...any)) (string, bool) {
	ok := true
	fixed := goTest.ReplaceAllStringFunc(command, func(seg string) string {
		m := goTest.FindStringSubmatch(seg)
		var pkgs []string
		for _, p := range strings.Fields(m[1]) {
			pkgs = append(pkgs, path.Clean(strings.TrimPrefix(p, "./")))
		}
		names, prefix := runNames(m[2])
		if names == nil {
			return seg
		}
		var missing []string
		for _, n := range names {
			if !slices.ContainsFunc(dirsOf(tests, n, prefix), func(dir string) bool { return slices.Contains(pkgs, dir) }) {
				missing = append(missing, n)
			}
		}
		if len(missing) == 0 {
			return seg
		}
		// The packages that declare every named test: one, or no rewrite.
		homes := slices.Clone(dirsOf(tests, names[0], prefix))
		for _, n := range names[1:] {
			homes = slices.DeleteFunc(homes, func(dir string) bool { return !slices.Contains(dirsOf(tests, n, prefix), dir) })
		}
		if len(homes) != 1 || len(pkgs) != 1 {
			ok = false
			report("go test %s: %s not there, and not all in one package", strings.Join(pkgs, " "), strings.Join(missing, ", "))
			return seg
		}
		return strings.Replace(seg, strings.TrimSpace(m[1]), "./"+homes[0], 1)
	})
	return fixed, ok
}
