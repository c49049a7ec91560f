package progress

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/pipeline"
)

// TestTerminal_Label: each pass names its place, variant, level in the
// sweep's words and repetition.
func TestTerminal_Label(t *testing.T) {
	base := pipeline.PassStart{Place: 3, Planned: 8, Variant: "bf16", Repetition: 1, Repetitions: 2}
	tests := []struct {
		name  string
		mode  extractbench.Mode
		phase string
		level int
		want  string
	}{
		{"concurrency", extractbench.ModeConcurrency, extractbench.PhaseSweep, 4, "pass 3/8  bf16  concurrency 4  rep 1/2"},
		{"batch", extractbench.ModeBatch, extractbench.PhaseSweep, 8, "pass 3/8  bf16  batch 8  rep 1/2"},
		{"rate sync", extractbench.ModeRate, extractbench.PhaseBaseline, extractbench.SyncLevel, "pass 3/8  bf16  rate sync  rep 1/2"},
		{"rate", extractbench.ModeRate, extractbench.PhaseSweep, 5, "pass 3/8  bf16  rate 5/s  rep 1/2"},
		{"probe", extractbench.ModeRate, extractbench.PhaseProbe, 90, "pass 3/8  bf16  rate 90/s (saturation probe)  rep 1/2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := base
			p.Mode, p.Phase, p.Level = tt.mode, tt.phase, tt.level
			if got := label(p); got != tt.want {
				t.Errorf("label = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestTerminal_PlainLines: off a terminal a pass prints its start (with
// what a resume found recorded), a line per Interval and its end, and
// nothing that redraws.
func TestTerminal_PlainLines(t *testing.T) {
	old := Interval
	Interval = 0
	t.Cleanup(func() { Interval = old })
	tests := []struct {
		name     string
		complete bool
		want     []string
	}{
		{"done", true, []string{
			`^pass 1/1  v  concurrency 2  rep 1/1  started: 3 documents \(1 already recorded\)\n`,
			`(?m)^pass 1/1  v  concurrency 2  rep 1/1  accepted 1  2/3  [\d.]+ doc/s  elapsed \S+  left ~\S+$`,
			`(?m)^pass 1/1  v  concurrency 2  rep 1/1  accepted 1 format 1  done 3/3  [\d.]+ doc/s in \S+$`,
		}},
		{"stopped", false, []string{`(?m)^pass 1/1  v  concurrency 2  rep 1/1  accepted 1  stopped 2/3`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var w bytes.Buffer
			p := New(&w).Pass(&w, pipeline.PassStart{Place: 1, Planned: 1, Variant: "v", Mode: extractbench.ModeConcurrency,
				Level: 2, Repetition: 1, Repetitions: 1, Total: 3, Already: 1})
			p.Add(extractbench.Record{Score: extractbench.Score{Accepted: true}})
			if tt.complete {
				p.Add(extractbench.Record{Score: extractbench.Score{Failure: extractbench.Format}})
			}
			p.Finish(tt.complete)
			for _, re := range tt.want {
				if !regexp.MustCompile(re).MatchString(w.String()) {
					t.Errorf("no line matches %s:\n%s", re, w.String())
				}
			}
			if strings.Contains(w.String(), "\r") {
				t.Errorf("a redraw off a terminal:\n%q", w.String())
			}
		})
	}
}

// TestTerminal_LogOffTerminal: a log line off a terminal is written as it
// is, however long.
func TestTerminal_LogOffTerminal(t *testing.T) {
	var w bytes.Buffer
	line := strings.Repeat("word ", 40) + "\n"
	New(&w).Log(&w, line)
	if w.String() != line {
		t.Errorf("Log wrote %q, want %q", w.String(), line)
	}
}

// TestWrapText: a line wider than the terminal breaks at a space, its
// continuation indented by two more.
func TestWrapText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"short\n", "short\n"},
		{"aaa bbb ccc\n", "aaa bbb\n  ccc\n"},
		{"  aa bb cc\n", "  aa bb\n    cc\n"},
	}
	for _, tt := range tests {
		if got := WrapText(tt.in, 8); got != tt.want {
			t.Errorf("WrapText(%q, 8) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
