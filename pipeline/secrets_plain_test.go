package pipeline_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/extractbench/extractbench/engines/builtin/starter"
	"github.com/extractbench/extractbench/engines/hostile"
	"github.com/extractbench/extractbench/pipeline"
	"github.com/extractbench/extractbench/results"
)

// TestRun_DummyKeysJudgedRaw is issue 40 item 6: a dummy API key such as
// Ollama's "ollama", a category word ("utilities") or "0" was redacted from
// the engine's answers before they were judged (4/10 accepted instead of
// 10/10), from a variant named like it, and from the manifest's numbers
// (invalid JSON). Such a key is now sent but never redacted, with a
// warning, and every variant is judged exactly as the one without a key.
func TestRun_DummyKeysJudgedRaw(t *testing.T) {
	dir := t.TempDir()
	keys := map[string]string{"ollama": "ollama", "utilities": "utilities", "zero": "0", "one": "1"}
	var variants strings.Builder
	fmt.Fprintf(&variants, "  - name: nokey\n    engine: {url: builtin, model: sim-8b, builtin: {time_scale: 0}}\n")
	for name, key := range keys {
		env := "EB_TEST_DUMMY_KEY_" + strings.ToUpper(name)
		t.Setenv(env, key)
		fmt.Fprintf(&variants, "  - name: %s\n    engine: {url: builtin, model: sim-8b, api_key_env: %s, builtin: {time_scale: 0}}\n", name, env)
	}
	proto := filepath.Join(dir, "p.yaml")
	p := fmt.Sprintf(`name: dummy-keys
corpus: %s
prompt: {user: "Extract date, amount and category.\n\n{{document}}"}
generation: {max_tokens: 128, temperature: 0, seed: 7}
acceptance: {min_accepted: 0}
sweep: {mode: concurrency, levels: [1], repetitions: 1, warmup: 0}
request_timeout: 20s
variants:
%s`, writeSmallCorpus(t, dir, 10), variants.String())
	if err := os.WriteFile(proto, []byte(p), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	var progress bytes.Buffer
	opts := pipeline.Options{Starters: starter.Starters(), ProtocolPath: proto, OutDir: out, Progress: &progress, Quiet: true}
	if _, err := pipeline.Run(context.Background(), opts); err != nil {
		t.Fatalf("run: %v\n%s", err, progress.String())
	}
	for name := range keys {
		if !strings.Contains(progress.String(), "warning: "+name+": the API key in EB_TEST_DUMMY_KEY_") {
			t.Errorf("no warning that %s's key is not redacted:\n%s", name, progress.String())
		}
	}
	rd, err := results.OpenReadOnly(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	d, err := rd.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(d.Run.Manifest) || bytes.Contains(d.Run.Manifest, []byte(results.Redacted)) {
		t.Errorf("the stored manifest is not valid JSON or holds a redaction:\n%.400s", d.Run.Manifest)
	}
	recs, err := rd.Requests(context.Background(), d.Run.RunID, results.RequestFilter{})
	if err != nil {
		t.Fatal(err)
	}
	accepted := map[string]int{}
	for _, r := range recs {
		if r.Accepted {
			accepted[r.Variant]++
		} else {
			accepted[r.Variant] += 0
		}
		if strings.Contains(r.Output, results.Redacted) {
			t.Errorf("variant %s: output %q was rewritten", r.Variant, r.Output)
		}
	}
	if len(accepted) != len(keys)+1 {
		t.Fatalf("variants stored %v, want nokey and %d named as written", accepted, len(keys))
	}
	for name := range keys {
		if accepted[name] != accepted["nokey"] {
			t.Errorf("variant %s: %d accepted, the variant without a key %d: the key changed the judging", name, accepted[name], accepted["nokey"])
		}
	}
}

// TestRun_ErrorBodiesStoredWhole is issue 40 item 8: an error body echoing
// the key upper-cased was stored as echoed, and one with NUL bytes read as
// 1 character in SQLite (length() stops at a NUL). Now the key is found in
// any case and a NUL is stored as the text \u0000.
func TestRun_ErrorBodiesStoredWhole(t *testing.T) {
	dir := t.TempDir()
	key := "sk-eb-" + randomHex(t, 16)
	t.Setenv("EB_TEST_SECRET_KEY", key)
	upper := hostile.MustNew(t, hostile.SecretsEchoUpper, hostile.Options{APIKey: key})
	nul := hostile.MustNew(t, hostile.ErrorBodyNUL, hostile.Options{})
	proto := filepath.Join(dir, "p.yaml")
	p := fmt.Sprintf(`name: bodies
corpus: %s
prompt: {user: "Extract date, amount and category.\n\n{{document}}"}
generation: {max_tokens: 64, temperature: 0}
acceptance: {min_accepted: 0}
sweep: {mode: concurrency, levels: [1], repetitions: 1, warmup: 0}
request_timeout: 5s
variants:
  - name: upper
    engine: {url: %q, model: %s, api_key_env: EB_TEST_SECRET_KEY}
  - name: nul
    engine: {url: %q, model: %s}
`, writeSmallCorpus(t, dir, 3), upper.URL, hostile.Model, nul.URL, hostile.Model)
	if err := os.WriteFile(proto, []byte(p), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	var progress bytes.Buffer
	_, _ = pipeline.Run(context.Background(), pipeline.Options{ProtocolPath: proto, OutDir: out, Progress: &progress, Quiet: true})
	rd, err := results.OpenReadOnly(context.Background(), out)
	if err != nil {
		t.Fatalf("%v\n%s", err, progress.String())
	}
	defer rd.Close()
	d, err := rd.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	recs, err := rd.Requests(context.Background(), d.Run.RunID, results.RequestFilter{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range recs {
		n++
		switch r.Variant {
		case "upper":
			if strings.Contains(strings.ToLower(r.ErrorBody), strings.ToLower(key[6:])) || !strings.Contains(r.ErrorBody, results.Redacted) {
				t.Errorf("upper: error body %q keeps the key in another case", r.ErrorBody)
			}
		case "nul":
			if want := `\u0000internal\u0000error\u0000 in worker 3`; r.ErrorBody != want {
				t.Errorf("nul: error body %q, want %q (TestStore_NULStoredWhole checks SQLite sees it whole)", r.ErrorBody, want)
			}
		}
	}
	if n == 0 {
		t.Fatalf("no requests stored:\n%s", progress.String())
	}
}
