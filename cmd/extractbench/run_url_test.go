package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
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
// Without -model the one model the engine lists is run, and a /v1 suffix
// on -url is dropped (the client adds /v1 to each path): both are said.
func TestRun_URL(t *testing.T) {
	def, err := protocol.Load("")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name       string
		mode       hostile.Mode
		suffix     string   // appended to the server's URL
		model      []string // -model NAME, or none
		wantKind   string
		wantStderr []string
	}{
		{"vllm", hostile.CLIVLLM, "/", []string{"-model", hostile.Model}, "vllm", nil},
		{"generic", hostile.Normal, "/", []string{"-model", hostile.Model}, "", nil},
		{"v1 suffix, no model", hostile.CLIVLLM, "/v1/", nil, "vllm", []string{"dropped the /v1 suffix", `serves one model, "hostile": running it`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := hostile.MustNew(t, tt.mode, hostile.Options{})
			out := filepath.Join(t.TempDir(), "out")
			args := append([]string{"run", "-url", srv.URL + tt.suffix}, tt.model...)
			code, stdout, stderr := runCLI(t, append(args, "-shard", "0/4", "-quiet", "-out", out)...)
			// The hostile answer is all nulls: quality failures, a failed verdict.
			if code != exitVerdict {
				t.Fatalf("exit %d, want %d (verdict failed)\nstdout:\n%s\nstderr:\n%s", code, exitVerdict, stdout, stderr)
			}
			if !strings.Contains(stderr, "engine at "+srv.URL+": ") || !strings.Contains(stdout, "protocol "+urlProtocolName) {
				t.Errorf("the run does not say what it detected and ran:\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
			}
			for _, w := range tt.wantStderr {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
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

// models is an engine whose /v1/models lists ids, and nothing else.
func models(t *testing.T, ids ...string) *httptest.Server {
	data := []map[string]string{}
	for _, id := range ids {
		data = append(data, map[string]string{"id": id, "object": "model"})
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/models" {
			http.NotFound(w, r)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data})
	}))
	t.Cleanup(srv.Close)
	return srv
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
		{"several models", []string{"-url", models(t, "a-8b", "b-70b").URL}, exitUsage, "serves 2 models (a-8b, b-70b): choose one with -model NAME"},
		{"no model", []string{"-url", models(t).URL + "/v1"}, exitUsage, "lists no model in /v1/models: give -model NAME"},
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

// TestInit_FromDefault: init -from-default writes the protocol a run with
// none measures: the same variants, sweep, prompt and acceptance, so that
// the first command and the tour's default run line up.
func TestInit_FromDefault(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.yaml")
	if code, _, stderr := runCLI(t, "init", "-from-default", path); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	got, err := protocol.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	def, err := protocol.Load("")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Variants, def.Variants) || !reflect.DeepEqual(got.Sweep, def.Sweep) ||
		!reflect.DeepEqual(got.Prompt, def.Prompt) || !reflect.DeepEqual(got.Acceptance, def.Acceptance) || got.Name != def.Name {
		t.Errorf("init -from-default wrote %+v\nwant the default protocol %+v", got, def)
	}
}
