package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/results/plan"
	"github.com/extractbench/extractbench/results/plan/plantest"
)

// emulatedRun writes a one-pass context-mode run of an engine capped to an
// emulated 24 GB card whose pool holds pool sequences of 6,800 tokens, with
// level requests in flight and running of them run at once.
func emulatedRun(t *testing.T, level int, running int64, kv float64) string {
	t.Helper()
	dir := t.TempDir()
	m := plantest.Manifest(plantest.DefaultCorpusSHA, "random-llama-3.1-8b", "emulated L4 on NVIDIA H200", 150_000_000_000, 0, 600000)
	m["sweep"] = map[string]any{"mode": "context", "levels": "classes", "concurrency": level, "repetitions": 1}
	const pool, perSeq = 4, 27 // 6,800 tokens take 27 blocks of 256
	capInfo := map[string]any{"card": "L4", "label": "emulated L4 (24 GB) on NVIDIA H200: memory only; bandwidth and compute are the NVIDIA H200's",
		"cap_bytes": int64(24e9), "block_size": 256, "num_blocks": pool * perSeq, "kv_capacity_tokens": pool * perSeq * 256,
		"weights_bytes": int64(16_060_522_496), "calculator_model": "Llama-3.1-8B"}
	m["variants"] = []any{map[string]any{"name": "l4", "engine": map[string]any{"url": "http://127.0.0.1:8000", "kind": "transformers",
		"model": "random-llama-3.1-8b", "about": map[string]any{"version": "x", "memory_cap": capInfo}}}}
	p := plantest.Pass("l4", 3, 1, level, 0, 30, 5000)
	p.Mode, p.Phase = extractbench.ModeContext, extractbench.PhaseBaseline
	p.PromptTokens, p.OutputTokens = int64(level*6544), int64(level*256)
	waiting := int64(level) - running
	p.ObservedMaxRunning, p.ObservedMaxWaiting, p.PeakKVUsage = &running, &waiting, &kv
	plantest.Write(t, dir, plantest.Run{RunID: "e", Manifest: m, Passes: []extractbench.Pass{p}})
	return dir
}

// TestSelect_EmulatedCards: select over runs of an emulated card adds the
// section that puts the calculator beside the measured boundary (here 4:
// six in flight, four running, the KV cache full), and -out writes it to
// select.md and margins.json; the sheet above it is unchanged in form.
func TestSelect_EmulatedCards(t *testing.T) {
	dirs := []string{emulatedRun(t, 2, 2, 0.5), emulatedRun(t, 4, 4, 0.97), emulatedRun(t, 6, 4, 0.99)}
	out := t.TempDir()
	code, stdout, stderr := runCLI(t, append([]string{"select", "-out", out}, dirs...)...)
	if code != exitOK {
		t.Fatalf("select: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"# Selection sheet", "## Emulated cards", "emulated L4 (24 GB) on NVIDIA H200", "| 4 |", "3 (measured)",
		"-model Llama-3.1-8B -context 6800"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("select lacks %q:\n%s", want, stdout)
		}
	}
	md, err := os.ReadFile(filepath.Join(out, "select.md"))
	if err != nil || !strings.Contains(string(md), "## Emulated cards") {
		t.Errorf("select.md lacks the section (%v)", err)
	}
	raw, err := os.ReadFile(filepath.Join(out, "margins.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rows []plan.MarginRow
	if err := json.Unmarshal(raw, &rows); err != nil || len(rows) != 1 || rows[0].Measured != 4 || !rows[0].Reached {
		t.Errorf("margins.json: %v, %+v; want one card measured at 4", err, rows)
	}

	plain := t.TempDir()
	plantest.Write(t, plain, sizingFixture())
	code, stdout, _ = runCLI(t, "select", "-out", t.TempDir(), plain)
	if code != exitOK || strings.Contains(stdout, "Emulated cards") {
		t.Errorf("a run without an emulated card got the section (exit %d):\n%s", code, stdout)
	}
}
