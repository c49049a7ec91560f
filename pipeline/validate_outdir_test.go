package pipeline_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/extractbench/extractbench/pipeline"
	"github.com/extractbench/extractbench/results"
	"github.com/extractbench/extractbench/results/resultstest"
)

// builtinProtocol writes a protocol on the built-in engine (no simulated
// time) over a corpus of docs documents; variant is the variants block's
// engine line, sweep the sweep mapping.
func builtinProtocol(t *testing.T, dir, name string, docs int, sweep, engine string) string {
	t.Helper()
	p := fmt.Sprintf(`name: %s
corpus: %s
prompt: {user: "Extract date, amount and category.\n\n{{document}}"}
generation: {max_tokens: 64, temperature: 0}
acceptance: {min_accepted: 0}
sweep: %s
variants:
  - name: v
    engine: %s
`, name, writeSmallCorpus(t, dir, docs), sweep, engine)
	path := filepath.Join(dir, name+".yaml")
	if err := os.WriteFile(path, []byte(p), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

const (
	oneLevel   = "{mode: concurrency, levels: [1], repetitions: 1, warmup: 0}"
	fastEngine = "{url: builtin, model: sim-8b, builtin: {time_scale: 0}}"
)

// TestRun_OneWriterPerDirectory is issue 17's first reproduction: while a
// run (here: this test) holds a results directory, a second writer, such as a
// second -resume, is refused with a configuration error naming the holder,
// and measures nothing.
func TestRun_OneWriterPerDirectory(t *testing.T) {
	dir := t.TempDir()
	proto := builtinProtocol(t, dir, "p", 3, oneLevel, fastEngine)
	out := filepath.Join(dir, "out")
	if _, err := run(t, pipeline.Options{ProtocolPath: proto, OutDir: out}); err != nil {
		t.Fatal(err)
	}
	lock, err := results.LockDir(out, "run -resume")
	if err != nil {
		t.Fatal(err)
	}
	_, err = run(t, pipeline.Options{OutDir: out, Resume: true})
	lock.Unlock()
	var ce *pipeline.ConfigError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), fmt.Sprintf("in use by pid %d", os.Getpid())) {
		t.Fatalf("second writer: err = %v, want a configuration error naming pid %d", err, os.Getpid())
	}
	if got := eventCount(t, out, results.EventResumed, "%"); got != 0 {
		t.Errorf("%d resumed events: the second writer ran", got)
	}
}

// TestRun_StaleLockTakenOver: a lock file a killed run left behind (its
// holder written, its flock gone with its process) does not block the next
// writer, which records that it took the lock over.
func TestRun_StaleLockTakenOver(t *testing.T) {
	dir := t.TempDir()
	proto := builtinProtocol(t, dir, "p", 3, oneLevel, fastEngine)
	out := filepath.Join(dir, "out")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	stale := `{"pid":999999,"host":"gone","command":"run","since_ms":1}`
	if err := os.WriteFile(filepath.Join(out, results.LockName), []byte(stale), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := run(t, pipeline.Options{ProtocolPath: proto, OutDir: out}); err != nil {
		t.Fatal(err)
	}
	if got := eventCount(t, out, results.EventLockStale, "%pid 999999%"); got != 1 {
		t.Errorf("lock_taken_over events naming the stale holder = %d, want 1", got)
	}
	if b, _ := os.ReadFile(filepath.Join(out, results.LockName)); len(b) != 0 {
		t.Errorf("lock file after a clean end = %q, want empty (released)", b)
	}
}

// TestRun_OneFingerprintPerDirectory is issue 17's second reproduction: a
// new run of another protocol into a directory holding a run is refused
// with a hint, instead of leaving two fingerprints in one results.db and
// one requests.parquet. -append adds a run of the same fingerprint only.
func TestRun_OneFingerprintPerDirectory(t *testing.T) {
	dir := t.TempDir()
	a := builtinProtocol(t, dir, "a", 3, oneLevel, fastEngine)
	b := builtinProtocol(t, dir, "b", 4, oneLevel, fastEngine)
	out := filepath.Join(dir, "out")
	if _, err := run(t, pipeline.Options{ProtocolPath: a, OutDir: out}); err != nil {
		t.Fatal(err)
	}
	_, err := run(t, pipeline.Options{ProtocolPath: b, OutDir: out})
	var ce *pipeline.ConfigError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "already holds run") || !strings.Contains(err.Error(), "another -out directory") {
		t.Fatalf("second run: err = %v, want a configuration error with the -resume / -out hint", err)
	}
	_, err = run(t, pipeline.Options{ProtocolPath: b, OutDir: out, Append: true})
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "fingerprint") {
		t.Fatalf("-append of another fingerprint: err = %v, want a configuration error", err)
	}
	if got := resultstest.Distinct(resultstest.Runs(t, out), func(r *results.Run) string { return r.Fingerprint }); got != 1 {
		t.Errorf("fingerprints in results.db = %d, want 1", got)
	}
	if _, err := run(t, pipeline.Options{ProtocolPath: a, OutDir: out, Append: true}); err != nil {
		t.Fatalf("-append of the same fingerprint: %v", err)
	}
	if got := len(resultstest.Runs(t, out)); got != 2 {
		t.Errorf("runs after -append = %d, want 2", got)
	}
	if got := eventCount(t, out, results.EventAppended, "%"); got != 1 {
		t.Errorf("appended events = %d, want 1", got)
	}
}

// TestRun_ConfigErrorCreatesNothing is issue 17's fourth reproduction: a
// variant that cannot run for a configuration reason is refused before the
// results directory exists, with the protocol's file:line; the sixth: a
// level larger than the corpus is such a reason.
func TestRun_ConfigErrorCreatesNothing(t *testing.T) {
	tests := []struct {
		name, sweep, engine, want string
	}{
		{"unset api_key_env", oneLevel, `{url: "http://127.0.0.1:9", model: m, api_key_env: EXTRACTBENCH_TEST_UNSET_KEY}`,
			"p.yaml:9: variants.0.engine.api_key_env: variant v: EXTRACTBENCH_TEST_UNSET_KEY is not set"},
		{"unknown built-in model", oneLevel, "{url: builtin, model: sim-99b}", `p.yaml:9: variants.0.engine.model: variant v: lookup profile "sim-99b"`},
		{"level larger than the corpus", "{mode: concurrency, levels: [1, 100000], repetitions: 1, warmup: 0}", fastEngine,
			"p.yaml:6: sweep.levels.1: level 100000 is larger than the corpus (3 documents)"},
		{"batch larger than the corpus", "{mode: batch, levels: [1, 4], repetitions: 1, warmup: 0}", fastEngine,
			"p.yaml:6: sweep.levels.1: level 4 is larger than the corpus (3 documents)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			os.Unsetenv("EXTRACTBENCH_TEST_UNSET_KEY")
			dir := t.TempDir()
			proto := builtinProtocol(t, dir, "p", 3, tt.sweep, tt.engine)
			out := filepath.Join(dir, "out")
			_, err := run(t, pipeline.Options{ProtocolPath: proto, OutDir: out})
			var ve *pipeline.ValidationError
			if !errors.As(err, &ve) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want a validation error containing %q", err, tt.want)
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the results directory was created (%v)", err)
			}
		})
	}
}

// TestRun_ReadOnlyOut: a results directory that cannot be written is named
// as such, not as "no such file or directory".
func TestRun_ReadOnlyOut(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes through directory permissions")
	}
	dir := t.TempDir()
	proto := builtinProtocol(t, dir, "p", 3, oneLevel, fastEngine)
	out := filepath.Join(dir, "ro")
	if err := os.Mkdir(out, 0o555); err != nil {
		t.Fatal(err)
	}
	_, err := run(t, pipeline.Options{ProtocolPath: proto, OutDir: out})
	var ce *pipeline.ConfigError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "not writable") {
		t.Fatalf("err = %v, want a configuration error saying the directory is not writable", err)
	}
}
