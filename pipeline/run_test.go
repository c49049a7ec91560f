package pipeline_test

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/csv"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"github.com/extractbench/extractbench/corpus"
	"github.com/extractbench/extractbench/pipeline"
)

// writeSmallCorpus writes the first n documents of the default corpus (short
// and usual ones, plus one long) as a bare .jsonl file.
func writeSmallCorpus(t *testing.T, dir string, n int) string {
	t.Helper()
	c, err := corpus.LoadDefault()
	if err != nil {
		t.Fatal(err)
	}
	var docs []corpus.Document
	var long *corpus.Document
	for i, d := range c.Documents {
		if d.LengthClass == corpus.Long {
			if long == nil {
				long = &c.Documents[i]
			}
			continue
		}
		if len(docs) < n-1 {
			docs = append(docs, d)
		}
	}
	docs = append(docs, *long)
	b, err := corpus.EncodeDocuments(docs)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "small.jsonl")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// writeProtocol writes a protocol over the small corpus on the built-in
// engine at zero modelled latency (or the given time scale).
func writeProtocol(t *testing.T, dir, corpusPath, sweep, builtinOpts string) string {
	t.Helper()
	p := fmt.Sprintf(`name: e2e
corpus: %s
prompt:
  system: "You extract fields from business documents. Answer with JSON only."
  user: "Extract date, amount and category.\n\n{{document}}"
parse: strict
generation: {max_tokens: 128, temperature: 0, seed: 7}
acceptance: {min_accepted: 0.5}
sweep: %s
request_timeout: 20s
variants:
  - name: bf16
    engine: {url: builtin, model: sim-8b, builtin: %s}
`, corpusPath, sweep, builtinOpts)
	path := filepath.Join(dir, "protocol.yaml")
	if err := os.WriteFile(path, []byte(p), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func openDB(t *testing.T, dir string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(dir, "results.db")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func queryInt(t *testing.T, db *sql.DB, q string, args ...any) int {
	t.Helper()
	var n int
	if err := db.QueryRow(q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// TestRun_EndToEnd runs a small protocol on the built-in engine and checks
// the record: documents × passes rows, no duplicate (pass, document), one
// CSV row per pass, Parquet files written.
func TestRun_EndToEnd(t *testing.T) {
	dir := t.TempDir()
	const docs = 12
	proto := writeProtocol(t, dir, writeSmallCorpus(t, dir, docs), "{mode: concurrency, levels: [1, 2, 4], repetitions: 2, warmup: 2}", "{time_scale: 0}")
	out := filepath.Join(dir, "out")
	sum, err := pipeline.Run(context.Background(), pipeline.Options{ProtocolPath: proto, OutDir: out, Quiet: true})
	if err != nil {
		t.Fatal(err)
	}
	const passes = 3 * 2
	if got := len(sum.Passes); got != passes {
		t.Fatalf("passes = %d, want %d", got, passes)
	}
	db := openDB(t, out)
	if got, want := queryInt(t, db, "SELECT count(*) FROM requests"), docs*passes; got != want {
		t.Errorf("request rows = %d, want documents × passes = %d", got, want)
	}
	if got := queryInt(t, db, `SELECT count(*) FROM (SELECT 1 FROM requests GROUP BY run_id, variant, mode, level, repetition, doc_id HAVING count(*) > 1)`); got != 0 {
		t.Errorf("%d duplicated (pass, document) rows", got)
	}
	if got := queryInt(t, db, "SELECT count(*) FROM passes WHERE status = 'complete' AND docs = ?", docs); got != passes {
		t.Errorf("complete passes with %d docs = %d, want %d", docs, got, passes)
	}
	if got := queryInt(t, db, "SELECT count(*) FROM requests WHERE ttft_ns IS NOT NULL AND ttft_ns <= e2e_ns AND send_ns >= sched_ns"); got != docs*passes {
		t.Errorf("requests with ordered instants = %d, want %d", got, docs*passes)
	}
	if got := queryInt(t, db, "SELECT count(*) FROM passes WHERE level = 4 AND sent_concurrency > 4"); got != 0 {
		t.Errorf("a level-4 pass had more than 4 requests in flight")
	}
	if got := queryInt(t, db, "SELECT count(*) FROM runs WHERE status = 'complete'"); got != 1 {
		t.Errorf("complete runs = %d, want 1", got)
	}
	f, err := os.Open(filepath.Join(out, "raw_table.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if got := len(rows) - 1; got != passes {
		t.Errorf("raw_table.csv rows = %d, want one per pass = %d", got, passes)
	}
	for _, name := range []string{"requests.parquet", "passes.parquet", "telemetry.parquet"} {
		if st, err := os.Stat(filepath.Join(out, name)); err != nil || st.Size() == 0 {
			t.Errorf("%s not written: %v", name, err)
		}
	}
}

// TestRun_FailureClasses configures the built-in engine to cause every
// failure class and checks each appears, with accepted documents beside them.
func TestRun_FailureClasses(t *testing.T) {
	dir := t.TempDir()
	proto := writeProtocol(t, dir, writeSmallCorpus(t, dir, 40), "{mode: concurrency, levels: [1], repetitions: 1, warmup: 0, on_memory_failure: record}",
		"{time_scale: 0, faults: {oom: 0.1, truncate: 0.1, garbage: 0.1, wrong_value: 0.1, reset: 0.1}}")
	out := filepath.Join(dir, "out")
	if _, err := pipeline.Run(context.Background(), pipeline.Options{ProtocolPath: proto, OutDir: out, Quiet: true}); err != nil {
		t.Fatal(err)
	}
	db := openDB(t, out)
	for _, class := range []string{"memory", "truncation", "format", "quality", "error"} {
		if got := queryInt(t, db, "SELECT count(*) FROM requests WHERE failure = ?", class); got == 0 {
			t.Errorf("no %s failure recorded", class)
		}
	}
	if got := queryInt(t, db, "SELECT count(*) FROM requests WHERE accepted = 1 AND failure IS NULL"); got == 0 {
		t.Error("no accepted document")
	}
	if got := queryInt(t, db, "SELECT count(*) FROM requests WHERE failure IS NOT NULL AND (failure_detail IS NULL OR failure_detail = '')"); got != 0 {
		t.Errorf("%d failures without a detail", got)
	}
	var sumFailures, docs int
	if err := db.QueryRow("SELECT failures_memory+failures_truncation+failures_format+failures_quality+failures_error+accepted, docs FROM passes").Scan(&sumFailures, &docs); err != nil {
		t.Fatal(err)
	}
	if sumFailures != docs {
		t.Errorf("accepted + failures = %d, want docs = %d", sumFailures, docs)
	}
}

// TestMain lets the kill test re-run this binary as the process it kills.
func TestMain(m *testing.M) {
	if proto := os.Getenv("EXTRACTBENCH_TEST_CHILD_PROTOCOL"); proto != "" {
		_, err := pipeline.Run(context.Background(), pipeline.Options{ProtocolPath: proto, OutDir: os.Getenv("EXTRACTBENCH_TEST_CHILD_OUT"), Quiet: true})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestRun_ResumeAfterSIGKILL kills a running process mid-pass, resumes, and
// finds every document of every pass exactly once.
func TestRun_ResumeAfterSIGKILL(t *testing.T) {
	dir := t.TempDir()
	const docs = 30
	// A modelled pace slow enough to be killed mid-run: about 2 ms per request.
	proto := writeProtocol(t, dir, writeSmallCorpus(t, dir, docs), "{mode: concurrency, levels: [1, 4], repetitions: 2, warmup: 1}", "{time_scale: 0.05}")
	out := filepath.Join(dir, "out")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "EXTRACTBENCH_TEST_CHILD_PROTOCOL="+proto, "EXTRACTBENCH_TEST_CHILD_OUT="+out)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { // drain the child's stderr so it never blocks
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
		}
	}()
	// Wait until the second pass has some rows but is not finished, then kill -9.
	deadline := time.Now().Add(60 * time.Second)
	killed := false
	for time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		n, ok := countRows(filepath.Join(out, "results.db"))
		if ok && n > docs+3 && n < 2*docs {
			_ = cmd.Process.Signal(syscall.SIGKILL)
			killed = true
			break
		}
	}
	_ = cmd.Wait()
	if !killed {
		t.Fatal("the child finished or never started before it could be killed mid-pass")
	}
	before, _ := countRows(filepath.Join(out, "results.db"))

	sum, err := pipeline.Run(context.Background(), pipeline.Options{OutDir: out, Resume: true, Quiet: true})
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Resumed {
		t.Error("summary does not say resumed")
	}
	db := openDB(t, out)
	const passes = 2 * 2
	if got, want := queryInt(t, db, "SELECT count(*) FROM requests"), docs*passes; got != want {
		t.Errorf("request rows after resume = %d, want %d (had %d when killed)", got, want, before)
	}
	if got := queryInt(t, db, `SELECT count(*) FROM (SELECT 1 FROM requests GROUP BY run_id, variant, mode, level, repetition, doc_id HAVING count(*) > 1)`); got != 0 {
		t.Errorf("%d duplicated (pass, document) rows after resume", got)
	}
	if got := queryInt(t, db, "SELECT count(DISTINCT run_id) FROM requests"); got != 1 {
		t.Errorf("rows belong to %d runs, want 1", got)
	}
	if got := queryInt(t, db, "SELECT count(*) FROM passes WHERE status = 'complete' AND docs = ?", docs); got != passes {
		t.Errorf("complete passes = %d, want %d", got, passes)
	}
	if got := queryInt(t, db, "SELECT count(*) FROM events WHERE kind = 'resumed'"); got != 1 {
		t.Errorf("resumed events = %d, want 1", got)
	}
	if got := queryInt(t, db, "SELECT count(*) FROM runs WHERE status = 'complete'"); got != 1 {
		t.Errorf("the resumed run is not complete")
	}
}

// countRows reads the request rows of a database another process writes.
func countRows(path string) (int, bool) {
	if _, err := os.Stat(path); err != nil {
		return 0, false
	}
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro&_busy_timeout=1000")
	if err != nil {
		return 0, false
	}
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT count(*) FROM requests").Scan(&n); err != nil {
		return 0, false
	}
	return n, true
}

// TestRun_ResumeRefusesOtherFingerprint: a different protocol is never mixed into a run.
func TestRun_ResumeRefusesOtherFingerprint(t *testing.T) {
	dir := t.TempDir()
	c := writeSmallCorpus(t, dir, 4)
	proto := writeProtocol(t, dir, c, "{mode: concurrency, levels: [1], repetitions: 1, warmup: 0}", "{time_scale: 0}")
	out := filepath.Join(dir, "out")
	if _, err := pipeline.Run(context.Background(), pipeline.Options{ProtocolPath: proto, OutDir: out, Quiet: true}); err != nil {
		t.Fatal(err)
	}
	other := writeProtocol(t, dir, c, "{mode: concurrency, levels: [1, 2], repetitions: 1, warmup: 0}", "{time_scale: 0}")
	_, err := pipeline.Run(context.Background(), pipeline.Options{ProtocolPath: other, OutDir: out, Resume: true, Quiet: true})
	var ce *pipeline.ConfigError
	if err == nil || !errorsAs(err, &ce) || !strings.Contains(err.Error(), "fingerprint") {
		t.Fatalf("resume with another protocol: err = %v, want a ConfigError about the fingerprint", err)
	}
}
