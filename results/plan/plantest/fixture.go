// Package plantest gives the tests of the decision packages (results/plan,
// results/compare, the CLI) runs shaped for them: a manifest with the keys
// the decisions read, passes and records whose figures agree. Write stores
// one through resultstest.Write, the one builder of a results directory.
package plantest

import (
	"fmt"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/results"
	"github.com/extractbench/extractbench/results/resultstest"
)

// Run is a results directory's content: one run with its passes, requests
// and events.
type Run struct {
	RunID     string
	Manifest  map[string]any // nil = Manifest(DefaultCorpusSHA, ...)
	StartedAt int64          // unix ms
	EndedAt   int64          // unix ms; 0 = unset
	Status    string         // "" = complete
	Simulated bool
	Passes    []extractbench.Pass
	Records   []extractbench.Record
	Events    []results.Event
}

// DefaultCorpusSHA is the corpus hash of a fixture manifest unless set.
const DefaultCorpusSHA = "c0ffee"

// Manifest returns a run manifest with the keys the decisions read.
func Manifest(corpusSHA, model, gpu string, gpuBytes int64, minAccepted, latencyP95MS float64) map[string]any {
	return map[string]any{
		"protocol_name": "fixture",
		"corpus":        map[string]any{"path": "corpus/default", "sha256": corpusSHA, "count": 300},
		"parse":         "strict",
		"generation":    map[string]any{"max_tokens": 128},
		"acceptance":    map[string]any{"min_accepted": minAccepted, "latency_p95_ms": latencyP95MS, "min_baseline_ratio": 0.99},
		"sweep":         map[string]any{"mode": "concurrency", "levels": []int{1, 2, 4, 8}, "repetitions": 1},
		"model":         model,
		"engine":        map[string]any{"url": "http://127.0.0.1:8000", "kind": "vllm", "version": "0.11.0", "model": model},
		"gpu":           map[string]any{"name": gpu, "memory_total_bytes": gpuBytes, "driver": "570.1", "cuda": "12.8"},
	}
}

// Write creates dir/results.db holding run, through resultstest.Write
// (the one builder of a results directory), with Manifest's defaults for a
// nil manifest. It fails the test on any error.
func Write(tb testing.TB, dir string, run Run) {
	tb.Helper()
	if run.Manifest == nil {
		run.Manifest = Manifest(DefaultCorpusSHA, "meta-llama/Llama-3.1-8B-Instruct", "NVIDIA H100 80GB HBM3", 85_520_809_984, 0.95, 0)
	}
	resultstest.Write(tb, dir, resultstest.Run{RunID: run.RunID, Manifest: run.Manifest, StartedAt: run.StartedAt, EndedAt: run.EndedAt,
		Status: run.Status, Simulated: run.Simulated, Records: run.Records, Passes: run.Passes, Events: run.Events})
}

// Pass returns a complete concurrency pass of docs documents of which
// accepted were accepted, lasting durationS seconds with the given p95 E2E
// (milliseconds). Other figures are derived so that they agree.
func Pass(variant string, level, rep, docs, accepted int, durationS float64, e2eP95MS int64) extractbench.Pass {
	phase := "sweep"
	if level == 1 {
		phase = "baseline"
	}
	dur := int64(durationS * 1e9)
	p95 := e2eP95MS * 1e6
	p50 := p95 / 2
	ttft := p95 / 10
	outTok := int64(docs) * 40
	tokS := float64(outTok) / durationS
	accS := float64(accepted) / durationS
	dph := accS * 3600
	start := int64(1e9)
	end := start + dur
	return extractbench.Pass{
		Variant: variant, Mode: extractbench.ModeConcurrency, Level: level, Repetition: rep, Phase: phase, Attempt: 1,
		SentConcurrency: int64(level), Status: "complete", StartedNS: &start, EndedNS: &end, DurationNS: dur,
		Docs: int64(docs), Accepted: int64(accepted), Failures: quality(int64(docs - accepted)), UniqueIDs: int64(accepted),
		TTFTN: int64(docs), TTFTP50NS: &ttft, TTFTP95NS: &ttft, E2EN: int64(docs), E2EP50NS: &p50, E2EP95NS: &p95,
		OutputTokens: outTok, OutputTokensPerS: &tokS, AcceptedPerS: &accS, DocsPerHour: &dph,
	}
}

// WithPeaks sets a pass's memory peaks (bytes, and KV usage 0–1).
func WithPeaks(p extractbench.Pass, gpuMem, torchAlloc, torchReserved int64, kv float64) extractbench.Pass {
	p.PeakGPUMemBytes, p.PeakTorchAllocatedBytes, p.PeakTorchReservedBytes, p.PeakKVUsage = &gpuMem, &torchAlloc, &torchReserved, &kv
	return p
}

// Records returns one record per document of a pass: documents d0001... are
// accepted where ok(i) is true, else a quality failure on the amount.
func Records(variant string, level, rep, docs int, ok func(i int) bool) []extractbench.Record {
	out := make([]extractbench.Record, docs)
	for i := range out {
		date, amount, cat := "2025-01-02", "10.00", "travel"
		rec := extractbench.Record{Variant: variant, Mode: extractbench.ModeConcurrency, Level: level, Repetition: rep,
			DocID: fmt.Sprintf("d%04d", i+1), LengthClass: "usual"}
		rec.SchedNS, rec.SendNS, rec.FirstByteNS, rec.FirstTokenNS = int64(i+1)*1e6, int64(i+1)*1e6, int64(i+1)*1e6+1e5, int64(i+1)*1e6+2e5
		rec.LastTokenNS, rec.DoneNS = int64(i+1)*1e6+5e5, int64(i+1)*1e6+6e5
		rec.CompletionTokens, rec.PromptTokens, rec.UsageReported, rec.FinishReason = 20, 300, true, "stop"
		rec.StrictParseOK, rec.LenientParseOK, rec.SchemaOK = true, true, true
		rec.Date, rec.Amount, rec.Category = extractbench.TP, extractbench.TP, extractbench.TP
		if ok(i) {
			rec.Accepted = true
		} else {
			amount = "11.00"
			rec.Amount, rec.Failure, rec.FailureDetail = extractbench.FPFN, extractbench.Quality, "amount 11.00 != 10.00"
		}
		rec.Prediction = extractbench.Prediction{Date: &date, Amount: &amount, Category: &cat}
		rec.Output = fmt.Sprintf(`{"date":%q,"amount":%s,"category":%q}`, date, amount, cat)
		out[i] = rec
	}
	return out
}

func quality(n int64) extractbench.FailureCounts {
	var c extractbench.FailureCounts
	c.Add(extractbench.Quality, n)
	return c
}
