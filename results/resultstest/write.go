package resultstest

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/results"
)

// Run is the content of one run of a results directory a test builds:
// its runs row, requests, passes, telemetry, events and decisions. Write
// stores it through the results store, so that a fixture follows the
// schema, the writer's derived columns and the migrations exactly.
type Run struct {
	RunID        string
	Fingerprint  string // "" = "fp-" + RunID
	ProtocolName string // "" = "fixture"
	// Manifest is encoded as JSON (a map, an extractbench.Manifest or
	// json.RawMessage); nil stores {}.
	Manifest      any
	StartedAt     int64  // Unix ms; 0 = 1_700_000_000_000
	EndedAt       int64  // Unix ms; 0 = unset
	Status        string // "" = complete
	Simulated     bool
	ClockOriginNS int64

	Records []extractbench.Record // RunID set to the run's
	Passes  []extractbench.Pass   // RunID set to the run's; put after every record
	// Stream, when set, is called after Records are stored, with put, which
	// stores one pass's records and then its row (RunID set to the run's):
	// a run of a million rows is then written holding one pass.
	Stream    func(put func(recs []extractbench.Record, p extractbench.Pass))
	Telemetry []results.TelemetryRow
	Events    []results.Event
	Decisions []results.Decision
	// Sealed seals the run (its digests), as a complete run leaves it.
	Sealed bool
}

// Write creates (or opens) dir/results.db and stores the runs in order.
// It fails the test on any error.
func Write(tb testing.TB, dir string, runs ...Run) {
	tb.Helper()
	ctx := context.Background()
	st, err := results.Open(ctx, dir)
	if err != nil {
		tb.Fatalf("open fixture store %s: %v", dir, err)
	}
	defer st.Close()
	for _, run := range runs {
		write(tb, ctx, st, run)
	}
	if err := st.Close(); err != nil {
		tb.Fatalf("close fixture store %s: %v", dir, err)
	}
}

func write(tb testing.TB, ctx context.Context, st *results.Store, run Run) {
	tb.Helper()
	manifest := json.RawMessage("{}")
	switch m := run.Manifest.(type) {
	case nil:
	case json.RawMessage:
		manifest = m
	default:
		b, err := json.Marshal(m)
		if err != nil {
			tb.Fatalf("encode fixture manifest: %v", err)
		}
		manifest = b
	}
	r := results.Run{RunID: run.RunID, Fingerprint: run.Fingerprint, ProtocolName: run.ProtocolName, Manifest: manifest,
		StartedAt: run.StartedAt, EndedAt: run.EndedAt, Status: run.Status, Simulated: run.Simulated, ClockOriginNS: run.ClockOriginNS}
	if r.Fingerprint == "" {
		r.Fingerprint = "fp-" + run.RunID
	}
	if r.ProtocolName == "" {
		r.ProtocolName = "fixture"
	}
	if r.Status == "" {
		r.Status = results.RunComplete
	}
	if r.StartedAt == 0 {
		r.StartedAt = 1_700_000_000_000
	}
	if err := st.CreateRun(ctx, r); err != nil {
		tb.Fatalf("create fixture run %s: %v", run.RunID, err)
	}
	for _, rec := range run.Records {
		rec.RunID = run.RunID
		st.Add(rec)
	}
	if err := st.Flush(ctx); err != nil {
		tb.Fatalf("flush fixture records of run %s: %v", run.RunID, err)
	}
	if run.Stream != nil {
		run.Stream(func(recs []extractbench.Record, p extractbench.Pass) {
			for _, rec := range recs {
				rec.RunID = run.RunID
				st.Add(rec)
			}
			if err := st.Flush(ctx); err != nil {
				tb.Fatalf("flush fixture records of run %s: %v", run.RunID, err)
			}
			p.RunID = run.RunID
			if err := st.PutPass(ctx, p); err != nil {
				tb.Fatalf("put fixture pass %s: %v", extractbench.PassKeyOf(recs[0]), err)
			}
		})
	}
	for _, p := range run.Passes {
		p.RunID = run.RunID
		if err := st.PutPass(ctx, p); err != nil {
			tb.Fatalf("put fixture pass %s: %v", extractbench.PassKey{RunID: run.RunID, Variant: p.Variant, Mode: p.Mode, Level: p.Level, Repetition: p.Repetition}, err)
		}
	}
	for i := 0; i < len(run.Telemetry); {
		key := run.Telemetry[i].PassKey
		key.RunID = run.RunID
		var samples []results.TelemetrySample
		for ; i < len(run.Telemetry) && sameKey(run.Telemetry[i].PassKey, key); i++ {
			samples = append(samples, run.Telemetry[i].TelemetrySample)
		}
		if err := st.AddTelemetry(ctx, key, samples); err != nil {
			tb.Fatalf("add fixture telemetry of pass %s: %v", key, err)
		}
	}
	for _, e := range run.Events {
		e.RunID = run.RunID
		if err := st.AddEvent(ctx, e); err != nil {
			tb.Fatalf("add fixture event %s: %v", e.Kind, err)
		}
	}
	for _, d := range run.Decisions {
		d.RunID = run.RunID
		if err := st.AddDecision(ctx, d); err != nil {
			tb.Fatalf("add fixture decision %s: %v", d.Kind, err)
		}
	}
	if run.Sealed {
		if err := st.SealRun(ctx, run.RunID); err != nil {
			tb.Fatalf("seal fixture run %s: %v", run.RunID, err)
		}
	}
}

// sameKey compares two pass keys but for the run.
func sameKey(a, b extractbench.PassKey) bool {
	a.RunID = b.RunID
	return a == b
}

// TelemetryOf returns samples as the telemetry rows of pass key, for Run.Telemetry.
func TelemetryOf(key extractbench.PassKey, samples ...results.TelemetrySample) []results.TelemetryRow {
	out := make([]results.TelemetryRow, len(samples))
	for i, s := range samples {
		out[i] = results.TelemetryRow{PassKey: key, TelemetrySample: s}
	}
	return out
}
