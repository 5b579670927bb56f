// Command mutate checks that the tests guard the rules they are meant to
// guard. For each mutation of server/devtools/mutate/mutations.txt (the
// format is described at the top of that file) it copies the working tree
// (tracked files and untracked ones that are not ignored, as they are on
// disk now) into a scratch directory, applies the mutation there (an exact
// snippet of a file replaced by another), runs the mutation's test command
// in the copy and reports:
//
//	KILLED    the tests failed: the rule is guarded
//	SURVIVED  the tests passed without the rule
//	STALE     an original snippet is not in its file exactly once
//	BROKEN    the mutated copy does not build (fix the mutation)
//	BASELINE  the test command fails, or runs no test, without any mutation
//
// It exits non-zero unless every mutation was KILLED. The working tree
// itself is never written.
//
//	go run ./server/devtools/mutate [-j 2] [-run REGEXP] [-file server/devtools/mutate/mutations.txt] [-v]
//
// With -follow it runs nothing and brings the list back to code and tests
// that moved (Follow), printing what it changed and what it could not.
//
//	go run ./server/devtools/mutate -follow [-run REGEXP]
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"
)

func main() {
	file := flag.String("file", "server/devtools/mutate/mutations.txt", "the mutations list, relative to the repository root")
	jobs := flag.Int("j", 2, "test commands run at once")
	run := flag.String("run", "", "only the mutations whose name matches this regular expression")
	timeout := flag.Duration("timeout", 15*time.Minute, "longest run of one test command")
	verbose := flag.Bool("v", false, "print the output of every run, not only of the unexpected ones")
	follow := flag.Bool("follow", false, "run nothing: rewrite the entries whose snippets or tests moved to where they are now (see Follow)")
	flag.Parse()
	code, err := mutate(options{file: *file, jobs: *jobs, run: *run, timeout: *timeout, verbose: *verbose, follow: *follow}, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mutate:", err)
		os.Exit(2)
	}
	os.Exit(code)
}

type options struct {
	file    string
	jobs    int
	run     string
	timeout time.Duration
	verbose bool
	follow  bool
}

// Mutation is one entry of the list: edits that take a rule out and the
// command whose tests must then fail.
type Mutation struct {
	Name  string
	Test  string
	Edits []Edit
	Line  int // where it starts in the list, for messages
}

// Edit replaces the one occurrence of Original in File by Replacement.
type Edit struct {
	File        string
	Original    string
	Replacement string
}

const (
	markOriginal    = "<<<<<<<"
	markReplacement = "======="
	markEnd         = ">>>>>>>"
)

// Parse reads a mutations list.
func Parse(r io.Reader) ([]*Mutation, error) {
	var (
		muts    []*Mutation
		cur     *Mutation
		file    string
		state   int // 0 outside a snippet, 1 in the original, 2 in the replacement
		orig    []string
		repl    []string
		started int
		n       int
	)
	names := map[string]bool{}
	finish := func() error {
		if cur == nil {
			return nil
		}
		if cur.Test == "" {
			return fmt.Errorf("line %d: mutation %s has no test command", cur.Line, cur.Name)
		}
		if len(cur.Edits) == 0 {
			return fmt.Errorf("line %d: mutation %s has no edit", cur.Line, cur.Name)
		}
		muts = append(muts, cur)
		return nil
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		n++
		line := strings.TrimSuffix(sc.Text(), "\r")
		switch state {
		case 1:
			switch line {
			case markReplacement:
				state = 2
			case markOriginal, markEnd:
				return nil, fmt.Errorf("line %d: %s inside the original snippet begun on line %d (expected %s)", n, line, started, markReplacement)
			default:
				orig = append(orig, line)
			}
			continue
		case 2:
			switch line {
			case markEnd:
				if len(orig) == 0 {
					return nil, fmt.Errorf("line %d: empty original snippet", started)
				}
				cur.Edits = append(cur.Edits, Edit{File: file, Original: strings.Join(orig, "\n"), Replacement: strings.Join(repl, "\n")})
				state, orig, repl = 0, nil, nil
			case markOriginal, markReplacement:
				return nil, fmt.Errorf("line %d: %s inside the replacement snippet begun on line %d (expected %s)", n, line, started, markEnd)
			default:
				repl = append(repl, line)
			}
			continue
		}
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		key, value, _ := strings.Cut(trimmed, " ")
		value = strings.TrimSpace(value)
		switch {
		case key == "mutation":
			if err := finish(); err != nil {
				return nil, err
			}
			if value == "" || strings.ContainsAny(value, " \t") {
				return nil, fmt.Errorf("line %d: a mutation's name is one word", n)
			}
			if names[value] {
				return nil, fmt.Errorf("line %d: mutation %s is named twice", n, value)
			}
			names[value] = true
			cur, file = &Mutation{Name: value, Line: n}, ""
		case cur == nil:
			return nil, fmt.Errorf("line %d: %q before the first mutation line", n, trimmed)
		case key == "test":
			if value == "" {
				return nil, fmt.Errorf("line %d: empty test command", n)
			}
			cur.Test = value
		case key == "file":
			if value == "" || filepath.IsAbs(value) || strings.HasPrefix(filepath.Clean(value), "..") {
				return nil, fmt.Errorf("line %d: file must be a path inside the repository", n)
			}
			file = filepath.ToSlash(filepath.Clean(value))
		case line == markOriginal:
			if file == "" {
				return nil, fmt.Errorf("line %d: snippet without a file line before it", n)
			}
			state, started = 1, n
		default:
			return nil, fmt.Errorf("line %d: unknown line %q (want mutation, test, file, %s or a # comment)", n, trimmed, markOriginal)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if state != 0 {
		return nil, fmt.Errorf("line %d: snippet not closed with %s", started, markEnd)
	}
	if err := finish(); err != nil {
		return nil, err
	}
	return muts, nil
}

// Apply returns the files changed by a mutation's edits, or an error naming
// the edit whose original is not found exactly once (the mutation is stale:
// the code moved on and the list must follow).
func Apply(m *Mutation, files map[string]*File) (map[string][]byte, error) {
	changed := map[string][]byte{}
	for i, e := range m.Edits {
		content, ok := changed[e.File]
		if !ok {
			f := files[e.File]
			if f == nil || f.Link != "" {
				return nil, fmt.Errorf("edit %d: %s is not a file of the working tree", i+1, e.File)
			}
			content = f.Data
		}
		switch n := bytes.Count(content, []byte(e.Original)); n {
		case 1:
		case 0:
			return nil, fmt.Errorf("edit %d: the original snippet is not in %s", i+1, e.File)
		default:
			return nil, fmt.Errorf("edit %d: the original snippet is in %s %d times, not once", i+1, e.File, n)
		}
		changed[e.File] = bytes.Replace(content, []byte(e.Original), []byte(e.Replacement), 1)
	}
	return changed, nil
}

// File is one file of the snapshot.
type File struct {
	Data []byte
	Mode fs.FileMode
	Link string // symlink target, if it is one
}

// snapshot reads the working tree's tracked files and its untracked files
// that are not ignored, as they are on disk now.
func snapshot(root string) (map[string]*File, error) {
	out, err := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files: %w", err)
	}
	files := map[string]*File{}
	for _, name := range strings.Split(string(out), "\x00") {
		if name == "" || files[name] != nil {
			continue
		}
		p := filepath.Join(root, filepath.FromSlash(name))
		st, err := os.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue // deleted in the working tree
		case err != nil:
			return nil, err
		case st.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return nil, err
			}
			files[name] = &File{Link: target}
		case st.Mode().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return nil, err
			}
			files[name] = &File{Data: data, Mode: st.Mode().Perm()}
		}
	}
	return files, nil
}

// materialize writes the snapshot, with changed files replaced, into dir.
func materialize(dir string, files map[string]*File, changed map[string][]byte) error {
	for name, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if f.Link != "" {
			if err := os.Symlink(f.Link, p); err != nil {
				return err
			}
			continue
		}
		data := f.Data
		if c, ok := changed[name]; ok {
			data = c
		}
		if err := os.WriteFile(p, data, f.Mode|0o200); err != nil {
			return err
		}
	}
	return nil
}

// Outcome of one mutation.
const (
	Killed   = "KILLED"
	Survived = "SURVIVED"
	Stale    = "STALE"
	Broken   = "BROKEN"
	Baseline = "BASELINE"
)

var buildFailed = regexp.MustCompile(`\[(build|setup) failed\]`)

// runResult is how one run of a test command went.
type runResult struct {
	exitOK   bool
	timedOut bool
	output   string
	elapsed  time.Duration
	err      error // the command could not be run at all
}

// ranNoTest reports whether a passing go test run ran no test at all (a
// -run pattern that no longer names any).
func ranNoTest(output string) bool {
	ran, none := false, false
	for _, l := range strings.Split(output, "\n") {
		if !strings.HasPrefix(l, "ok ") {
			continue
		}
		if strings.Contains(l, "[no tests to run]") {
			none = true
		} else {
			ran = true
		}
	}
	return none && !ran
}

// classify turns a mutated run into an outcome.
func classify(r runResult) string {
	switch {
	case r.err != nil:
		return Broken
	case r.timedOut:
		return Killed
	case r.exitOK:
		return Survived
	case buildFailed.MatchString(r.output):
		return Broken
	}
	return Killed
}

func runCommand(ctx context.Context, dir, command string, timeout time.Duration) runResult {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", command)
	cmd.Dir = dir
	// -trimpath keeps the copies' directories out of the build, so that
	// the build cache serves every package a mutation does not touch.
	cmd.Env = append(os.Environ(), "GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -trimpath"))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	start := time.Now()
	err := cmd.Run()
	r := runResult{exitOK: err == nil, output: out.String(), elapsed: time.Since(start)}
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		r.timedOut, r.exitOK = true, false
	case err != nil && !errors.As(err, &exit):
		r.err = err
	}
	return r
}

type report struct {
	m       *Mutation
	outcome string
	note    string
	elapsed time.Duration
	output  string
}

func mutate(o options, w io.Writer) (int, error) {
	rootOut, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return 0, fmt.Errorf("not in a git repository: %w", err)
	}
	root := strings.TrimSpace(string(rootOut))
	listPath := o.file
	if !filepath.IsAbs(listPath) {
		listPath = filepath.Join(root, listPath)
	}
	list, err := os.ReadFile(listPath)
	if err != nil {
		return 0, err
	}
	muts, err := Parse(bytes.NewReader(list))
	if err != nil {
		return 0, fmt.Errorf("%s: %w", o.file, err)
	}
	selected := func(string) bool { return true }
	if o.run != "" {
		re, err := regexp.Compile(o.run)
		if err != nil {
			return 0, fmt.Errorf("-run: %w", err)
		}
		selected = re.MatchString
		muts = slices.DeleteFunc(muts, func(m *Mutation) bool { return !selected(m.Name) })
	}
	if o.follow {
		return followList(root, listPath, list, selected, w)
	}
	if len(muts) == 0 {
		return 0, errors.New("no mutation selected")
	}
	files, err := snapshot(root)
	if err != nil {
		return 0, err
	}
	scratch, err := os.MkdirTemp("", "kessai-mutate-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(scratch)
	if o.jobs < 1 {
		o.jobs = 1
	}
	ctx := context.Background()

	reports := make([]*report, len(muts))
	applied := make([]map[string][]byte, len(muts))
	commands := map[string]bool{}
	for i, m := range muts {
		reports[i] = &report{m: m}
		changed, err := Apply(m, files)
		if err != nil {
			reports[i].outcome, reports[i].note = Stale, err.Error()
			continue
		}
		applied[i] = changed
		commands[m.Test] = true
	}

	// Each test command must pass on the unmutated copy, and run a test,
	// or a KILLED would mean nothing.
	var cmds []string
	for c := range commands {
		cmds = append(cmds, c)
	}
	sort.Strings(cmds)
	baseline := make(map[string]runResult, len(cmds))
	var mu sync.Mutex
	fmt.Fprintf(w, "mutate: %d mutations, %d test commands; baseline runs first (%d at a time)\n", len(muts), len(cmds), o.jobs)
	parallel(o.jobs, len(cmds), func(i int) {
		r := runIn(ctx, scratch, fmt.Sprintf("baseline-%d", i), files, nil, cmds[i], o.timeout)
		mu.Lock()
		baseline[cmds[i]] = r
		mu.Unlock()
	})
	parallel(o.jobs, len(muts), func(i int) {
		rep := reports[i]
		if rep.outcome != "" {
			return
		}
		b := baseline[rep.m.Test]
		switch {
		case b.err != nil || !b.exitOK:
			rep.outcome, rep.note, rep.output = Baseline, "the test command fails without the mutation", b.output
			if b.err != nil {
				rep.note += ": " + b.err.Error()
			}
			return
		case ranNoTest(b.output):
			rep.outcome, rep.note, rep.output = Baseline, "the test command runs no test (stale -run pattern?)", b.output
			return
		}
		r := runIn(ctx, scratch, fmt.Sprintf("m%03d", i), files, applied[i], rep.m.Test, o.timeout)
		rep.outcome, rep.elapsed, rep.output = classify(r), r.elapsed, r.output
		switch {
		case r.err != nil:
			rep.note = r.err.Error()
		case r.timedOut:
			rep.note = "timed out"
		case rep.outcome == Broken:
			rep.note = "the mutated copy does not build"
		}
		mu.Lock()
		fmt.Fprintf(w, "  %-8s %s (%s)\n", rep.outcome, rep.m.Name, rep.elapsed.Round(100*time.Millisecond))
		mu.Unlock()
	})

	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "MUTATION\tRESULT\tTIME\tTEST")
	bad := 0
	for _, r := range reports {
		elapsed := "-"
		if r.elapsed > 0 {
			elapsed = r.elapsed.Round(100 * time.Millisecond).String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.m.Name, r.outcome, elapsed, r.m.Test)
		if r.outcome != Killed {
			bad++
		}
	}
	tw.Flush()
	for _, r := range reports {
		if r.outcome == Killed && !o.verbose {
			continue
		}
		fmt.Fprintf(w, "\n--- %s %s (%s, line %d)", r.outcome, r.m.Name, o.file, r.m.Line)
		if r.note != "" {
			fmt.Fprintf(w, ": %s", r.note)
		}
		fmt.Fprintln(w)
		if r.output != "" {
			fmt.Fprintln(w, tail(r.output, 40))
		}
	}
	fmt.Fprintf(w, "\n%d of %d mutations killed\n", len(reports)-bad, len(reports))
	if bad > 0 {
		return 1, nil
	}
	return 0, nil
}

// followList is -follow: Follow over the working tree, the list rewritten
// in place when anything moved; 1 when something could not be followed.
func followList(root, listPath string, list []byte, selected func(string) bool, w io.Writer) (int, error) {
	files, err := snapshot(root)
	if err != nil {
		return 0, err
	}
	rel, err := filepath.Rel(root, listPath)
	if err != nil {
		return 0, err
	}
	out, unfixed, err := Follow(list, filepath.ToSlash(rel), files, selected, w)
	if err != nil {
		return 0, err
	}
	if !bytes.Equal(out, list) {
		if err := os.WriteFile(listPath, out, 0o644); err != nil {
			return 0, err
		}
		fmt.Fprintf(w, "mutate: rewrote %s\n", rel)
	}
	if unfixed > 0 {
		fmt.Fprintf(w, "mutate: %d could not be followed (above): fix them by hand\n", unfixed)
		return 1, nil
	}
	return 0, nil
}

// runIn materializes a copy in scratch/name and runs the command there.
func runIn(ctx context.Context, scratch, name string, files map[string]*File, changed map[string][]byte, command string, timeout time.Duration) runResult {
	dir := filepath.Join(scratch, name)
	defer os.RemoveAll(dir)
	if err := materialize(dir, files, changed); err != nil {
		return runResult{err: err}
	}
	return runCommand(ctx, dir, command, timeout)
}

func parallel(jobs, n int, fn func(i int)) {
	sem := make(chan struct{}, jobs)
	var wg sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			fn(i)
		}()
	}
	wg.Wait()
}

func tail(s string, lines int) string {
	parts := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(parts) > lines {
		parts = append([]string{"…"}, parts[len(parts)-lines:]...)
	}
	return strings.Join(parts, "\n")
}
