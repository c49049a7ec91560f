package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/results"
	"github.com/extractbench/extractbench/results/plan/plantest"
	"github.com/extractbench/extractbench/results/resultstest"
)

var update = flag.Bool("update", false, "rewrite the golden code, stdout and stderr files of TestGolden")

// TestGolden runs one command line per case directory
// testdata/<command>/<case>/ in-process and compares its exit code, stdout
// and stderr with the files there:
//
//	args         the arguments, one per line (blank lines and # lines skipped)
//	code         the expected exit code
//	stdout       the expected stdout, normalised (see normalise)
//	stderr       the expected stderr, normalised; absent: it must be empty
//	fixture      optional: the results directory built as $FIXTURE (buildFixture)
//	interrupted  optional: run under a context already cancelled, as after Ctrl-C
//	want/        optional: files the command writes into $TMP, each compared
//
// Other files are inputs, copied into $TMP (which also holds small.jsonl);
// args may name $TMP, $FIXTURE and $CASE. -update rewrites the expectations.
func TestGolden(t *testing.T) {
	commands, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range commands {
		if !c.IsDir() {
			continue
		}
		cases, err := os.ReadDir(filepath.Join("testdata", c.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range cases {
			if !k.IsDir() {
				continue
			}
			n++
			dir := filepath.Join("testdata", c.Name(), k.Name())
			t.Run(c.Name()+"/"+k.Name(), func(t *testing.T) { runGoldenCase(t, dir) })
		}
	}
	if n == 0 {
		t.Fatal("no case directories under testdata/")
	}
}

// caseFiles are the names of a case directory that are not inputs.
var caseFiles = map[string]bool{"args": true, "code": true, "stdout": true, "stderr": true, "fixture": true, "interrupted": true}

func runGoldenCase(t *testing.T, dir string) {
	tmp := t.TempDir()
	smallCorpus(t, tmp)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() || caseFiles[e.Name()] {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, tmp, e.Name(), string(data))
	}
	vars := map[string]string{"$TMP": tmp, "$CASE": dir}
	kind, _ := readCaseFile(t, dir, "fixture")
	kind = strings.TrimSpace(kind)
	if kind != "" {
		fixture := t.TempDir()
		buildFixture(t, kind, fixture)
		vars["$FIXTURE"] = fixture
	}
	rawArgs, ok := readCaseFile(t, dir, "args")
	if !ok {
		t.Fatalf("%s has no args file", dir)
	}
	var args []string
	for _, line := range strings.Split(rawArgs, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		for name, v := range vars {
			line = strings.ReplaceAll(line, name, v)
		}
		args = append(args, line)
	}

	var code int
	var stdout, stderr string
	if _, interrupted := readCaseFile(t, dir, "interrupted"); interrupted {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		var out, errOut bytes.Buffer
		code = dispatch(ctx, args, env{stdout: &out, stderr: &errOut})
		stdout, stderr = out.String(), errOut.String()
	} else {
		code, stdout, stderr = runCLI(t, args...)
	}
	// A case measured when it ran the built-in engine or reads a real run.
	measured := len(args) > 0 && args[0] == "run" || kind == "run" || kind == "declared"
	stdout, stderr = normalise(stdout, vars, measured), normalise(stderr, vars, measured)
	checkWrittenFiles(t, dir, tmp, vars, measured)

	if *update {
		writeFile(t, dir, "code", fmt.Sprintln(code))
		writeFile(t, dir, "stdout", stdout)
		if stderr == "" {
			if err := os.Remove(filepath.Join(dir, "stderr")); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
		} else {
			writeFile(t, dir, "stderr", stderr)
		}
		return
	}
	wantCode, ok := readCaseFile(t, dir, "code")
	if !ok {
		t.Fatalf("%s has no code file (run with -update to create it)", dir)
	}
	if want, err := strconv.Atoi(strings.TrimSpace(wantCode)); err != nil {
		t.Fatalf("%s/code: %v", dir, err)
	} else if code != want {
		t.Errorf("exit code = %d, want %d\nstderr:\n%s", code, want, stderr)
	}
	wantOut, _ := readCaseFile(t, dir, "stdout")
	if stdout != wantOut {
		t.Errorf("stdout differs from %s/stdout (run with -update if the change is right)\ngot:\n%s\nwant:\n%s", dir, stdout, wantOut)
	}
	wantErr, _ := readCaseFile(t, dir, "stderr")
	if stderr != wantErr {
		t.Errorf("stderr differs from %s/stderr (run with -update if the change is right)\ngot:\n%s\nwant:\n%s", dir, stderr, wantErr)
	}
}

// checkWrittenFiles compares each file of the case's want/ directory with
// the file of that name the command wrote into tmp, both normalised as
// stdout is; -update rewrites want/ from what was written.
func checkWrittenFiles(t *testing.T, dir, tmp string, vars map[string]string, measured bool) {
	t.Helper()
	want := filepath.Join(dir, "want")
	entries, err := os.ReadDir(want)
	if os.IsNotExist(err) {
		return
	} else if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		raw, err := os.ReadFile(filepath.Join(tmp, e.Name()))
		if err != nil {
			t.Errorf("the command did not write %s: %v", e.Name(), err)
			continue
		}
		got := normalise(string(raw), vars, measured)
		if *update {
			writeFile(t, want, e.Name(), got)
			continue
		}
		if w, _ := readCaseFile(t, want, e.Name()); got != w {
			t.Errorf("%s differs from %s/%s (run with -update if the change is right)\ngot:\n%s\nwant:\n%s", e.Name(), want, e.Name(), got, w)
		}
	}
}

// readCaseFile returns the content of dir/name and whether it exists.
func readCaseFile(t *testing.T, dir, name string) (string, bool) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, name))
	if os.IsNotExist(err) {
		return "", false
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(data), true
}

// The normaliser's patterns.
var (
	runIDRe       = regexp.MustCompile(`\b\d{8}T\d{6}Z-[0-9a-f]{8}\b`)
	fingerprintRe = regexp.MustCompile(`\bfingerprint [0-9a-f]{12,64}\b`)
	elapsedRe     = regexp.MustCompile(`\((\d+(\.\d+)?(h|m|s|ms|µs|us|ns))+\)$`)
	timestampRe   = regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2}| UTC)?`)
	cellSepRe     = regexp.MustCompile(` {2,}`)
	offlineRe     = regexp.MustCompile(`^(\s*offline: ).+$`)
	longFloatRe   = regexp.MustCompile(`-?\b\d+\.\d{10,}(e[+-]?\d+)?\b`)
	listeningRe   = regexp.MustCompile(`(listening on http://[^ :]+):\d+`)
)

// measuredColumns are the columns of run's summary tables that a real run
// measures (times, rates, engine peaks): they change from run to run.
var measuredColumns = map[string]bool{"TTFT p50": true, "TTFT p95": true, "E2E p50": true, "E2E p95": true,
	"tok/s": true, "accepted/h": true, "max run": true,
	"offered/s": true, "achieved/s": true, "late p50": true, "late p99": true, "queue p95": true, "E2E sched p95": true, "goodput/s": true}

// normalise masks what changes from one run or machine to the next (paths,
// run ids, fingerprints, wall-clock times, ports, a float's last bits, and
// the measured times and latency columns when the case measured), so that a
// golden file holds only what the command decides: counts, shares, verdicts
// and memory figures still fail the test when they change.
func normalise(s string, vars map[string]string, measured bool) string {
	names := make([]string, 0, len(vars))
	for name := range vars {
		names = append(names, name)
	}
	// Longest value first, so that a path inside another stays whole.
	sort.Slice(names, func(i, j int) bool { return len(vars[names[i]]) > len(vars[names[j]]) })
	for _, name := range names {
		s = strings.ReplaceAll(s, vars[name], name)
	}
	s = runIDRe.ReplaceAllString(s, "<run-id>")
	s = fingerprintRe.ReplaceAllString(s, "fingerprint <fingerprint>")
	s = timestampRe.ReplaceAllString(s, "<time>")
	s = listeningRe.ReplaceAllString(s, "$1:<port>")
	s = longFloatRe.ReplaceAllStringFunc(s, func(f string) string {
		v, err := strconv.ParseFloat(f, 64)
		if err != nil {
			return f
		}
		return strconv.FormatFloat(v, 'g', 12, 64)
	})

	lines := strings.Split(s, "\n")
	var masked []int // indexes of the measured columns of the current table; nil outside one
	for i, line := range lines {
		line = strings.TrimRight(line, " ")
		if measured {
			line = elapsedRe.ReplaceAllString(line, "(<elapsed>)")
			// The offline objective's level and figures are throughput: measured.
			line = offlineRe.ReplaceAllString(line, "${1}<measured>")
		}
		body := strings.TrimLeft(line, " ")
		indent := line[:len(line)-len(body)]
		cells := cellSepRe.Split(body, -1)
		switch {
		case body == "":
			masked = nil
		case measured && masked == nil && len(cells) > 1:
			for j, c := range cells {
				if measuredColumns[c] {
					masked = append(masked, j)
				}
			}
		case masked != nil:
			for _, j := range masked {
				if j < len(cells) {
					cells[j] = "~"
				}
			}
		}
		lines[i] = indent + strings.Join(cells, "  ")
	}
	return strings.Join(lines, "\n")
}

func TestNormalise(t *testing.T) {
	vars := map[string]string{"$TMP": "/tmp/TestGolden1/001", "$FIXTURE": "/tmp/TestGolden1/002"}
	in := "run 20260102T150405Z-0a1b2c3d  protocol cli  fingerprint 0123456789ab  results /tmp/TestGolden1/001/out  (1.234s)\n" +
		"\n" +
		"     variant  level  reps  accepted  TTFT p50  E2E p95  tok/s  max run  verdict  \n" +
		"        bf16      1     1    100.0%    12.3ms   1.002s   4567      n/a   usable  \n" +
		"        bf16  2 (retry)  1     50.0%        -        -      -        2   broken  \n" +
		"\n" +
		"started 2026-01-02T15:04:05Z on /tmp/TestGolden1/002, expected 2025-01-02   \n" +
		"share 0.030000000000000027, rate 3276.6990291262136, p 6.1e-05\n" +
		"  level  p95 E2E\n" +
		"      1    900ms\n"
	want := "run <run-id>  protocol cli  fingerprint <fingerprint>  results $TMP/out  (<elapsed>)\n" +
		"\n" +
		"     variant  level  reps  accepted  TTFT p50  E2E p95  tok/s  max run  verdict\n" +
		"        bf16  1  1  100.0%  ~  ~  ~  ~  usable\n" +
		"        bf16  2 (retry)  1  50.0%  ~  ~  ~  ~  broken\n" +
		"\n" +
		"started <time> on $FIXTURE, expected 2025-01-02\n" +
		"share 0.03, rate 3276.69902913, p 6.1e-05\n" +
		"  level  p95 E2E\n" +
		"      1  900ms\n"
	if got := normalise(in, vars, true); got != want {
		t.Errorf("measured: got:\n%s\nwant:\n%s", got, want)
	}
	// Unmeasured output keeps its times: a fixture's figures are chosen.
	fixed := "  level  p95 E2E  tok/s\n      1    900ms     20  (1.5s)\n"
	if got, want := normalise(fixed, vars, false), "  level  p95 E2E  tok/s\n      1  900ms  20  (1.5s)\n"; got != want {
		t.Errorf("unmeasured: got:\n%s\nwant:\n%s", got, want)
	}
}

// buildFixture writes the results directory named by a case's fixture file
// into dir:
//
//	sizing  a run written through plantest (figures chosen, not measured):
//	        variants bf16 (two level-1 repetitions, sweep 2, 4, 8 with memory
//	        peaks; 8 breaks on memory), int4 (one flip each way against
//	        bf16 at level 1, sweep 2 and 4) and awq (15 more failures at
//	        level 1: not equivalent), with engine load and warm-up events.
//	empty   a results.db that holds no run.
//	no-pass an interrupted run that finished no pass.
//	run     a real run of the built-in engine at time_scale 0 on small.jsonl
//	        (levels 1 and 2, one repetition).
//	rate    a rate sweep through plantest (rateFixture): bf16 and int4 at
//	        sync and 10/s, int4 losing 8 documents at sync and 1 at 10/s.
func buildFixture(t *testing.T, kind, dir string) {
	t.Helper()
	switch kind {
	case "sizing":
		plantest.Write(t, dir, sizingFixture())
	case "paired":
		plantest.Write(t, dir, pairedFixture(true))
	case "paired-not-required":
		plantest.Write(t, dir, pairedFixture(false))
	case "no-pass":
		plantest.Write(t, dir, plantest.Run{RunID: "golden-cut", Status: results.RunInterrupted})
	case "empty":
		resultstest.Write(t, dir)
	case "rate":
		plantest.Write(t, dir, rateFixture())
	case "run":
		proto := writeFile(t, t.TempDir(), "p.yaml", strings.NewReplacer("%CORPUS%", smallCorpus(t, t.TempDir()), "%MIN%", "0.5").Replace(smallProtocol))
		if code, _, stderr := runCLI(t, "run", "-quiet", "-protocol", proto, "-out", dir); code != exitOK {
			t.Fatalf("fixture run: exit %d: %s", code, stderr)
		}
	case "declared":
		buildDeclaredFixture(t, dir)
	default:
		t.Fatalf("unknown fixture %q (want sizing, paired, paired-not-required, no-pass, empty, rate, run or declared)", kind)
	}
}

// pairedFixture is a run of two variants in which int4 meets every
// criterion of its own (PASS, usable levels, faster and cheaper than bf16)
// yet lost 12 documents bf16 accepted at level 1: NOT EQUIVALENT to bf16.
// required is the protocol's acceptance.select_requires_equivalence.
func pairedFixture(required bool) plantest.Run {
	const docs = 300
	m := plantest.Manifest(plantest.DefaultCorpusSHA, "meta-llama/Llama-3.1-8B-Instruct", "NVIDIA H100 80GB HBM3", 85_520_809_984, 0.95, 0)
	m["acceptance"].(map[string]any)["select_requires_equivalence"] = required
	m["sweep"] = map[string]any{"mode": "concurrency", "levels": []int{1, 2, 4}, "repetitions": 1}
	gpu := m["gpu"]
	engine := func(weights string) map[string]any {
		return map[string]any{"url": "http://127.0.0.1:8000", "kind": "vllm", "version": "0.11.0", "model": "meta-llama/Llama-3.1-8B-Instruct", "weights": weights}
	}
	m["variants"] = []any{map[string]any{"name": "bf16", "engine": engine("bf16"), "gpu": gpu}, map[string]any{"name": "int4", "engine": engine("int4"), "gpu": gpu}}
	run := plantest.Run{RunID: "golden-paired", Manifest: m}
	for _, v := range []struct {
		name   string
		failed int     // documents d0001... not accepted at every level
		durS   float64 // level 1's pass; level L takes durS/L
	}{{"bf16", 3, 600}, {"int4", 15, 400}} {
		run.Records = append(run.Records, plantest.Records(v.name, 1, 1, docs, func(i int) bool { return i >= v.failed })...)
		for _, l := range []int{1, 2, 4} {
			run.Passes = append(run.Passes, plantest.Pass(v.name, l, 1, docs, docs-v.failed, v.durS/float64(l), int64(500*l)))
		}
	}
	return run
}

func sizingFixture() plantest.Run {
	fails := func(from, to int) func(int) bool { return func(i int) bool { return i < from || i >= to } }
	const docs = 300
	run := plantest.Run{RunID: "golden",
		Manifest: plantest.Manifest(plantest.DefaultCorpusSHA, "meta-llama/Llama-3.1-8B-Instruct", "NVIDIA H100 80GB HBM3", 85_520_809_984, 0.95, 2500)}
	level1 := []struct {
		variant  string
		rep      int
		from, to int // failing documents
	}{
		{"bf16", 1, 0, 9}, {"bf16", 2, 0, 9},
		{"int4", 1, 1, 10},
		{"awq", 1, 0, 24},
	}
	for _, l := range level1 {
		run.Records = append(run.Records, plantest.Records(l.variant, 1, l.rep, docs, fails(l.from, l.to))...)
		run.Passes = append(run.Passes, plantest.WithPeaks(plantest.Pass(l.variant, 1, l.rep, docs, docs-(l.to-l.from), 600, 900),
			20_000_000_000, 17_000_000_000, 18_000_000_000, 0.05))
	}
	l8 := plantest.Pass("bf16", 8, 1, docs, 200, 60, 3000)
	l8.Failures.Add(extractbench.Memory, 100)
	run.Passes = append(run.Passes,
		plantest.WithPeaks(plantest.Pass("bf16", 2, 1, docs, 291, 320, 1000), 40_000_000_000, 36_000_000_000, 38_000_000_000, 0.30),
		plantest.WithPeaks(plantest.Pass("bf16", 4, 1, docs, 291, 180, 2000), 70_000_000_000, 66_000_000_000, 68_000_000_000, 0.75),
		plantest.WithPeaks(l8, 80_000_000_000, 78_000_000_000, 79_000_000_000, 1),
		plantest.WithPeaks(plantest.Pass("int4", 2, 1, docs, 291, 250, 800), 12_000_000_000, 10_000_000_000, 11_000_000_000, 0.20),
		plantest.WithPeaks(plantest.Pass("int4", 4, 1, docs, 291, 140, 1500), 20_000_000_000, 18_000_000_000, 19_000_000_000, 0.45),
	)
	for _, v := range []string{"bf16", "int4", "awq"} {
		run.Events = append(run.Events,
			results.Event{Variant: v, AtMS: 1_700_000_000_000, Kind: results.EventEngineLoad, ValueNS: 95e9},
			results.Event{Variant: v, AtMS: 1_700_000_100_000, Kind: results.EventWarmup, ValueNS: 12e9})
	}
	return run
}
