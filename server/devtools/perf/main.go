// Command perf measures Kessai beside an anchor taken in the same run on the
// same machine, and prints one table: path, Kessai, anchor, ratio. `make
// perf` runs it (about two and a half minutes).
//
// Read path: the gateway binary (built into a scratch directory) on loopback,
// the sandbox acquirer at 0 latency and every rate limit raised by
// configuration to its ceiling (KESSAI_RATE_*), so that the limiter still
// decides and counts every request but never refuses one. One charge is
// made through the API; then wrk (-t2 -c32 -d8s) drives GET
// /stores/{id}/charges/{id} with the store's secret, and, interleaved with
// it, a bare net/http handler of this program answering the very bytes and
// content headers the gateway answered. Three rounds each; the medians are
// compared. Any answer other than 200 fails the run (a refusal by the
// limiter would be a bug in the setup). localstripe, when installed, is a
// third row (its GET /v1/customers/{id}); without it one line says so.
//
// Write path: the benchmarks of server/gateway (charges_bench_test.go,
// drain_bench_test.go), built once as a test binary and run here: card
// charges accepted (POST /tokens then POST /charges) and fully processed
// per second beside the raw single-row SQLite commit rate of a gateway's
// file (synchronous=FULL) on the same file system in the same run; and,
// with the acquirer taking 300 ms a call, the worker's drain rate beside
// the API's acceptance rate, with how long a charge waited from creation to
// its final status (p50, p99).
//
// PERF_SCALEOUT=1 (`make perf-scaleout`) adds the same paths on PostgreSQL
// + Redis, with one gateway process and with two (scaleout.go).
//
// PERF_PROFILE=1 also takes a CPU profile of the gateway under the read
// load, in a fourth gateway round that is not counted, through its
// loopback-only pprof listener (KESSAI_PPROF_ADDR); it is written to
// PERF_OUT (default bin/perf) and its top entries printed.
//
// Environment: PERF_DURATION (default 8s) per wrk round, PERF_ROUNDS
// (default 3), PERF_DRAIN_CHARGES (default 2000), PERF_WRITE=0 skips the
// write path, PERF_OUT (default bin/perf).
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "perf:", err)
		os.Exit(1)
	}
}

type settings struct {
	duration      string
	rounds        int
	drainCharges  int
	write         bool
	profile       bool
	out           string
	scratch       string
	wrkThreads    string
	wrkConns      string
	profileSecond int
}

func env(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}

func atoi(name string, fallback int) int {
	n, err := strconv.Atoi(env(name, strconv.Itoa(fallback)))
	if err != nil || n < 1 {
		fmt.Fprintf(os.Stderr, "perf: %s must be a positive whole number\n", name)
		os.Exit(2)
	}
	return n
}

// row is one line of the table.
type row struct {
	path, kessai, anchor, ratio, note string
}

func run() error {
	st := settings{
		duration:     env("PERF_DURATION", "8s"),
		rounds:       atoi("PERF_ROUNDS", 3),
		drainCharges: atoi("PERF_DRAIN_CHARGES", 2000),
		write:        env("PERF_WRITE", "1") != "0",
		profile:      env("PERF_PROFILE", "0") != "0",
		out:          env("PERF_OUT", "bin/perf"),
		wrkThreads:   "2",
		wrkConns:     "32",
	}
	d, err := time.ParseDuration(st.duration)
	if err != nil {
		return fmt.Errorf("PERF_DURATION: %w", err)
	}
	st.profileSecond = max(int(d.Seconds())-2, 1)
	if _, err := exec.LookPath("wrk"); err != nil {
		return errors.New("wrk is not installed (.ci/ensure-deps --perf installs it)")
	}
	scale := env("PERF_SCALEOUT", "0") != "0"
	if scale {
		if err := scaleoutReachable(); err != nil {
			return err
		}
	}
	if st.scratch, err = os.MkdirTemp("", "kessai-perf-"); err != nil {
		return err
	}
	defer os.RemoveAll(st.scratch)
	if err := os.MkdirAll(st.out, 0o755); err != nil {
		return err
	}
	started := time.Now()
	fmt.Printf("perf: %s, GOMAXPROCS of the gateway as on this machine (%d CPUs); wrk -t%s -c%s -d%s, %d rounds each, interleaved\n",
		time.Now().UTC().Format(time.RFC3339), numCPU(), st.wrkThreads, st.wrkConns, st.duration, st.rounds)

	bin := filepath.Join(st.scratch, "kessai")
	if err := sh("go", "build", "-o", bin, "./server"); err != nil {
		return err
	}
	var testBin string
	if st.write {
		testBin = filepath.Join(st.scratch, "gateway.test")
		if err := sh("go", "test", "-c", "-o", testBin, "./server/gateway"); err != nil {
			return err
		}
	}

	rows, err := readPath(st, bin)
	if err != nil {
		return err
	}
	if st.write {
		w, err := writePath(st, testBin)
		if err != nil {
			return err
		}
		rows = append(rows, w...)
	}
	if scale {
		s, err := scaleout(st, bin)
		if err != nil {
			return err
		}
		rows = append(rows, s...)
	}
	fmt.Printf("\nperf: done in %s\n\n", time.Since(started).Round(time.Second))
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PATH\tKESSAI\tANCHOR\tRATIO\tNOTE")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.path, r.kessai, r.anchor, r.ratio, r.note)
	}
	return tw.Flush()
}

func numCPU() int {
	out, err := exec.Command("nproc").Output()
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(out)))
	return n
}

// sh runs a command with its output on ours.
func sh(name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	return nil
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// ceiling is limit.MaxRuleValue: buckets that count every request and
// never run dry.
const ceiling = "100000000"

// gateway is the binary, started.
type gateway struct {
	cmd       *exec.Cmd
	url       string
	pprofAddr string
	auth      string
	storeID   string
	logPath   string
}

func startGateway(st settings, bin string) (*gateway, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	g := &gateway{url: "http://" + addr, logPath: filepath.Join(st.scratch, "gateway.log")}
	dataDir := filepath.Join(st.scratch, "data")
	environ := []string{
		"KESSAI_ADDR=" + addr, "KESSAI_DEMO_ADDR=", "KESSAI_DATA_DIR=" + dataDir,
		"KESSAI_SANDBOX_LATENCY=0", "KESSAI_LOG_LEVEL=info",
		"KESSAI_LIMIT_TEST_CHARGES_PER_DAY=" + ceiling,
	}
	for _, class := range []string{"CHARGE", "ROUTE", "EXACT"} {
		for _, knob := range []string{"BURST", "REFILL_PER_MINUTE", "PER_MINUTE"} {
			environ = append(environ, "KESSAI_RATE_"+class+"_"+knob+"="+ceiling)
		}
	}
	if st.profile {
		if g.pprofAddr, err = freeAddr(); err != nil {
			return nil, err
		}
		environ = append(environ, "KESSAI_PPROF_ADDR="+g.pprofAddr)
	}
	logFile, err := os.Create(g.logPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	g.cmd = exec.Command(bin, "serve")
	g.cmd.Env = append(cleanEnv(), environ...)
	g.cmd.Stdout, g.cmd.Stderr = io.Discard, logFile
	if err := g.cmd.Start(); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if res, err := http.Get(g.url + "/heartbeat"); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			g.stop()
			return nil, fmt.Errorf("the gateway did not answer /heartbeat within 30 s (log: %s)", tail(g.logPath))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if g.auth, g.storeID, err = demoAuth(dataDir); err != nil {
		g.stop()
		return nil, err
	}
	return g, nil
}

// demoAuth reads the demo credentials a gateway wrote into dataDir: its
// Authorization header value and its store's id.
func demoAuth(dataDir string) (auth, storeID string, err error) {
	var creds struct {
		JWT, Secret string
		StoreID     string `json:"store_id"`
	}
	b, err := os.ReadFile(filepath.Join(dataDir, "demo-credentials.json"))
	if err == nil {
		err = json.Unmarshal(b, &creds)
	}
	if err != nil {
		return "", "", fmt.Errorf("demo credentials: %w", err)
	}
	return "Bearer " + creds.Secret + "." + creds.JWT, creds.StoreID, nil
}

// cleanEnv is this process's environment without any KESSAI_ variable.
func cleanEnv() []string {
	return slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "KESSAI_") })
}

func tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

func (g *gateway) stop() {
	_ = g.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = g.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = g.cmd.Process.Kill()
		<-done
	}
}

func (g *gateway) do(method, path, body string) (*http.Response, []byte, error) {
	req, err := http.NewRequest(method, g.url+path, strings.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Authorization", g.auth)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res, b, err
}

// seedCharge makes one card charge and waits until it is successful; it
// returns its path under the store and the answer to a GET of it.
func (g *gateway) seedCharge() (string, *http.Response, []byte, error) {
	tokenBody := fmt.Sprintf(`{"payment_type":"card","type":"one_time","email":"perf@example.com",`+
		`"data":{"cardholder":"TARO YAMADA","card_number":"4000020000000000","exp_month":12,"exp_year":%d,"cvv":"123"}}`,
		time.Now().Year()+3)
	var obj struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	}
	res, b, err := g.do(http.MethodPost, "/tokens", tokenBody)
	if err != nil || res.StatusCode != http.StatusCreated || json.Unmarshal(b, &obj) != nil {
		return "", nil, nil, fmt.Errorf("POST /tokens: %v %s", err, b)
	}
	res, b, err = g.do(http.MethodPost, "/charges", `{"transaction_token_id":"`+obj.ID+`","amount":1000,"currency":"JPY"}`)
	if err != nil || res.StatusCode != http.StatusCreated || json.Unmarshal(b, &obj) != nil {
		return "", nil, nil, fmt.Errorf("POST /charges: %v %s", err, b)
	}
	path := "/stores/" + g.storeID + "/charges/" + obj.ID
	for range 100 {
		res, b, err = g.do(http.MethodGet, path+"?polling=true", "")
		if err != nil || res.StatusCode != http.StatusOK || json.Unmarshal(b, &obj) != nil {
			return "", nil, nil, fmt.Errorf("GET %s: %v %s", path, err, b)
		}
		if obj.Status == "successful" {
			res, b, err = g.do(http.MethodGet, path, "")
			if err != nil || res.StatusCode != http.StatusOK {
				return "", nil, nil, fmt.Errorf("GET %s: %v %s", path, err, b)
			}
			return path, res, b, nil
		}
	}
	return "", nil, nil, fmt.Errorf("charge %s still %s", obj.ID, obj.Status)
}

// bareServer answers every request with body and the gateway's content
// headers: net/http and the same bytes, with nothing behind them.
func bareServer(res *http.Response, body []byte) (string, func(), error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	ctype, cache := res.Header.Get("Content-Type"), res.Header.Get("Cache-Control")
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", ctype)
		h.Set("Cache-Control", cache)
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(body)
	})}
	go func() { _ = srv.Serve(l) }()
	return "http://" + l.Addr().String(), func() { _ = srv.Close() }, nil
}

var (
	wrkRate   = regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`)
	wrkNon2xx = regexp.MustCompile(`Non-2xx or 3xx responses:\s+(\d+)`)
	wrkErrors = regexp.MustCompile(`Socket errors:.*`)
	wrkLat    = regexp.MustCompile(`Latency\s+(\S+)\s+(\S+)\s+(\S+)`)
)

// wrk drives url and returns requests per second. Any answer but 2xx, or a
// socket error, fails it.
func wrk(st settings, url string, header ...string) (float64, string, error) {
	args := []string{"-t" + st.wrkThreads, "-c" + st.wrkConns, "-d" + st.duration}
	for _, h := range header {
		args = append(args, "-H", h)
	}
	out, err := exec.Command("wrk", append(args, url)...).CombinedOutput()
	if err != nil {
		return 0, "", fmt.Errorf("wrk %s: %w\n%s", url, err, out)
	}
	text := string(out)
	if m := wrkNon2xx.FindStringSubmatch(text); m != nil {
		return 0, "", fmt.Errorf("wrk %s: %s answers were not 2xx\n%s", url, m[1], text)
	}
	if m := wrkErrors.FindString(text); m != "" {
		return 0, "", fmt.Errorf("wrk %s: %s\n%s", url, m, text)
	}
	m := wrkRate.FindStringSubmatch(text)
	if m == nil {
		return 0, "", fmt.Errorf("wrk %s: no Requests/sec in\n%s", url, text)
	}
	rate, _ := strconv.ParseFloat(m[1], 64)
	lat := ""
	if l := wrkLat.FindStringSubmatch(text); l != nil {
		lat = "latency avg " + l[1] + " ±" + l[2]
	}
	return rate, lat, nil
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// spread is the rounds' range as a share of their median.
func spread(xs []float64) string {
	m := median(xs)
	if m == 0 {
		return ""
	}
	return fmt.Sprintf("±%.0f%%", (slices.Max(xs)-slices.Min(xs))/2/m*100)
}

func rps(x float64) string { return fmt.Sprintf("%.0f/s", x) }

func ratio(a, b float64) string {
	if b == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f×", a/b)
}

func readPath(st settings, bin string) ([]row, error) {
	g, err := startGateway(st, bin)
	if err != nil {
		return nil, err
	}
	defer g.stop()
	path, res, body, err := g.seedCharge()
	if err != nil {
		return nil, err
	}
	bareURL, stopBare, err := bareServer(res, body)
	if err != nil {
		return nil, err
	}
	defer stopBare()
	fmt.Printf("perf: GET %s answers %d bytes; the bare handler answers the same bytes at %s\n", "/stores/{id}/charges/{id}", len(body), bareURL)

	auth := "Authorization: " + g.auth
	var kessai, bare []float64
	for i := range st.rounds {
		k, klat, err := wrk(st, g.url+path, auth)
		if err != nil {
			return nil, err
		}
		b, blat, err := wrk(st, bareURL+path, auth)
		if err != nil {
			return nil, err
		}
		kessai, bare = append(kessai, k), append(bare, b)
		fmt.Printf("perf: round %d: kessai %.0f req/s (%s), bare %.0f req/s (%s)\n", i+1, k, klat, b, blat)
	}
	rows := []row{{
		path: "GET /stores/{id}/charges/{id} (req/s)", kessai: rps(median(kessai)), anchor: rps(median(bare)) + " bare net/http",
		ratio: ratio(median(kessai), median(bare)), note: "spread kessai " + spread(kessai) + ", bare " + spread(bare) + "; goal ≥ 0.60×",
	}}
	if st.profile {
		if err := profile(st, g, bin, path, auth); err != nil {
			return nil, err
		}
	}
	ls, err := localstripe(st, median(kessai))
	if err != nil {
		return nil, err
	}
	if ls != nil {
		rows = append(rows, *ls)
	}
	return rows, nil
}

// profile takes a CPU profile of the gateway during one more round of the
// read load (not counted), and prints its top entries.
func profile(st settings, g *gateway, bin, path, auth string) error {
	file := filepath.Join(st.out, "cpu.pprof")
	errc := make(chan error, 1)
	go func() {
		res, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", g.pprofAddr, st.profileSecond))
		if err != nil {
			errc <- err
			return
		}
		defer res.Body.Close()
		var buf bytes.Buffer
		if _, err := io.Copy(&buf, res.Body); err != nil {
			errc <- err
			return
		}
		if res.StatusCode != http.StatusOK {
			errc <- fmt.Errorf("profile: %d %s", res.StatusCode, buf.Bytes())
			return
		}
		errc <- os.WriteFile(file, buf.Bytes(), 0o644)
	}()
	time.Sleep(200 * time.Millisecond)
	if _, _, err := wrk(st, g.url+path, auth); err != nil {
		return err
	}
	if err := <-errc; err != nil {
		return err
	}
	binCopy := filepath.Join(st.out, "kessai")
	if b, err := os.ReadFile(bin); err == nil {
		_ = os.WriteFile(binCopy, b, 0o755)
	}
	fmt.Printf("perf: CPU profile of the gateway under the read load: %s (go tool pprof -http=: %s %s)\n", file, binCopy, file)
	out, err := exec.Command("go", "tool", "pprof", "-top", "-nodecount=35", binCopy, file).CombinedOutput()
	if err != nil {
		return fmt.Errorf("go tool pprof: %w\n%s", err, out)
	}
	fmt.Printf("%s\n", out)
	out, err = exec.Command("go", "tool", "pprof", "-top", "-cum", "-nodecount=35", binCopy, file).CombinedOutput()
	if err == nil {
		fmt.Printf("%s\n", out)
	}
	return nil
}

// localstripe, when installed, answers a GET of one of its customers under
// the same load: another payment API's read path on this machine.
func localstripe(st settings, kessai float64) (*row, error) {
	exe, err := exec.LookPath("localstripe")
	if err != nil {
		fmt.Println("perf: localstripe is not installed on this machine; its row is skipped")
		return nil, nil
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command(exe, "--port", port)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	base := "http://" + addr
	const key = "sk_test_perf"
	var id string
	for deadline := time.Now().Add(20 * time.Second); id == "" && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		req, _ := http.NewRequest(http.MethodPost, base+"/v1/customers", strings.NewReader("email=perf%40example.com"))
		req.SetBasicAuth(key, "")
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			continue
		}
		var c struct{ ID string }
		_ = json.NewDecoder(res.Body).Decode(&c)
		res.Body.Close()
		id = c.ID
	}
	if id == "" {
		fmt.Println("perf: localstripe did not start; its row is skipped")
		return nil, nil
	}
	var rates []float64
	for range st.rounds {
		r, _, err := wrk(st, base+"/v1/customers/"+id, "Authorization: Bearer "+key)
		if err != nil {
			return nil, err
		}
		rates = append(rates, r)
	}
	return &row{path: "GET one object, localstripe (req/s)", kessai: rps(kessai), anchor: rps(median(rates)) + " localstripe",
		ratio: ratio(kessai, median(rates)), note: "spread localstripe " + spread(rates)}, nil
}

// benchMetrics runs benchmarks of the gateway's test binary and returns each
// benchmark's metrics by unit (its last result line).
func benchMetrics(testBin string, args ...string) (map[string]map[string]float64, error) {
	cmd := exec.Command(testBin, append([]string{"-test.run", "^$"}, args...)...)
	cmd.Dir = "server/gateway"
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	fmt.Fprint(os.Stderr, out.String())
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", testBin, strings.Join(args, " "), err)
	}
	metrics := map[string]map[string]float64{}
	for _, line := range strings.Split(out.String(), "\n") {
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		name := f[0]
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			name = name[:i]
		}
		m := map[string]float64{}
		for i := 2; i+1 < len(f); i += 2 {
			if v, err := strconv.ParseFloat(f[i], 64); err == nil {
				m[f[i+1]] = v
			}
		}
		metrics[name] = m
	}
	return metrics, nil
}

func writePath(st settings, testBin string) ([]row, error) {
	fmt.Println("perf: write path (server/gateway/charges_bench_test.go, drain_bench_test.go)")
	m, err := benchMetrics(testBin, "-test.bench", "^(BenchmarkCreateCharge|BenchmarkSQLiteCommit)$", "-test.benchtime", "3s", "-test.benchmem")
	if err != nil {
		return nil, err
	}
	cc, commit := m["BenchmarkCreateCharge"], m["BenchmarkSQLiteCommit"]
	if cc == nil || commit == nil {
		return nil, errors.New("the charge benchmarks reported nothing")
	}
	rows := []row{
		{path: "charge accepted: POST /tokens + POST /charges (charges/s)", kessai: rps(cc["accepted/s"]),
			anchor: rps(commit["commits/s"]) + " SQLite 1-row commits (FULL)", ratio: ratio(cc["accepted/s"], commit["commits/s"]),
			note: "same file system, same run; goal ≥ 1.0× (group commit)"},
		{path: "charge fully processed (charges/s)", kessai: rps(cc["charges/s"]),
			anchor: rps(commit["commits/s"]) + " SQLite 1-row commits (FULL)", ratio: ratio(cc["charges/s"], commit["commits/s"]),
			note: fmt.Sprintf("%.2f write transactions and %.2f COMMITs a charge; goal ≥ 0.5×", cc["tx/charge"], cc["commits/charge"])},
	}
	d, err := benchMetrics(testBin, "-test.bench", "^BenchmarkDrainCharges$", "-test.benchtime", strconv.Itoa(st.drainCharges)+"x")
	if err != nil {
		return nil, err
	}
	dc := d["BenchmarkDrainCharges"]
	if dc == nil {
		return nil, errors.New("the drain benchmark reported nothing")
	}
	p99 := "–"
	if v, ok := dc["wait-p99-s"]; ok {
		p99 = fmt.Sprintf("%.2f s", v)
	} else if v, ok := dc["wait-p90-s"]; ok {
		p99 = fmt.Sprintf("(p90) %.2f s", v)
	}
	rows = append(rows,
		row{path: fmt.Sprintf("drain, acquirer 300 ms, %d charges (charges/s)", st.drainCharges), kessai: rps(dc["charges/s"]) + " drained",
			anchor: rps(dc["accepted/s"]) + " accepted", ratio: ratio(dc["charges/s"], dc["accepted/s"]),
			note: "the worker against the API that feeds it"},
		row{path: "drain: creation → final status", kessai: fmt.Sprintf("p50 %.2f s", dc["wait-p50-s"]), anchor: "p99 " + p99,
			ratio: "–", note: "the acquirer alone takes 0.30 s"},
	)
	return rows, nil
}
