// Command startrss prints the gateway's resident memory right after it
// starts (`make rss`): bin/kessai serve with the demo storefront, the
// default configuration and a fresh data directory, read from
// /proc/PID/status (VmRSS, RssAnon, RssFile) once it answers
// /static/checkout.js, and again two seconds later when its background work
// (compressing any static file the build did not) has had its time; beside a
// bare net/http server (./baseline, built by the same toolchain) read the same
// way in the same run. A report, not a test: nothing fails on a number.
//
//	go run ./server/devtools/startrss [-bin bin/kessai] [-runs 3] [-after 2s]
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

func main() {
	bin := flag.String("bin", "bin/kessai", "the gateway binary")
	runs := flag.Int("runs", 3, "starts of each program")
	after := flag.Duration("after", 2*time.Second, "the second reading's delay after the first")
	flag.Parse()
	if err := run(*bin, *runs, *after); err != nil {
		fmt.Fprintln(os.Stderr, "startrss:", err)
		os.Exit(1)
	}
}

// reading is one /proc/PID/status sample, in KiB.
type reading struct{ rss, anon, file int }

func run(bin string, runs int, after time.Duration) error {
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("%s: %w (make build writes it)", bin, err)
	}
	tmp, err := os.MkdirTemp("", "kessai-startrss-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	baseline := filepath.Join(tmp, "baseline")
	build := exec.Command("go", "build", "-o", baseline, "./server/devtools/startrss/baseline")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("building the baseline: %w", err)
	}
	var gw, base [2][]reading
	for i := 0; i < runs; i++ {
		// Interleaved, so that both see the machine as it is.
		addr, demo := freeAddr(), freeAddr()
		dir := filepath.Join(tmp, "data"+strconv.Itoa(i))
		r, err := measure(exec.Command(bin, "serve"), "http://"+addr+"/static/checkout.js", after,
			"KESSAI_ADDR="+addr, "KESSAI_DEMO_ADDR="+demo, "KESSAI_DATA_DIR="+dir)
		if err != nil {
			return fmt.Errorf("%s serve: %w", bin, err)
		}
		gw[0], gw[1] = append(gw[0], r[0]), append(gw[1], r[1])
		addr = freeAddr()
		r, err = measure(exec.Command(baseline, "-addr", addr), "http://"+addr+"/", after)
		if err != nil {
			return fmt.Errorf("baseline: %w", err)
		}
		base[0], base[1] = append(base[0], r[0]), append(base[1], r[1])
	}
	fmt.Printf("Resident memory after start (KiB from /proc/PID/status; median of %d starts, min–max)\n\n", runs)
	fmt.Printf("%-44s %22s %22s %22s\n", "", "VmRSS", "RssAnon", "RssFile")
	row := func(name string, rs []reading) {
		col := func(f func(reading) int) string {
			v := make([]int, len(rs))
			for i, r := range rs {
				v[i] = f(r)
			}
			slices.Sort(v)
			return fmt.Sprintf("%d (%d–%d)", v[len(v)/2], v[0], v[len(v)-1])
		}
		fmt.Printf("%-44s %22s %22s %22s\n", name, col(func(r reading) int { return r.rss }),
			col(func(r reading) int { return r.anon }), col(func(r reading) int { return r.file }))
	}
	row("kessai serve (demo on, fresh data), ready", gw[0])
	row(fmt.Sprintf("kessai serve, %s later", after), gw[1])
	row("bare net/http server (baseline), ready", base[0])
	row(fmt.Sprintf("bare net/http server, %s later", after), base[1])
	return nil
}

// measure starts cmd with env added, waits until url answers 200, and
// reads its memory then and after the delay; then stops it.
func measure(cmd *exec.Cmd, url string, after time.Duration, env ...string) ([2]reading, error) {
	var out [2]reading
	cmd.Env = append(os.Environ(), env...)
	if err := cmd.Start(); err != nil {
		return out, err
	}
	defer func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		res, err := http.DefaultClient.Do(req)
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				break
			}
		}
		if ctx.Err() != nil {
			return out, fmt.Errorf("%s did not answer: %v", url, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	var err error
	if out[0], err = status(cmd.Process.Pid); err != nil {
		return out, err
	}
	time.Sleep(after)
	out[1], err = status(cmd.Process.Pid)
	return out, err
}

// status reads VmRSS, RssAnon and RssFile of a process.
func status(pid int) (reading, error) {
	var r reading
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return r, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
		switch k {
		case "VmRSS":
			r.rss = n
		case "RssAnon":
			r.anon = n
		case "RssFile":
			r.file = n
		}
	}
	return r, sc.Err()
}

// freeAddr is a loopback address with a port nothing listens on now.
func freeAddr() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer l.Close()
	return l.Addr().String()
}
