//go:build linux

package pipeline_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/extractbench/extractbench/engines/builtin"
	"github.com/extractbench/extractbench/pipeline"
	"github.com/extractbench/extractbench/results"
)

// TestRun_StartedBuiltinEngineIsSimulated: a start: that runs the built-in
// engine as a process (as `extractbench engine serve` does) is reached by
// URL, yet the engine says what it is: the run, its manifest and its variant
// are simulated, the version is the engine's own, and the card is the one it
// models, not this machine's.
func TestRun_StartedBuiltinEngineIsSimulated(t *testing.T) {
	dir := t.TempDir()
	addr := freeAddr(t)
	proto := startedProtocol(t, dir, 3, "{mode: concurrency, levels: [1], repetitions: 1, warmup: 0}", addr, testEngineCommand(addr), "")
	out := filepath.Join(dir, "out")
	sum, err := run(t, pipeline.Options{ProtocolPath: proto, OutDir: out})
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Simulated {
		t.Error("RunReport.Simulated is false for the built-in engine started by start:")
	}
	d, err := results.LoadRun(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}
	if !d.Run.Simulated || !d.Manifest.Simulated {
		t.Errorf("runs.simulated %v, manifest simulated %v; want both true", d.Run.Simulated, d.Manifest.Simulated)
	}
	vm := d.Manifest.Variant("v")
	if !vm.Engine.Simulated || !strings.HasPrefix(vm.Engine.Version, builtin.Name+" ") {
		t.Errorf("variant engine simulated %v, version %q; want true and %q followed by its version", vm.Engine.Simulated, vm.Engine.Version, builtin.Name)
	}
	if vm.GPU.Source != "builtin-profile" || !strings.Contains(vm.GPU.Name, "simulated") {
		t.Errorf("GPU %+v; want the modelled card (builtin-profile)", vm.GPU)
	}
}

// TestRun_RealEngineIsNotSimulated: an engine that does not say it is
// simulated is measured as real, whatever serves it.
func TestRun_RealEngineIsNotSimulated(t *testing.T) {
	p, err := builtin.LookupProfile("sim-8b")
	if err != nil {
		t.Fatal(err)
	}
	p.TimeScale = 0
	s, err := builtin.NewServer(builtin.Config{Profile: p})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/version" {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"version":"0.11.0"}`)) // as vLLM answers
			return
		}
		s.ServeHTTP(w, r)
	}))
	defer srv.Close()
	dir := t.TempDir()
	proto := startedProtocol(t, dir, 3, "{mode: concurrency, levels: [1], repetitions: 1, warmup: 0}", strings.TrimPrefix(srv.URL, "http://"), "", "")
	out := filepath.Join(dir, "out")
	sum, err := run(t, pipeline.Options{ProtocolPath: proto, OutDir: out})
	if err != nil {
		t.Fatal(err)
	}
	d, err := results.LoadRun(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Simulated || d.Simulated() || d.Manifest.Variant("v").Engine.Simulated {
		t.Errorf("an engine that says version 0.11.0 recorded as simulated (summary %v, run %v)", sum.Simulated, d.Simulated())
	}
}
