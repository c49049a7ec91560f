package resultstest_test

import (
	"context"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/results"
	"github.com/extractbench/extractbench/results/resultstest"
)

func TestLike(t *testing.T) {
	for _, tt := range []struct {
		s, pattern string
		want       bool
	}{
		{"pass at level 1, repetition 1: usage", "pass at level 1, repetition 1: %", true},
		{"pass at level 2, repetition 1: usage", "pass at level 1, repetition 1: %", false},
		{"took over pid 999999 (gone)", "%pid 999999%", true},
		{"level 2: the second TYPE line", "%level 2%second TYPE line%", true},
		{"the second TYPE line at level 2", "%level 2%second TYPE line%", false},
		{"CUDA Out Of Memory", "%cuda out of memory%", true}, // ASCII letters match either case
		{"abc", "a_c", true},
		{"ac", "a_c", false},
		{"", "%", true},
		{"x", "", false},
	} {
		if got := resultstest.Like(tt.s, tt.pattern); got != tt.want {
			t.Errorf("Like(%q, %q) = %v, want %v", tt.s, tt.pattern, got, tt.want)
		}
	}
}

// fixture is one run of two documents at level 1, the second interrupted
// (unmeasured), and a pass whose peak_kv_usage is NULL.
func fixture(t *testing.T) string {
	dir := t.TempDir()
	key := extractbench.PassKey{Variant: "v", Mode: extractbench.ModeConcurrency, Level: 1, Repetition: 1}
	rec := func(id string, kind extractbench.TransportKind) extractbench.Record {
		return extractbench.Record{Variant: "v", Mode: key.Mode, Level: 1, Repetition: 1, DocID: id, LengthClass: "short",
			Response: extractbench.Response{Timings: extractbench.Timings{SchedNS: 1, SendNS: 2, FirstTokenNS: 5, DoneNS: 9}, Transport: extractbench.Transport{Kind: kind}}}
	}
	running := int64(3)
	resultstest.Write(t, dir, resultstest.Run{RunID: "r1",
		Records: []extractbench.Record{rec("d1", extractbench.TransportOK), rec("d2", extractbench.TransportInterrupted)},
		Passes: []extractbench.Pass{{Variant: "v", Mode: key.Mode, Level: 1, Repetition: 1, Phase: extractbench.PhaseBaseline, Attempt: 1,
			Status: extractbench.PassComplete, Docs: 1, ObservedMaxRunning: &running}},
		Telemetry: append(resultstest.TelemetryOf(key, results.TelemetrySample{TNS: 1, Metric: "vllm:num_requests_running", Value: 1, Endpoint: "http://a"}),
			resultstest.TelemetryOf(key, results.TelemetrySample{TNS: 1, Metric: "vllm:num_requests_running", Value: 2, Endpoint: "http://b"})...),
		Events:    []results.Event{{AtMS: 1, Kind: results.EventEngineLoad, ValueNS: 7}},
		Decisions: []results.Decision{{AtMS: 2, Kind: results.DecisionSkipLevel, FromLevel: 2, Reason: "because"}},
	})
	return dir
}

// TestRequests_Unmeasured: the rows a run wrote, the unmeasured ones
// included, which the readers of figures leave out.
func TestRequests_Unmeasured(t *testing.T) {
	dir := fixture(t)
	got := resultstest.Requests(t, dir)
	if len(got) != 2 || got[0].DocID != "d1" || got[1].Kind != extractbench.TransportInterrupted {
		t.Fatalf("Requests = %+v, want d1 and the interrupted d2 in stored order", got)
	}
	rd, err := results.OpenReadOnly(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	measured, err := rd.Requests(context.Background(), "r1", results.RequestFilter{})
	if err != nil || len(measured) != 1 {
		t.Fatalf("Reader.Requests = %d rows (%v), want the 1 measured", len(measured), err)
	}
	if n, ok := resultstest.RequestCount(dir); !ok || n != 2 {
		t.Errorf("RequestCount = %d, %v; want 2, true", n, ok)
	}
	if _, ok := resultstest.RequestCount(t.TempDir()); ok {
		t.Error("RequestCount of a directory without results.db is ok")
	}
	if got := resultstest.Duplicates(append(got, got[0])); got != 1 {
		t.Errorf("Duplicates = %d, want 1", got)
	}
}

// TestReaders: every table reads back as written, telemetry one row per
// endpoint (not folded), a NULL column as nil.
func TestReaders(t *testing.T) {
	dir := fixture(t)
	tel := resultstest.Telemetry(t, dir)
	if len(tel) != 2 || tel[0].Endpoint != "http://a" || tel[1].Value != 2 || tel[1].Level != 1 {
		t.Errorf("Telemetry = %+v, want one row per endpoint", tel)
	}
	if es := resultstest.Events(t, dir); len(es) != 1 || es[0].ValueNS != 7 {
		t.Errorf("Events = %+v", es)
	}
	if ds := resultstest.Decisions(t, dir); len(ds) != 1 || ds[0].FromLevel != 2 || ds[0].Reason != "because" {
		t.Errorf("Decisions = %+v", ds)
	}
	if rs := resultstest.Runs(t, dir); len(rs) != 1 || rs[0].Status != results.RunComplete || rs[0].Fingerprint != "fp-r1" {
		t.Errorf("Runs = %+v", rs)
	}
	ps := resultstest.Passes(t, dir)
	if len(ps) != 1 {
		t.Fatalf("Passes = %+v", ps)
	}
	if v := resultstest.Column(t, ps[0], "peak_kv_usage"); v != nil {
		t.Errorf("peak_kv_usage = %v, want nil (NULL)", v)
	}
	if v := resultstest.Column(t, ps[0], "observed_max_running"); v != int64(3) {
		t.Errorf("observed_max_running = %#v, want int64 3", v)
	}
	if v := resultstest.Column(t, ps[0], results.FailureColumn(extractbench.Memory)); v != int64(0) {
		t.Errorf("failures_memory = %#v, want int64 0", v)
	}
	if _, ok := results.PassColumn(&ps[0], "no_such_column"); ok {
		t.Error("PassColumn knows no_such_column")
	}
}

// TestTamper: each edit changes the rows it names, on a copy.
func TestTamper(t *testing.T) {
	dir := fixture(t)
	bad := resultstest.CopyDir(t, dir, "bad")
	resultstest.Tamper(t, bad, resultstest.SetFailure(resultstest.Row{Level: 1}, extractbench.Quality), resultstest.SetDocID(resultstest.Row{Level: 1}, "other"))
	got := resultstest.Requests(t, bad)
	if len(got) != 2 || got[0].DocID != "other" || got[0].Failure != extractbench.Quality {
		t.Errorf("tampered rows = %+v, want d1 renamed other and classed quality", got)
	}
	resultstest.Tamper(t, bad, resultstest.DeleteRequests(1, 1))
	if got := resultstest.Requests(t, bad); len(got) != 1 {
		t.Errorf("%d rows after deleting one of 2", len(got))
	}
	resultstest.Tamper(t, bad, resultstest.DeletePass(1))
	if n := len(resultstest.Passes(t, bad)) + len(resultstest.Requests(t, bad)); n != 0 {
		t.Errorf("%d rows after deleting the pass", n)
	}
	if got := resultstest.Requests(t, dir); len(got) != 2 || got[0].DocID != "d1" {
		t.Errorf("the original changed: %+v", got)
	}
}
