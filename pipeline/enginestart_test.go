//go:build linux

package pipeline_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/engines/builtin"
	"github.com/extractbench/extractbench/engines/builtin/starter"
	"github.com/extractbench/extractbench/engines/process"
	"github.com/extractbench/extractbench/pipeline"
	"github.com/extractbench/extractbench/results"
	"github.com/extractbench/extractbench/results/resultstest"
)

// freeAddr returns a loopback address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// testEngineCommand is a start: command that runs this test binary as the
// built-in engine on addr, with extra environment settings.
func testEngineCommand(addr string, env ...string) string {
	return fmt.Sprintf("EXTRACTBENCH_TEST_ENGINE_ADDR=%s %s %s -test.run=^$", addr, strings.Join(env, " "), os.Args[0])
}

// startedProtocol writes a protocol whose one variant v is started by start
// (and stopped by stop, when not empty) and served at addr.
func startedProtocol(t *testing.T, dir string, docs int, sweep, addr, start, stop string) string {
	t.Helper()
	stopKey := ""
	if stop != "" {
		stopKey = fmt.Sprintf(", stop: %q", stop)
	}
	p := fmt.Sprintf(`name: started
corpus: %s
prompt: {user: "Extract date, amount and category.\n\n{{document}}"}
generation: {max_tokens: 64, temperature: 0}
acceptance: {min_accepted: 0}
sweep: %s
request_timeout: 5s
variants:
  - name: v
    engine: {url: "http://%s", model: sim-8b, start: %q%s, ready_timeout: 30s}
`, writeSmallCorpus(t, dir, docs), sweep, addr, start, stopKey)
	path := filepath.Join(dir, "started.yaml")
	if err := os.WriteFile(path, []byte(p), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func run(t *testing.T, opts pipeline.Options) (*pipeline.RunReport, error) {
	t.Helper()
	opts.Quiet, opts.Starters, opts.Process = true, starter.Starters(), process.Starter{}
	return pipeline.Run(context.Background(), opts)
}

// listens reports whether something accepts connections on addr.
func listens(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// gone reports whether pid has ended (a zombie counts: it no longer runs).
func gone(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	i := strings.LastIndexByte(string(b), ')')
	return i >= 0 && len(b) > i+2 && (b[i+2] == 'Z' || b[i+2] == 'X')
}

func waitFor(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestRun_RefusesTakenPort is issue 11's reproduction: an engine serving
// another model already listens on the port of a variant whose start:
// would serve sim-8b. The run refuses with a configuration error (exit 2)
// naming the port and what answers there, before starting anything.
func TestRun_RefusesTakenPort(t *testing.T) {
	p, err := builtin.LookupProfile("sim-8b")
	if err != nil {
		t.Fatal(err)
	}
	p.TimeScale = 0
	url, stop, err := builtin.Start(context.Background(), builtin.Config{Profile: p, Models: []string{"sim-8b-int4"}, Variant: "int4"})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	addr := strings.TrimPrefix(url, "http://")
	_, port, _ := net.SplitHostPort(addr)
	dir := t.TempDir()
	marker := filepath.Join(dir, "started")
	proto := startedProtocol(t, dir, 4, "{mode: concurrency, levels: [1], repetitions: 1, warmup: 0}", addr, "touch "+marker+"; sleep 30", "")
	out := filepath.Join(dir, "out")
	_, err = run(t, pipeline.Options{ProtocolPath: proto, OutDir: out})
	var ce *pipeline.ConfigError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v, want a ConfigError (exit 2)", err)
	}
	for _, want := range []string{"port " + port, `"sim-8b-int4"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the start command ran although the port was taken")
	}
	if _, err := os.Stat(filepath.Join(out, "results.db")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a run that measured nothing left %s/results.db (%v)", out, err)
	}
}

// TestRun_ModelNotServed: an engine whose /v1/models lacks the protocol's
// model stops the variant with a clear error before any measured request.
func TestRun_ModelNotServed(t *testing.T) {
	var chats atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("/health", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("/v1/models", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"object":"list","data":[{"id":"sim-8b-int4","object":"model"}]}`)
	})
	mux.HandleFunc("/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		chats.Add(1)
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"object":"error","message":"The model `+"`sim-8b`"+` does not exist.","type":"NotFoundError","param":null,"code":404}`)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	dir := t.TempDir()
	p := fmt.Sprintf(`name: wrong-model
corpus: %s
prompt: {user: "Extract.\n\n{{document}}"}
generation: {max_tokens: 64, temperature: 0}
acceptance: {min_accepted: 0}
sweep: {mode: concurrency, levels: [1], repetitions: 1, warmup: 2}
variants:
  - name: v
    engine: {url: %q, model: sim-8b}
`, writeSmallCorpus(t, dir, 4), srv.URL)
	proto := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(proto, []byte(p), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	_, err := run(t, pipeline.Options{ProtocolPath: proto, OutDir: out})
	if err == nil || !strings.Contains(err.Error(), `"sim-8b-int4"`) || !strings.Contains(err.Error(), `model "sim-8b"`) {
		t.Fatalf("err = %v, want an error naming the served and the configured model", err)
	}
	if n := chats.Load(); n != 0 {
		t.Errorf("%d requests sent (warm-up included) to an engine that does not serve the model", n)
	}
	if _, err := os.Stat(filepath.Join(out, "results.db")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a run that measured nothing left %s/results.db (%v)", out, err)
	}
}

// TestRun_EngineCrashEvidence: a started engine that dies mid-pass makes
// the request in flight memory only with evidence (its log says out of
// memory); a death without it (a crash, a SIGKILL from outside: issue 40
// item 2, where it was classed memory as "the OOM killer's signal") takes
// the request out of the measurement (engine_dead), for -resume to send
// again. Either way the evidence is in the row's details.
func TestRun_EngineCrashEvidence(t *testing.T) {
	tests := []struct {
		name, saying, by, wantClass, wantDetail string
	}{
		{"oom in the log", "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB", "", "memory", "CUDA out of memory"},
		{"no oom evidence", "ValueError: the tokenizer file is corrupt", "", "", "neither its log"},
		{"sigkill from outside", "", "SIGKILL", "", "without memory evidence"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			const docs, dieAfter = 10, 3
			addr := freeAddr(t)
			start := testEngineCommand(addr, "EXTRACTBENCH_TEST_ENGINE_DIE_AFTER="+strconv.Itoa(dieAfter), fmt.Sprintf("EXTRACTBENCH_TEST_ENGINE_DIE_SAYING='%s'", tt.saying),
				"EXTRACTBENCH_TEST_ENGINE_DIE_BY="+tt.by)
			proto := startedProtocol(t, dir, docs, "{mode: concurrency, levels: [1], repetitions: 1, warmup: 0}", addr, start, "")
			out := filepath.Join(dir, "out")
			if _, err := run(t, pipeline.Options{ProtocolPath: proto, OutDir: out}); err == nil || !strings.Contains(err.Error(), "engine died") {
				t.Fatalf("err = %v, want the engine's death", err)
			}
			reqs := resultstest.Requests(t, out)
			// The request in flight at the crash is the last one sent.
			if got := len(reqs); got != dieAfter+1 {
				t.Fatalf("rows = %d, want %d: nothing is sent to a dead engine", got, dieAfter+1)
			}
			byClass := resultstest.ByFailure(reqs)
			failed := byClass[extractbench.Memory] + byClass[extractbench.Error]
			dead := resultstest.Count(reqs, func(r *extractbench.Record) bool { return r.Kind == extractbench.TransportEngineDead })
			if tt.wantClass == "" {
				if failed != 0 || dead != 1 {
					t.Fatalf("%d failed and %d engine_dead requests, want the 1 in flight at the crash out of the measurement", failed, dead)
				}
				if got := resultstest.Count(reqs, func(r *extractbench.Record) bool {
					return r.Kind == extractbench.TransportEngineDead && r.Failure == "" && strings.Contains(r.Detail, tt.wantDetail)
				}); got != 1 {
					t.Errorf("the engine_dead request has no class and %q in its detail: %d", tt.wantDetail, got)
				}
				return
			}
			if failed != 1 {
				t.Fatalf("%d failed requests, want the 1 in flight at the crash", failed)
			}
			if got := resultstest.Count(reqs, func(r *extractbench.Record) bool {
				return string(r.Failure) == string(tt.wantClass) && resultstest.Like(r.FailureDetail, "%"+tt.wantDetail+"%")
			}); got != failed {
				t.Errorf("%d of %d failures are %s with %q in failure_detail", got, failed, tt.wantClass, tt.wantDetail)
			}
		})
	}
}

// TestRun_DeadEngineGetsNoMoreWork is issue 17's seventh reproduction: once
// a started engine is known dead, nothing more is sent to it (no further
// request, pass or retry_lower pass), the death is an event, and the next
// variant is measured.
func TestRun_DeadEngineGetsNoMoreWork(t *testing.T) {
	dir := t.TempDir()
	const docs, dieAfter = 10, 3
	addr := freeAddr(t)
	start := testEngineCommand(addr, "EXTRACTBENCH_TEST_ENGINE_DIE_AFTER="+strconv.Itoa(dieAfter), "EXTRACTBENCH_TEST_ENGINE_DIE_SAYING='CUDA out of memory'")
	p := fmt.Sprintf(`name: dead
corpus: %s
prompt: {user: "Extract date, amount and category.\n\n{{document}}"}
generation: {max_tokens: 64, temperature: 0}
acceptance: {min_accepted: 0}
sweep: {mode: concurrency, levels: [1, 2, 4], repetitions: 2, warmup: 0, on_memory_failure: retry_lower}
request_timeout: 5s
variants:
  - name: dying
    engine: {url: "http://%s", model: sim-8b, start: %q, ready_timeout: 30s}
  - name: good
    engine: {url: builtin, model: sim-8b, builtin: {time_scale: 0}}
`, writeSmallCorpus(t, dir, docs), addr, start)
	proto := filepath.Join(dir, "dead.yaml")
	if err := os.WriteFile(proto, []byte(p), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	sum, err := run(t, pipeline.Options{ProtocolPath: proto, OutDir: out})
	if err == nil || !strings.Contains(err.Error(), "engine died") {
		t.Fatalf("err = %v, want the engine's death", err)
	}
	reqs := resultstest.Requests(t, out)
	if got := resultstest.Count(reqs, func(r *extractbench.Record) bool { return r.Variant == "dying" }); got != dieAfter+1 {
		t.Errorf("requests to the dying engine = %d, want %d (none after the crash)", got, dieAfter+1)
	}
	if got := resultstest.Count(resultstest.Passes(t, out), func(p *extractbench.Pass) bool { return p.Variant == "dying" }); got != 1 {
		t.Errorf("passes of the dying engine = %d, want 1", got)
	}
	if got := resultstest.Count(resultstest.Decisions(t, out), func(d *results.Decision) bool { return d.Variant == "dying" }); got != 0 {
		t.Errorf("%d decisions (retries) against a dead engine", got)
	}
	if got := resultstest.Count(reqs, func(r *extractbench.Record) bool {
		return r.Variant == "dying" && r.Failure == extractbench.Memory && resultstest.Like(r.FailureDetail, "%CUDA out of memory%")
	}); got != 1 {
		t.Errorf("the request in flight at the crash lacks its class and evidence (%d rows)", got)
	}
	if got := resultstest.Count(resultstest.Events(t, out), func(e *results.Event) bool {
		return e.Variant == "dying" && e.Kind == results.EventEngineDead && resultstest.Like(e.Detail, "%6 of 10 documents not sent%")
	}); got != 1 {
		t.Errorf("engine_dead events saying what was left = %d, want 1", got)
	}
	if got := resultstest.Count(reqs, func(r *extractbench.Record) bool { return r.Variant == "good" }); got != docs*6 {
		t.Errorf("requests of the next variant = %d, want %d", got, docs*6)
	}
	if sum == nil || len(sum.Variants) != 2 || sum.Variants[0].State != "ERROR" {
		t.Errorf("variants = %+v, want the dying one ERROR", sum)
	}
}

// TestRun_KillRunnerKillsEngine: kill -9 of extractbench takes the engine it
// started with it (Pdeathsig), instead of leaving it on the port.
func TestRun_KillRunnerKillsEngine(t *testing.T) {
	dir := t.TempDir()
	addr := freeAddr(t)
	proto := startedProtocol(t, dir, 30, "{mode: concurrency, levels: [1, 4], repetitions: 2, warmup: 0}", addr,
		testEngineCommand(addr, "EXTRACTBENCH_TEST_ENGINE_TIME_SCALE=0.2"), "")
	out := filepath.Join(dir, "out")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "EXTRACTBENCH_TEST_CHILD_PROTOCOL="+proto, "EXTRACTBENCH_TEST_CHILD_OUT="+out)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
		}
	}()
	defer cmd.Process.Kill()
	waitFor(t, "the runner to measure a request", 60*time.Second, func() bool {
		n, ok := resultstest.RequestCount(out)
		return ok && n > 0
	})
	var rec process.PIDFile
	b, err := os.ReadFile(filepath.Join(out, "engine-v.pid"))
	if err != nil || json.Unmarshal(b, &rec) != nil || rec.PID <= 0 {
		t.Fatalf("no engine pid file while the engine runs: %v %s", err, b)
	}
	if gone(rec.PID) || !listens(addr) {
		t.Fatal("the engine is not running before the kill")
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	waitFor(t, "the engine to die with its runner", 10*time.Second, func() bool { return gone(rec.PID) && !listens(addr) })
}

// writeStalePIDFile records pid the way extractbench records an engine it
// started (process.PIDFile, read from /proc).
func writeStalePIDFile(t *testing.T, path string, pid int, command string) {
	t.Helper()
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	pgid, _ := strconv.Atoi(f[2])
	ticks, _ := strconv.ParseUint(f[19], 10, 64)
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		t.Fatal(err)
	}
	rec := process.PIDFile{PID: pid, PGID: pgid, StartTicks: ticks, Command: command,
		Cmdline: strings.ReplaceAll(strings.TrimRight(string(cmdline), "\x00"), "\x00", " ")}
	b, _ := json.Marshal(rec)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRun_ResumeStopsStaleEngine: an engine left running by a crashed
// attempt (its pid file in the results directory) is found on -resume,
// checked to be the same process, and stopped before a fresh start.
func TestRun_ResumeStopsStaleEngine(t *testing.T) {
	dir := t.TempDir()
	addr := freeAddr(t)
	start := testEngineCommand(addr)
	proto := startedProtocol(t, dir, 4, "{mode: concurrency, levels: [1], repetitions: 1, warmup: 0}", addr, start, "")
	out := filepath.Join(dir, "out")
	if _, err := run(t, pipeline.Options{ProtocolPath: proto, OutDir: out}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, "engine-v.pid")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the pid file of an engine stopped at the end is still there (%v)", err)
	}

	// The engine a crashed attempt left behind: same command, own group.
	stale := exec.Command("/bin/sh", "-c", start)
	stale.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := stale.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { stale.Wait(); close(exited) }()
	defer stale.Process.Kill()
	waitFor(t, "the stale engine to listen", 10*time.Second, func() bool { return listens(addr) })
	writeStalePIDFile(t, filepath.Join(out, "engine-v.pid"), stale.Process.Pid, start)

	if _, err := run(t, pipeline.Options{OutDir: out, Resume: true}); err != nil {
		t.Fatalf("resume: %v", err)
	}
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		t.Fatal("the stale engine still runs after the resume")
	}
	if got := eventCount(t, out, results.EventEngineStale, fmt.Sprintf("%%pid %d%%", stale.Process.Pid)); got != 1 {
		t.Errorf("engine_stale_stopped events naming pid %d = %d, want 1", stale.Process.Pid, got)
	}
}

// TestRun_DaemonisingStartWithStop: a start command that puts the engine in
// the background and exits 0 is fine when stop: is set; readiness is
// polled, and stop: runs at the end.
func TestRun_DaemonisingStartWithStop(t *testing.T) {
	dir := t.TempDir()
	addr := freeAddr(t)
	pidFile, stopped := filepath.Join(dir, "daemon.pid"), filepath.Join(dir, "stopped")
	start := testEngineCommand(addr) + " >/dev/null 2>&1 & echo $! > " + pidFile
	stop := fmt.Sprintf("kill $(cat %s) && touch %s", pidFile, stopped)
	proto := startedProtocol(t, dir, 4, "{mode: concurrency, levels: [1], repetitions: 1, warmup: 0}", addr, start, stop)
	out := filepath.Join(dir, "out")
	if _, err := run(t, pipeline.Options{ProtocolPath: proto, OutDir: out}); err != nil {
		t.Fatal(err)
	}
	if got := resultstest.Count(resultstest.Requests(t, out), func(r *extractbench.Record) bool { return r.Accepted }); got == 0 {
		t.Error("nothing accepted from the daemonised engine")
	}
	if got := eventCount(t, out, results.EventEngineLoad, "%daemonised%"); got != 1 {
		t.Errorf("engine_load events saying daemonised = %d, want 1", got)
	}
	if _, err := os.Stat(stopped); err != nil {
		t.Errorf("the stop command did not run: %v", err)
	}
	waitFor(t, "the daemonised engine to stop", 5*time.Second, func() bool { return !listens(addr) })
}
