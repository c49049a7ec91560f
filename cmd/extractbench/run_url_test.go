package main

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/extractbench/extractbench/engines/hostile"
	"github.com/extractbench/extractbench/pipeline/protocol"
	"github.com/extractbench/extractbench/results"
)

// TestRun_URL: `run -url URL -model NAME` runs the default protocol's
// sweep, prompt and generation against a running server with no protocol
// file, and records the engine kind the server's answers name (vLLM's
// owned_by here; an engine that names none is run with the kind left
// empty). -shard keeps the test to a quarter of the corpus (level 64 needs 64).
func TestRun_URL(t *testing.T) {
	def, err := protocol.Load("")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		mode     hostile.Mode
		wantKind string
	}{{hostile.CLIVLLM, "vllm"}, {hostile.Normal, ""}} {
		t.Run(string(tt.mode), func(t *testing.T) {
			srv := hostile.MustNew(t, tt.mode, hostile.Options{})
			out := filepath.Join(t.TempDir(), "out")
			code, stdout, stderr := runCLI(t, "run", "-url", srv.URL+"/", "-model", hostile.Model, "-shard", "0/4", "-quiet", "-out", out)
			// The hostile answer is all nulls: quality failures, a failed verdict.
			if code != exitVerdict {
				t.Fatalf("exit %d, want %d (verdict failed)\nstdout:\n%s\nstderr:\n%s", code, exitVerdict, stdout, stderr)
			}
			if !strings.Contains(stderr, "engine at "+srv.URL+": ") || !strings.Contains(stdout, "protocol "+urlProtocolName) {
				t.Errorf("the run does not say what it detected and ran:\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
			}
			data, err := results.LoadRun(context.Background(), out)
			if err != nil {
				t.Fatal(err)
			}
			m := data.Manifest
			v := m.Variant(hostile.Model)
			if v.Engine.Kind != tt.wantKind || v.Engine.URL != srv.URL {
				t.Errorf("variant engine = kind %q at %q, want kind %q at %q", v.Engine.Kind, v.Engine.URL, tt.wantKind, srv.URL)
			}
			if !reflect.DeepEqual(m.Sweep, def.Sweep) || !reflect.DeepEqual(m.Generation, def.Generation) || !reflect.DeepEqual(m.Prompt, def.Prompt) {
				t.Errorf("not the default protocol: sweep %+v generation %+v, want %+v %+v", m.Sweep, m.Generation, def.Sweep, def.Generation)
			}
			if data.Run.ProtocolName != urlProtocolName || !strings.HasPrefix(m.ProtocolSource, "(run -url ") {
				t.Errorf("protocol %q from %q", data.Run.ProtocolName, m.ProtocolSource)
			}
			if len(data.Passes) == 0 {
				t.Error("nothing was measured")
			}
		})
	}
}

// TestRun_URLRefused: -url's mistakes are usage errors (exit 2), and a URL
// nothing answers on is an infrastructure error (exit 3); none of them
// leaves a results directory behind.
func TestRun_URLRefused(t *testing.T) {
	srv := hostile.MustNew(t, hostile.Normal, hostile.Options{})
	closed := hostile.MustNew(t, hostile.Normal, hostile.Options{})
	closed.Close()
	proto := writeFile(t, t.TempDir(), "p.yaml", "variants: [{name: a, engine: {url: builtin, model: sim-8b}}]\n")
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"model without url", []string{"-model", "m"}, exitUsage, "-model and -api-key-env go with -url"},
		{"url without model", []string{"-url", srv.URL}, exitUsage, "-url needs -model"},
		{"not http", []string{"-url", "127.0.0.1:8000", "-model", "m"}, exitUsage, "want http://host:port"},
		{"with a protocol", []string{"-url", srv.URL, "-model", "m", "-protocol", proto}, exitUsage, "give -url or -protocol, not both"},
		{"with resume", []string{"-url", srv.URL, "-model", "m", "-resume", "$OUT"}, exitUsage, "-resume completes a run with its own protocol"},
		{"unset key variable", []string{"-url", srv.URL, "-model", "m", "-api-key-env", "EXTRACTBENCH_TEST_UNSET_KEY"}, exitUsage, "EXTRACTBENCH_TEST_UNSET_KEY: the variable is not set"},
		{"nothing answers", []string{"-url", closed.URL, "-model", "m"}, exitInfra, "is it running, and does it want a key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			args := []string{"run", "-quiet", "-out", out}
			for _, a := range tt.args {
				args = append(args, strings.ReplaceAll(a, "$OUT", out))
			}
			code, _, stderr := runCLI(t, args...)
			if code != tt.code || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, stderr, tt.code, tt.want)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("a refused run left %s behind (%v)", out, err)
			}
		})
	}
}
