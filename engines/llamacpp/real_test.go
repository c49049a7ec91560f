package llamacpp_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/engines/builtin/starter"
	"github.com/extractbench/extractbench/engines/process"
	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/pipeline"
	"github.com/extractbench/extractbench/results"
	"github.com/extractbench/extractbench/results/compare"
	"github.com/extractbench/extractbench/results/plan"
	"github.com/extractbench/extractbench/sizing"
)

// RealBinEnv names the directory of a built llama-server (build.sh's last
// line) that TestReal_Protocol runs; .ci/run sets it.
const RealBinEnv = "EXTRACTBENCH_LLAMACPP_BIN"

// The real protocol's shape: the first realDocs documents of corpus/default
// (8 short, 16 usual, 6 long), levels 1 and 4, on realSlots slots of
// realSlotTokens each (a multiple of 256, which llama.cpp rounds the
// context to): one of the long prompts fits a slot (4,344 tokens), five do
// not (4,648-5,007) and are refused with a 400, so truncation is measured
// and the run stays short (a long prefill is the costly request on a CPU).
// realThreads: on this shared 2-core machine one thread prefills faster
// than two (990 tokens: 4.6 s against 5.8-8.3 s at load 23), whose
// barriers spin while the other thread waits for a core.
const (
	realDocs       = 30
	realSlots      = 4
	realSlotTokens = 4608
	realMaxTokens  = 48
	realThreads    = 1
)

// ggufType is what a protocol variant serving one of gguf.sh's types says
// of it, and the ftype llama.cpp names it by in /v1/models.
type ggufType struct{ weights, quantization, ftype string }

var ggufTypes = map[string]ggufType{
	"bf16":   {"bf16", "none", "BF16"},
	"f16":    {"fp16", "none (f16, converted from the bf16 weights)", "F16"},
	"q8_0":   {"int8", "llama.cpp Q8_0 (blocks of 32 int8 with an f16 scale; norms f32)", "Q8_0"},
	"q4_0":   {"int4", "llama.cpp Q4_0 (blocks of 32 4-bit with an f16 scale; token_embd Q8_0; norms f32)", "Q4_0"},
	"q4_k_m": {"int4", "llama.cpp Q4_K_M (k-quants, super-blocks of 256)", "Q4_K - Medium"},
	"q6_k":   {"int8", "llama.cpp Q6_K (k-quants, super-blocks of 256)", "Q6_K"},
}

// ciVariants reads ci-variants: the one line that lists the GGUF types the
// real test serves, the reference first.
func ciVariants(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("ci-variants")
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if types != nil {
			t.Fatalf("ci-variants:%d: a second list; the file holds one line of types", n)
		}
		types = strings.Fields(line)
		for _, ty := range types {
			if _, ok := ggufTypes[ty]; !ok {
				t.Fatalf("ci-variants:%d: type %q is not one real_test.go describes (ggufTypes)", n, ty)
			}
		}
	}
	if len(types) != 2 {
		t.Fatalf("ci-variants: %d types, want two (a reference and a candidate)", len(types))
	}
	return types
}

// TestCIVariants checks ci-variants in every `go test`, so that an edit of
// its one line is caught before CI serves a type nobody described, or a
// k-quant (q4_k_m, q6_k) that the committed model's widths make
// llama-quantize fall back from (at hidden 384 Q4_K_M is 44 tensors of
// Q5_0: not what its name says). Switching to "f16 q4_k_m" is that one
// line once the committed model's rows are multiples of 256 (the retrain's
// h512); the subtests show the check refusing it at h384 and taking it at
// h512.
func TestCIVariants(t *testing.T) {
	types := ciVariants(t)
	if types[0] == types[1] {
		t.Errorf("ci-variants serves %s twice", types[0])
	}
	committed, err := sizing.LoadHFConfig("../transformers/model/extract-llama-15m/config.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := ciTypesFit(committed, types); err != nil {
		t.Errorf("ci-variants %v: %v", types, err)
	}
	t.Run("q4_k_m at hidden 384", func(t *testing.T) {
		h384, err := sizing.LoadHFConfig("../../sizing/testdata/gguf/h384-config.json")
		if err != nil {
			t.Fatal(err)
		}
		if err := ciTypesFit(h384, []string{"f16", "q4_k_m"}); err == nil {
			t.Error("f16 q4_k_m accepted for a model of hidden 384")
		}
		if err := ciTypesFit(h384, []string{"f16", "q4_0"}); err != nil {
			t.Errorf("f16 q4_0 at hidden 384: %v", err)
		}
	})
	t.Run("q4_k_m at hidden 512", func(t *testing.T) {
		h512, err := sizing.LoadHFConfig("../../sizing/testdata/gguf/h512-config.json")
		if err != nil {
			t.Fatal(err)
		}
		if err := ciTypesFit(h512, []string{"f16", "q4_k_m"}); err != nil {
			t.Errorf("f16 q4_k_m at hidden 512: %v", err)
		}
	})
}

// ciTypesFit says whether each GGUF type is what its name says for model
// m: a k-quant type (q4_k_m, q6_k) none of whose tensors llama-quantize
// gives another type because a row is not whole 256-blocks
// (sizing.GGUFWeightBytes, checked against llama-quantize's files in
// sizing/testdata/gguf). Q4_0's embedding in Q8_0 at hidden 384 is the
// scheme's own rule for the output tensor and is allowed.
func ciTypesFit(m sizing.Model, types []string) error {
	for _, ty := range types {
		if !strings.Contains(ty, "_k") {
			continue
		}
		_, fell, err := sizing.GGUFWeightBytes(m, ty)
		if err != nil {
			return err
		}
		if fell > 0 {
			return fmt.Errorf("%s: %d of %s's tensors would fall back from k-quants (hidden %d, MLP %d: k-quant rows must be multiples of 256); serve q4_0 until the model's widths fit",
				ty, fell, m.Name, m.HiddenSize, m.IntermediateSize)
		}
	}
	return nil
}

// TestReal_Protocol runs a short real protocol against llama.cpp's
// llama-server through `start:` (serve.sh), one variant per type of
// ci-variants, and checks what the run recorded: the lifecycle (started,
// load time, stopped), the identity (the served file's type, different per
// variant), llama.cpp's metrics sampled, usage with cached prompt tokens,
// TTFT before E2E on every request, failure classes (a long prompt over its
// slot is truncation; nothing is error or memory), and compare's paired
// verdict. It needs a built llama-server: .ci/run sets RealBinEnv.
func TestReal_Protocol(t *testing.T) {
	bin := os.Getenv(RealBinEnv)
	if bin == "" {
		t.Skip(RealBinEnv + " not set: no llama-server to run. Enable with " + RealBinEnv +
			"=$(engines/llamacpp/build.sh) go test -run TestReal ./engines/llamacpp/ (as .ci/run does)")
	}
	if _, err := os.Stat(filepath.Join(bin, "llama-server")); err != nil {
		t.Fatalf("%s=%s: %v (run engines/llamacpp/build.sh, which prints the directory)", RealBinEnv, bin, err)
	}
	types := ciVariants(t)
	dir := t.TempDir()
	proto := writeRealProtocol(t, dir, bin, types)
	out := filepath.Join(dir, "out")
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	defer func() { // on failure, what the engines said: the directory goes with the test
		if !t.Failed() {
			return
		}
		for _, ty := range types {
			b, _ := os.ReadFile(filepath.Join(out, "engine-"+ty+".log"))
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			t.Logf("engine-%s.log, last lines:\n%s", ty, strings.Join(lines[max(0, len(lines)-30):], "\n"))
		}
	}()
	started := time.Now()
	if _, err := pipeline.Run(ctx, pipeline.Options{Starters: starter.Starters(), Process: process.Starter{}, ProtocolPath: proto, OutDir: out, Quiet: true}); err != nil {
		t.Fatal(err)
	}
	t.Logf("run: %s", time.Since(started).Round(time.Second))

	rd, err := results.OpenReadOnly(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	run, err := rd.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if run.Run.Status != results.RunComplete {
		t.Fatalf("run status %q, want complete", run.Run.Status)
	}
	checkRealLifecycle(t, out, run, types)
	checkRealIdentity(t, run, types)
	for _, ty := range types {
		recs, err := rd.Requests(ctx, run.Run.RunID, results.RequestFilter{Variant: ty})
		if err != nil {
			t.Fatal(err)
		}
		checkRealRequests(t, ty, recs)
	}
	checkRealPasses(t, ctx, rd, run, types)
	checkRealCompare(t, ctx, out, run, types)
	checkRealMemory(t, run, types)
}

// writeRealProtocol writes the corpus cut and the protocol, one variant per
// type, each on a free port.
func writeRealProtocol(t *testing.T, dir, bin string, types []string) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "..", "corpus", "default", "documents.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(src, []byte("\n"))
	if len(lines) < realDocs {
		t.Fatalf("corpus/default has %d lines, want at least %d", len(lines), realDocs)
	}
	docs := filepath.Join(dir, "documents.jsonl")
	if err := os.WriteFile(docs, bytes.Join(lines[:realDocs], nil), 0o644); err != nil {
		t.Fatal(err)
	}
	serve, err := filepath.Abs("serve.sh")
	if err != nil {
		t.Fatal(err)
	}
	// The served model's tokenizer, so the drift is counted (TestProtocols_Tokenizers).
	tok, err := filepath.Abs(filepath.Join(committedModel, "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `name: llamacpp-ci
description: engines/llamacpp/real_test.go, the real llama-server of .ci/run
corpus: %q
prompt:
  system: "You extract fields from business documents. Answer with JSON only."
  user: "Extract date (issue date, YYYY-MM-DD), amount (total due, a JSON number) and category (one of: utilities, telecom, software, office_supplies, travel, meals, rent, professional_services, taxes, healthcare). Use null for a field the document lacks. Answer with one JSON object with the keys date, amount and category.\n\n{{document}}"
output_schema: default
parse: strict
generation: {max_tokens: %d, temperature: 0, seed: 7}
acceptance: {min_accepted: 0.5}
sweep: {mode: concurrency, levels: [1, 4], repetitions: 1, warmup: 1}
request_timeout: 300s
variants:
`, docs, realMaxTokens)
	for _, ty := range types {
		g := ggufTypes[ty]
		port := freePort(t)
		fmt.Fprintf(&b, `  - name: %s
    engine:
      url: "http://127.0.0.1:%d"
      model: extract-llama-15m
      kind: llamacpp
      start: "LLAMACPP_BIN=%s LLAMACPP_CTX=%d LLAMACPP_PARALLEL=%d %s %s %d --threads %d"
      ready_timeout: 120s
      weights: %s
      quantization: %q
      params: 17517568
      tokenizer: %q
`, ty, port, bin, realSlots*realSlotTokens, realSlots, serve, ty, port, realThreads, g.weights, g.quantization, tok)
	}
	path := filepath.Join(dir, "protocol.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// checkRealLifecycle: each variant's engine was started by extractbench,
// its load time recorded, it did not die, and it was stopped: its pid file
// is gone and its port refuses connections.
func checkRealLifecycle(t *testing.T, out string, run *results.RunData, types []string) {
	t.Helper()
	for _, ty := range types {
		vm := run.Manifest.Variant(ty)
		if !vm.Engine.Started {
			t.Errorf("%s: the manifest says extractbench did not start the engine", ty)
		}
		if ns := run.LastEventNS(results.EventEngineLoad, ty); ns <= 0 {
			t.Errorf("%s: no engine_load time recorded", ty)
		} else {
			t.Logf("%s: engine load %s", ty, time.Duration(ns).Round(time.Millisecond))
		}
		for _, e := range run.Events {
			if e.Variant == ty && (e.Kind == results.EventEngineExit || e.Kind == results.EventEngineDead || e.Kind == results.EventVariantFail) {
				t.Errorf("%s: event %s: %s", ty, e.Kind, e.Detail)
			}
		}
		log, err := os.ReadFile(filepath.Join(out, "engine-"+ty+".log"))
		if err != nil || !bytes.Contains(log, []byte("llama")) {
			t.Errorf("%s: engine log %v does not hold llama-server's output", ty, err)
		}
		if _, err := os.Stat(filepath.Join(out, "engine-"+ty+".pid")); err == nil {
			t.Errorf("%s: the engine's pid file is still there: the engine was not stopped", ty)
		}
		if c, err := net.DialTimeout("tcp", strings.TrimPrefix(vm.Engine.URL, "http://"), time.Second); err == nil {
			c.Close()
			t.Errorf("%s: %s still accepts connections after the run", ty, vm.Engine.URL)
		}
	}
}

// checkRealIdentity: the version and served file come from the engine, and
// each variant's file is its own (type and bytes), so its environment is.
func checkRealIdentity(t *testing.T, run *results.RunData, types []string) {
	t.Helper()
	envs := map[string]string{}
	for _, ty := range types {
		e := run.Manifest.Variant(ty).Engine
		if e.Version == "" || !strings.Contains(strings.Join(e.ServedModels, ","), "extract-llama-15m") {
			t.Errorf("%s: engine version %q, served %v: want llama-server's build and the alias", ty, e.Version, e.ServedModels)
		}
		if e.File == nil || e.File.Format != ggufTypes[ty].ftype || e.File.Bytes <= 0 {
			t.Errorf("%s: served file %+v, want type %q and its bytes", ty, e.File, ggufTypes[ty].ftype)
		}
		if e.ContextWindow != realSlotTokens {
			t.Errorf("%s: context window %d, want the slot's %d as /props says it", ty, e.ContextWindow, realSlotTokens)
		}
		env := run.Manifest.Variant(ty).Environment
		if other, ok := envs[env]; ok || env == "" {
			t.Errorf("%s: environment %q, the same as %s's", ty, env, other)
		}
		envs[env] = ty
		t.Logf("%s: %s, file %+v, environment %.12s", ty, e.Version, e.File, env)
	}
}

// checkRealRequests: usage on every served request, TTFT before E2E, and
// the failure classes: truncation exactly where the prompt is over the slot
// (the engine's 400 says how long it was), no error, no memory.
func checkRealRequests(t *testing.T, ty string, recs []extractbench.Record) {
	t.Helper()
	if len(recs) != 2*realDocs {
		t.Fatalf("%s: %d requests, want %d (two levels of %d documents)", ty, len(recs), 2*realDocs, realDocs)
	}
	accepted := map[string]int{}
	truncated := 0
	for _, r := range recs {
		id := fmt.Sprintf("%s level %d %s (%s, %d prompt tokens)", ty, r.Level, r.DocID, r.LengthClass, r.PromptTokens)
		switch r.Failure {
		case extractbench.Error, extractbench.Memory:
			t.Errorf("%s: %s: %s (%s %s)", id, r.Failure, r.FailureDetail, r.Kind, r.Detail)
		case extractbench.Truncation:
			truncated++
			if r.PromptTokens < realSlotTokens || r.LengthClass != "long" {
				t.Errorf("%s: truncation (%s) of a prompt that fits the %d-token slot", id, r.FailureDetail, realSlotTokens)
			}
			continue
		}
		if r.PromptTokens >= realSlotTokens {
			t.Errorf("%s: a prompt over the %d-token slot is %q, want truncation", id, realSlotTokens, r.Failure)
		}
		if r.Accepted {
			accepted[r.LengthClass]++
		}
		if !r.UsageReported || r.PromptTokens <= 0 || r.CompletionTokens <= 0 || r.CachedPromptTokens == nil {
			t.Errorf("%s: usage reported %v, prompt %d, completion %d, cached %v: want llama.cpp's usage", id,
				r.UsageReported, r.PromptTokens, r.CompletionTokens, r.CachedPromptTokens)
		}
		if r.FirstTokenNS <= r.SendNS || r.FirstTokenNS >= r.DoneNS {
			t.Errorf("%s: send %d, first token %d, done %d: want TTFT below E2E", id, r.SendNS, r.FirstTokenNS, r.DoneNS)
		}
	}
	if truncated == 0 {
		t.Errorf("%s: no truncation: the long prompts over the %d-token slot should be", ty, realSlotTokens)
	}
	for _, class := range []string{"short", "usual", "long"} {
		if accepted[class] == 0 {
			t.Errorf("%s: no %s document accepted (%v)", ty, class, accepted)
		}
	}
	t.Logf("%s: accepted per class %v, %d truncated", ty, accepted, truncated)
}

// checkRealPasses: every pass is complete, sampled llama.cpp's /metrics
// (requests_processing, stored under the canonical running metric) and
// recorded its cached prompt tokens.
func checkRealPasses(t *testing.T, ctx context.Context, rd *results.Reader, run *results.RunData, types []string) {
	t.Helper()
	passes := 0
	for _, p := range run.Passes {
		name := fmt.Sprintf("%s level %d", p.Variant, p.Level)
		passes++
		if !p.Complete() || p.Docs != realDocs {
			t.Errorf("%s: status %q, %d documents", name, p.Status, p.Docs)
		}
		key := extractbench.PassKey{RunID: p.RunID, Variant: p.Variant, Mode: p.Mode, Level: p.Level, Repetition: p.Repetition}
		samples, err := rd.Telemetry(ctx, key, "vllm:num_requests_running")
		if err != nil {
			t.Fatal(err)
		}
		if len(samples) == 0 || p.ObservedMaxRunning == nil || *p.ObservedMaxRunning < 1 {
			t.Errorf("%s: %d samples of llamacpp:requests_processing, observed max running %v", name, len(samples), p.ObservedMaxRunning)
		}
		if p.CachedPromptTokens == nil || *p.CachedPromptTokens <= 0 {
			t.Errorf("%s: cached prompt tokens %v, want llama.cpp's prompt cache (the shared instructions at least)", name, p.CachedPromptTokens)
		}
		if p.TTFTN == 0 || p.TTFTP50NS == nil {
			t.Errorf("%s: no TTFT figure", name)
		}
		// The drift against the model's tokenizer.json is counted on every
		// answered request (how many drifted is the model's: the committed
		// tokenizer's \p{Nd} against llama.cpp's \p{N} at "m³)").
		if d := p.PromptDrift; d.Reference != extractbench.DriftAgainstTokenizer || d.Compared == nil || *d.Compared == 0 {
			t.Errorf("%s: prompt drift %+v, want counted against the tokenizer", name, d)
		} else {
			t.Logf("%s: %s", name, p.PromptDrift.Sentence())
		}
		t.Logf("%s: accepted %d/%d, truncation %d, cached prompt share %s, %d telemetry samples, max running %s, E2E p50 %s",
			name, p.Accepted, p.Docs, p.Failures.Of(extractbench.Truncation), fmtPtr(p.CachedPromptShare, "%.3f"), len(samples),
			fmtPtr(p.ObservedMaxRunning, "%d"), fmtPtr(p.E2EP50NS, "%dns"))
	}
	if passes != 2*len(types) {
		t.Errorf("%d passes, want %d", passes, 2*len(types))
	}
}

func fmtPtr[T any](v *T, format string) string {
	if v == nil {
		return "NULL"
	}
	return fmt.Sprintf(format, *v)
}

// checkRealMemory: `memory RUN` sizes each variant's weights as the GGUF
// scheme it served, from the served file's own shape, and the calculator's
// bytes are the tensor bytes llama.cpp says it loaded (/v1/models
// meta.size), tensor for tensor with the file.
func checkRealMemory(t *testing.T, run *results.RunData, types []string) {
	t.Helper()
	mc, err := plan.CheckMeasured(run, sizing.Inputs{ContextTokens: realSlotTokens, Concurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i, ty := range types {
		e := mc.Estimates[i]
		if e.Variant != ty || e.Estimate.GGUF != ty || e.File == nil || e.Estimate.ModelWeightBytes != e.File.Bytes {
			t.Errorf("%s: calculator %d bytes as GGUF %q, llama.cpp loaded %+v", ty, e.Estimate.ModelWeightBytes, e.Estimate.GGUF, e.File)
			continue
		}
		if e.GGUF == nil || len(e.GGUF.Differences) != 0 {
			t.Errorf("%s: the served file tensor by tensor: %+v", ty, e.GGUF)
			continue
		}
		t.Logf("%s: weights %d bytes, the calculator's and llama.cpp's", ty, e.File.Bytes)
	}
}

// checkRealCompare: compare pairs every document of the two variants at
// level 1 and gives a verdict that agrees with the pass rows.
func checkRealCompare(t *testing.T, ctx context.Context, out string, run *results.RunData, types []string) {
	t.Helper()
	res, err := compare.Run(ctx, compare.Options{A: compare.Side{Dir: out, Variant: types[0]}, B: compare.Side{Dir: out, Variant: types[1]}})
	if err != nil {
		t.Fatal(err)
	}
	eq := res.Equivalence
	if eq.N != realDocs || len(res.OnlyInA)+len(res.OnlyInB) != 0 {
		t.Errorf("compare paired %d documents (only in A %v, only in B %v), want %d", eq.N, res.OnlyInA, res.OnlyInB, realDocs)
	}
	for i, ty := range types {
		got := int64(eq.BothOK + eq.B)
		if i == 1 {
			got = int64(eq.BothOK + eq.C)
		}
		for _, p := range run.Passes {
			if p.Variant == ty && p.Level == 1 && p.Accepted != got {
				t.Errorf("compare says %s accepted %d, its level-1 pass %d", ty, got, p.Accepted)
			}
		}
	}
	var text bytes.Buffer
	if err := res.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	verdict, _, _ := strings.Cut(text.String(), "\n\n")
	t.Logf("compare %s %s:\n%s", types[0], types[1], verdict)
	// 30 documents cannot exclude ±2 points whatever the answers; at ±25
	// points they can, and the verdict is the answers' own.
	if eq.Verdict() != eval.VerdictInconclusive || eq.NeededN <= realDocs || !strings.Contains(verdict, "would do") {
		t.Errorf("compare at δ = %.2f: %s (needs %d documents), want INCONCLUSIVE and how many would do", res.Margin, eq.Verdict(), eq.NeededN)
	}
	wide, err := compare.Run(ctx, compare.Options{A: compare.Side{Dir: out, Variant: types[0]}, B: compare.Side{Dir: out, Variant: types[1]}, Margin: 0.25})
	if err != nil {
		t.Fatal(err)
	}
	if v := wide.Equivalence.Verdict(); v == eval.VerdictInconclusive {
		t.Errorf("compare at δ = 0.25: %s on %d documents, want a verdict", v, wide.Equivalence.N)
	} else {
		t.Logf("compare at δ = 0.25: %s, interval [%+.3f, %+.3f], %d flips", v, wide.Equivalence.Lo, wide.Equivalence.Hi, len(wide.Equivalence.Flips))
	}
}
