package report

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/corpus"
	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/results"
	"github.com/extractbench/extractbench/results/resultstest"
)

// payload is document text and model output that would run if the report
// ever let it through as markup.
const payload = `<script>document.body.setAttribute('data-pwned','1')</script>` +
	`<img src=x onerror="document.body.setAttribute('data-pwned','2')">`

// scriptPayload closes the data script early if JSON embedding is unsafe.
const scriptPayload = `</script><script>document.body.setAttribute('data-pwned','3')</script>`

// fixture describes the simulated run the tests write into a results
// directory: a corpus, a sweep over levels with repetitions, and a card that
// runs out of memory on long documents at the top level.
type fixture struct {
	Docs    int   // documents in the corpus; every tenth is long, every third short
	Levels  []int // the sweep
	Reps    int
	OOMAt   int    // level from which long documents fail with memory
	Samples int    // telemetry samples per pass
	Version string // the engine version the manifest records
	Bare    bool   // an engine without /metrics on a machine without nvidia-smi: no telemetry, no peaks
	// Variants measured one after the other; nil is one, "bf16". Each later
	// variant is slower and gets some documents wrong under load, so the
	// overlays have lines that differ.
	Variants []string
	// Replicas are the endpoints of every variant (engine.urls): each
	// client slot sends to one of them, and each is sampled on its own.
	Replicas []string
}

func (f fixture) variants() []string {
	if len(f.Variants) == 0 {
		return []string{"bf16"}
	}
	return f.Variants
}

var defaultFixture = fixture{Docs: 60, Levels: []int{1, 2, 4, 8, 16}, Reps: 3, OOMAt: 16, Samples: 120, Version: "0.1.0"}

func (f fixture) docs() []corpus.Document {
	out := make([]corpus.Document, f.Docs)
	for i := range out {
		class, text := corpus.Usual, "Nota fiscal de serviços eletrônica. Prestador: Acme Ltda. Emissão 12/03/2025. Total R$ 1.234,56. "
		switch {
		case i%10 == 9:
			class, text = corpus.Long, strings.Repeat("Item de linha: assinatura mensal, 1 un, R$ 10,00. ", 40)
		case i%3 == 0:
			class, text = corpus.Short, "Recibo. 2025-03-12. Total USD 45.00."
		}
		if i == 4 {
			text = "Invoice with a hostile note " + payload + " Total 99.00"
		}
		date, amount, cat := "2025-03-12", "1234.56", "software"
		out[i] = corpus.Document{ID: fmt.Sprintf("doc-%04d", i+1), Text: text, LengthClass: class,
			Expected: corpus.Expected{Date: &date, Amount: &amount, Category: &cat}}
	}
	return out
}

// write creates dir/results.db (through the results store, so the schema is
// the real one) and dir/corpus/documents.jsonl.
func (f fixture) write(tb testing.TB, dir string) {
	tb.Helper()
	docs, manifest := f.corpusAndManifest(tb, dir)
	const startedAt = 1767225600000 // 2026-01-01 00:00:00 UTC
	run := resultstest.Run{RunID: fixtureRunID, Fingerprint: "f1ae5e", ProtocolName: "fixture",
		Manifest: manifest, StartedAt: startedAt, EndedAt: startedAt + 1800_000, Status: results.RunComplete, Simulated: true}
	const runID = fixtureRunID
	clock := int64(5e9)
	for vi, variant := range f.variants() {
		for _, lv := range f.Levels {
			for rep := 1; rep <= f.Reps; rep++ {
				recs := f.pass(runID, variant, vi, docs, lv, rep, clock)
				run.Records = append(run.Records, recs...)
				p := f.passRow(runID, variant, recs, lv, rep)
				run.Passes = append(run.Passes, p)
				key := extractbench.PassKey{RunID: runID, Variant: variant, Mode: "concurrency", Level: lv, Repetition: rep}
				if !f.Bare {
					run.Telemetry = append(run.Telemetry, resultstest.TelemetryOf(key, f.telemetry(lv, *p.StartedNS, p.DurationNS)...)...)
				}
				clock = *p.EndedNS + 1e9
			}
		}
	}
	run.Events = []results.Event{
		{Variant: "bf16", AtMS: startedAt + 1000, Kind: results.EventEngineLoad, ValueNS: 42e9},
		{Variant: "bf16", AtMS: startedAt + 2000, Kind: results.EventWarmup, ValueNS: 3100e6},
	}
	run.Decisions = []results.Decision{{Variant: "bf16", Mode: "concurrency", AtMS: startedAt + 1700_000,
		Kind: results.DecisionSkipLevel, FromLevel: 32, Reason: "level 16 had memory failures"}}
	resultstest.Write(tb, dir, run)
}

// fixtureRunID is the run every fixture writes.
const fixtureRunID = "run-fixture"

// corpusAndManifest writes the fixture's corpus into dir/corpus and returns
// its documents and the run's manifest.
func (f fixture) corpusAndManifest(tb testing.TB, dir string) ([]corpus.Document, map[string]any) {
	tb.Helper()
	docs := f.docs()
	if err := os.MkdirAll(filepath.Join(dir, "corpus"), 0o755); err != nil {
		tb.Fatal(err)
	}
	var jsonl strings.Builder
	for _, d := range docs {
		b, _ := json.Marshal(d)
		jsonl.Write(b)
		jsonl.WriteByte('\n')
	}
	corpusPath := filepath.Join(dir, "corpus", "documents.jsonl")
	if err := os.WriteFile(corpusPath, []byte(jsonl.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
	c, err := corpus.Load(corpusPath)
	if err != nil {
		tb.Fatal(err)
	}
	sha := c.Manifest.SHA256

	manifest := map[string]any{
		"protocol_name": "fixture",
		"corpus":        map[string]any{"path": "corpus/documents.jsonl", "sha256": sha, "count": len(docs)},
		"parse":         "strict",
		"acceptance":    map[string]any{"min_accepted": 0.9, "latency_p95_ms": 60000},
		"sweep":         map[string]any{"mode": "concurrency", "levels": f.Levels, "repetitions": f.Reps},
		"simulated":     true,
		"model":         "meta-llama/Llama-3.1-8B-Instruct",
		"engine":        map[string]any{"kind": "builtin", "version": f.Version, "model": "meta-llama/Llama-3.1-8B-Instruct", "revision": "0e9e39f", "context_window": 8192, "simulated": true},
		"gpu":           map[string]any{"name": "NVIDIA L4 (simulated)", "memory_total_bytes": int64(23034) << 20, "source": "builtin-profile"},
	}
	var variants []any
	for _, v := range f.variants() {
		engine := map[string]any{"kind": "builtin", "version": f.Version, "model": "meta-llama/Llama-3.1-8B-Instruct", "revision": "0e9e39f", "context_window": 8192, "simulated": true}
		if len(f.Replicas) > 0 {
			engine["endpoints"] = f.Replicas
		}
		variants = append(variants, map[string]any{"name": v, "engine": engine, "gpu": map[string]any{"name": "NVIDIA L4 (simulated)", "memory_total_bytes": int64(23034) << 20, "source": "builtin-profile"}})
	}
	manifest["variants"] = variants
	return docs, manifest
}

// pass simulates one pass: latency grows with the level and the length
// class; long documents run out of memory from OOMAt on; doc-0007 always
// gets its amount wrong; doc-0005 (the hostile one) fails format once at
// the top level, with its payload in the output and the reason.
func (f fixture) pass(runID, variant string, vi int, docs []corpus.Document, lv, rep int, start int64) []extractbench.Record {
	var recs []extractbench.Record
	inflight := make([]int64, lv) // when each client slot frees up
	for i := range inflight {
		inflight[i] = start
	}
	for i, d := range docs {
		slot := slices.Index(inflight, slices.Min(inflight))
		send := inflight[slot]
		jitter := int64((i*7919+rep*104729+lv*31)%97) * 1e6
		prefill := map[corpus.LengthClass]int64{corpus.Short: 40e6, corpus.Usual: 120e6, corpus.Long: 900e6}[d.LengthClass]
		ttft := (prefill+jitter)*int64(4+lv)/4*int64(2+vi)/2 + 5e6
		tokens := 28 + i%5
		e2e := ttft + int64(tokens)*int64(18e6)*int64(8+lv)/8
		r := extractbench.Record{RunID: runID, Variant: variant, Mode: "concurrency", Level: lv, Repetition: rep,
			DocID: d.ID, LengthClass: string(d.LengthClass)}
		if len(f.Replicas) > 0 { // one in three documents on the last replica, the rest on the first
			r.Endpoint = f.Replicas[0]
			if i%3 == 2 {
				r.Endpoint = f.Replicas[len(f.Replicas)-1]
			}
		}
		r.Expected = d.Expected // the scorer keeps every record's expectation, failed ones too
		r.PromptTokens = corpus.ApproxTokens(d.Text) + 60
		r.CompletionTokens = tokens
		r.UsageReported = true
		r.SchedNS, r.SendNS = send, send
		r.FirstByteNS, r.FirstTokenNS = send+ttft-2e6, send+ttft
		r.LastTokenNS, r.DoneNS = send+e2e-1e6, send+e2e
		r.Output = `{"date": "2025-03-12", "amount": 1234.56, "category": "software"}`
		r.FinishReason = "stop"
		r.StrictParseOK, r.LenientParseOK, r.SchemaOK = true, true, true
		r.Date, r.Amount, r.Category = extractbench.TP, extractbench.TP, extractbench.TP
		r.Prediction.Date, r.Prediction.Amount, r.Prediction.Category = d.Expected.Date, d.Expected.Amount, d.Expected.Category
		r.Accepted = true
		switch {
		case d.LengthClass == corpus.Long && lv >= f.OOMAt:
			r.Timings = extractbench.Timings{SchedNS: send, SendNS: send, FirstByteNS: send + 30e6, DoneNS: send + 31e6}
			r.CompletionTokens, r.Output, r.FinishReason = 0, "", ""
			r.HTTPStatus, r.ErrorBody = 500, "CUDA out of memory. Tried to allocate 2.00 GiB"
			r.Transport.Kind = extractbench.TransportHTTPStatus
			r.Score = extractbench.Score{Expected: d.Expected, Failure: extractbench.Memory, FailureDetail: "HTTP 500: CUDA out of memory"}
			e2e = 31e6
		case d.ID == "doc-0007", vi > 0 && lv >= 4 && i%20 == 2:
			r.Amount, r.Accepted = extractbench.FPFN, false
			r.Failure, r.FailureDetail = extractbench.Quality, "amount 1243.56 ≠ expected 1234.56"
			r.Output = `{"date": "2025-03-12", "amount": 1243.56, "category": "software"}`
		case d.ID == "doc-0005" && lv == f.OOMAt && rep == 1:
			r.StrictParseOK, r.SchemaOK, r.Accepted = false, false, false
			r.Date, r.Amount, r.Category = extractbench.Unscored, extractbench.Unscored, extractbench.Unscored
			r.Failure, r.FailureDetail = extractbench.Format, "not JSON: "+payload
			r.Output = "Sure! " + scriptPayload + payload
		}
		inflight[slot] = send + e2e
		recs = append(recs, r)
	}
	return recs
}

// passRow aggregates a pass the way the runner does, for the passes table.
func (f fixture) passRow(runID, variant string, recs []extractbench.Record, lv, rep int) extractbench.Pass {
	p := extractbench.Pass{RunID: runID, Variant: variant, Mode: "concurrency", Level: lv, Repetition: rep,
		Phase: extractbench.PhaseSweep, Attempt: 1, SentConcurrency: int64(lv), Status: extractbench.PassComplete}
	if lv == f.Levels[0] {
		p.Phase = extractbench.PhaseBaseline
	}
	if b, err := json.Marshal(eval.Aggregate(recs).Confusion); err == nil {
		p.CategoryConfusion = string(b)
	}
	var e2e, ttft []int64
	first, last := recs[0].SendNS, int64(0)
	for _, r := range recs {
		p.Docs++
		first, last = min(first, r.SendNS), max(last, r.DoneNS)
		if r.Accepted {
			p.Accepted++
			p.UniqueIDs++
		}
		p.Failures.Add(r.Failure, 1)
		e2e = append(e2e, r.DoneNS-r.SendNS)
		if r.FirstTokenNS > 0 {
			ttft = append(ttft, r.FirstTokenNS-r.SendNS)
		}
		p.OutputTokens += int64(r.CompletionTokens)
	}
	de, dt := distOf(e2e), distOf(ttft)
	ptr := func(v float64) *int64 { n := int64(v); return &n }
	fptr := func(v float64) *float64 { return &v }
	p.StartedNS, p.EndedNS, p.DurationNS = &first, &last, last-first
	p.E2EN, p.TTFTN = int64(de.N), int64(dt.N)
	p.E2EP50NS, p.E2EP95NS, p.TTFTP50NS, p.TTFTP95NS = ptr(de.P50), ptr(de.P95), ptr(dt.P50), ptr(dt.P95)
	p.OutputTokensPerS = fptr(float64(p.OutputTokens) / (float64(p.DurationNS) / 1e9))
	p.DocsPerHour = fptr(float64(p.Accepted) / (float64(p.DurationNS) / 3.6e12))
	kv := min(1, 0.06*float64(lv))
	p.PeakKVUsage = &kv
	p.PeakGPUMemBytes = ptr(float64(int64(16)<<30) + kv*float64(int64(5)<<30))
	p.PeakTorchAllocatedBytes = ptr(float64(int64(15)<<30) + kv*float64(int64(4)<<30))
	p.PeakTorchReservedBytes = ptr(float64(int64(15)<<30) + kv*float64(int64(5)<<30))
	running := int64(lv)
	p.ObservedMaxRunning = &running
	if len(f.Replicas) > 0 {
		count := map[string]int64{}
		for _, r := range recs {
			count[r.Endpoint]++
		}
		lo, hi := int64(-1), int64(0)
		for _, e := range f.Replicas {
			if lo < 0 || count[e] < lo {
				lo = count[e]
			}
			hi = max(hi, count[e])
		}
		n := int64(len(f.Replicas))
		p.Endpoints, p.EndpointRequestsMin, p.EndpointRequestsMax = &n, &lo, &hi
	}
	if f.Bare {
		p.PeakKVUsage, p.PeakGPUMemBytes, p.PeakTorchAllocatedBytes, p.PeakTorchReservedBytes, p.ObservedMaxRunning = nil, nil, nil, nil, nil
	}
	return p
}

// telemetry samples the engine over a pass: KV usage and running requests
// ramp up, hold, and drain.
func (f fixture) telemetry(lv int, start, dur int64) []results.TelemetrySample {
	var out []results.TelemetrySample
	for i := 0; i < f.Samples; i++ {
		t := start + dur*int64(i)/int64(f.Samples-1)
		phase := float64(i) / float64(f.Samples-1)
		load := min(1, phase*5, (1-phase)*5)
		running := float64(lv) * load
		kv := min(1, 0.06*float64(lv)*load+0.02*float64(i%3))
		run, wait := float64(int(running)), float64(max(0, lv-12))*load
		if len(f.Replicas) == 0 {
			out = append(out,
				results.TelemetrySample{TNS: t, Metric: "vllm:kv_cache_usage_perc", Value: kv},
				results.TelemetrySample{TNS: t, Metric: "vllm:num_requests_running", Value: run},
				results.TelemetrySample{TNS: t, Metric: "vllm:num_requests_waiting", Value: wait},
			)
			continue
		}
		// Each replica holds an equal part of the requests; the first is
		// the fuller one, so its KV usage is the one a fold keeps.
		n := float64(len(f.Replicas))
		for j, e := range f.Replicas {
			out = append(out,
				results.TelemetrySample{TNS: t, Metric: "vllm:kv_cache_usage_perc", Value: kv / float64(j+1), Endpoint: e},
				results.TelemetrySample{TNS: t, Metric: "vllm:num_requests_running", Value: run / n, Endpoint: e},
				results.TelemetrySample{TNS: t, Metric: "vllm:num_requests_waiting", Value: wait / n, Endpoint: e},
			)
		}
	}
	return out
}
