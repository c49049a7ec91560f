// Package resultstest gives the tests of every package typed rows of a
// results directory, read through results' own readers, so that no test
// but results' speaks SQL: Requests, Passes, Events, Decisions, Telemetry
// and Runs read every run of a directory; Count, Where and Like filter them
// as the SQL of the tests did; tamper.go changes a results.db behind its
// run's back, as someone with sqlite3 would.
package resultstest

import (
	"context"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/results"
)

// read opens dir read-only, calls fn with each run (oldest first) and closes it.
func read(t testing.TB, dir string, fn func(rd *results.Reader, run results.Run) error) {
	t.Helper()
	ctx := context.Background()
	rd, err := results.OpenReadOnly(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	runs, err := rd.Runs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, run := range runs {
		if err := fn(rd, run); err != nil {
			t.Fatal(err)
		}
	}
}

// Requests returns every requests row of every run in dir, in stored order,
// the unmeasured ones (transport_kind interrupted or client) included.
// The derived columns are the record's methods: ttft_ns is TTFT, e2e_ns
// E2E, tpot_ns TPOT; a NULL count is 0 (prompt_tokens NULL is
// PromptTokens 0), a NULL text "".
func Requests(t testing.TB, dir string) []extractbench.Record {
	t.Helper()
	var out []extractbench.Record
	read(t, dir, func(rd *results.Reader, run results.Run) error {
		recs, err := rd.AllRequests(context.Background(), run.RunID)
		out = append(out, recs...)
		return err
	})
	return out
}

// Passes returns every passes row of every run in dir.
func Passes(t testing.TB, dir string) []extractbench.Pass {
	t.Helper()
	var out []extractbench.Pass
	read(t, dir, func(rd *results.Reader, run results.Run) error {
		ps, err := rd.Passes(context.Background(), run.RunID)
		out = append(out, ps...)
		return err
	})
	return out
}

// Events returns every events row of every run in dir, in the order they happened.
func Events(t testing.TB, dir string) []results.Event {
	t.Helper()
	var out []results.Event
	read(t, dir, func(rd *results.Reader, run results.Run) error {
		es, err := rd.Events(context.Background(), run.RunID)
		out = append(out, es...)
		return err
	})
	return out
}

// Decisions returns every decisions row of every run in dir, in the order they were made.
func Decisions(t testing.TB, dir string) []results.Decision {
	t.Helper()
	var out []results.Decision
	read(t, dir, func(rd *results.Reader, run results.Run) error {
		ds, err := rd.Decisions(context.Background(), run.RunID)
		out = append(out, ds...)
		return err
	})
	return out
}

// Telemetry returns every telemetry row of every run in dir: one sample
// of one endpoint (Endpoint "" for NULL), not folded over replicas.
func Telemetry(t testing.TB, dir string) []results.TelemetryRow {
	t.Helper()
	var out []results.TelemetryRow
	read(t, dir, func(rd *results.Reader, run results.Run) error {
		ss, err := rd.TelemetryRows(context.Background(), run.RunID)
		out = append(out, ss...)
		return err
	})
	return out
}

// Runs returns every runs row in dir, oldest first.
func Runs(t testing.TB, dir string) []results.Run {
	t.Helper()
	var out []results.Run
	read(t, dir, func(_ *results.Reader, run results.Run) error {
		out = append(out, run)
		return nil
	})
	return out
}

// Manifest returns the decoded manifest of the latest run in dir.
func Manifest(t testing.TB, dir string) extractbench.Manifest {
	t.Helper()
	data, err := results.LoadRun(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return data.Manifest
}

// Column returns the passes column named column of p: nil for NULL, else
// its value (int64, float64, string, bool...). An unknown name fails t.
func Column(t testing.TB, p extractbench.Pass, column string) any {
	t.Helper()
	v, ok := results.PassColumn(&p, column)
	if !ok {
		t.Fatalf("passes has no column %q", column)
	}
	return v
}

// RequestCount is how many requests rows dir's results.db holds, read
// while another process may be writing it; ok is false when it cannot be
// read (not created yet, or no extractbench tables yet).
func RequestCount(dir string) (n int, ok bool) {
	ctx := context.Background()
	rd, err := results.OpenReadOnly(ctx, dir)
	if err != nil {
		return 0, false
	}
	defer rd.Close()
	runs, err := rd.Runs(ctx)
	if err != nil {
		return 0, false
	}
	for _, run := range runs {
		recs, err := rd.AllRequests(ctx, run.RunID)
		if err != nil {
			return 0, false
		}
		n += len(recs)
	}
	return n, true
}

// Duplicates is how many (pass, document) pairs have more than one
// requests row: 0 in a run that wrote each document of each pass once.
func Duplicates(reqs []extractbench.Record) int {
	type key struct {
		pass extractbench.PassKey
		doc  string
	}
	seen := map[key]int{}
	n := 0
	for _, r := range reqs {
		k := key{extractbench.PassKeyOf(r), r.DocID}
		if seen[k]++; seen[k] == 2 {
			n++
		}
	}
	return n
}
