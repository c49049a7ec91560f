//go:build linux

package pipeline_test

import (
	"context"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/extractbench/extractbench/pipeline"
	"github.com/extractbench/extractbench/results"
)

// TestRun_RefusedResumeOfStartedEngineWritesNothing is issue 40 item 4 for
// an engine.start variant: -resume of a complete run whose started engine
// is now another version is refused (exit 2) and leaves the results
// directory as it was. The old check skipped start: engines until the run
// started them with the store open: the engine log and pid file were
// appended to, an engine_load and a variant_failed event added and the
// run's status turned failed, so a finished PASS read ERROR.
func TestRun_RefusedResumeOfStartedEngineWritesNothing(t *testing.T) {
	dir := t.TempDir()
	addr := freeAddr(t)
	versionFile := filepath.Join(dir, "version")
	if err := os.WriteFile(versionFile, []byte("0.9.0"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The shell reads the file at each start: the protocol, and so the
	// fingerprint, stays the same while the engine's version changes.
	start := testEngineCommand(addr, "EXTRACTBENCH_TEST_ENGINE_VERSION=$(cat "+versionFile+")")
	proto := startedProtocol(t, dir, 4, "{mode: concurrency, levels: [1], repetitions: 1, warmup: 0}", addr, start, "")
	out := filepath.Join(dir, "out")
	if sum, err := run(t, pipeline.Options{ProtocolPath: proto, OutDir: out}); err != nil || sum.Status != results.RunComplete {
		t.Fatalf("first run: %v (%+v)", err, sum)
	}
	before := snapshot(t, out)

	if err := os.WriteFile(versionFile, []byte("0.10.0"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := run(t, pipeline.Options{OutDir: out, Resume: true})
	var ce *pipeline.ConfigError
	if !errors.As(err, &ce) || ce.ExitCode() != 2 || !strings.Contains(err.Error(), `"extractbench-builtin 0.9.0", now "extractbench-builtin 0.10.0"`) {
		t.Fatalf("resume: err = %v, want a ConfigError (exit 2) naming both versions", err)
	}
	if after := snapshot(t, out); !maps.Equal(after, before) {
		for name := range maps.Keys(after) {
			if after[name] != before[name] {
				t.Errorf("%s changed or added by the refused resume", name)
			}
		}
		for name := range maps.Keys(before) {
			if _, ok := after[name]; !ok {
				t.Errorf("%s removed by the refused resume", name)
			}
		}
	}
	if listens(addr) {
		t.Error("the engine started for the check still listens")
	}
	data, err := results.LoadRun(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}
	if data.Run.Status != results.RunComplete || data.Outcomes()[0].State != results.OutcomePass {
		t.Errorf("after the refused resume: status %s, variant %s; want complete and PASS", data.Run.Status, data.Outcomes()[0].State)
	}

	// The same engine resumes: the check lets it through and the run
	// starts it again.
	if err := os.WriteFile(versionFile, []byte("0.9.0"), 0o644); err != nil {
		t.Fatal(err)
	}
	if sum, err := run(t, pipeline.Options{OutDir: out, Resume: true}); err != nil || sum.Status != results.RunComplete {
		t.Fatalf("resume on the pinned version: %v (%+v)", err, sum)
	}
}

// snapshot is every file under dir by relative path, with its content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
