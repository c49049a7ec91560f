package report

import (
	"context"
	"fmt"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/results"
)

// excerptBytes bounds the output text kept for a failed document: the
// report shows an excerpt, and a run can hold thousands of failures.
const excerptBytes = 600

// requestRow is one request as the report shows it: its latencies and
// outcome, and an excerpt of a failed one's output.
type requestRow struct {
	Variant                              string
	Mode                                 extractbench.Mode
	Level, Repetition                    int
	DocID, LengthClass                   string
	TTFT, E2E, E2ESched, ClientQueue     *int64
	PromptTokens, CompletionTokens       *int64
	HTTPStatus                           *int64
	FinishReason, Failure, FailureDetail string
	Accepted                             bool
	Output                               string // the first excerptBytes of a failed request's output (or error body); "" otherwise
}

// requestRowOf derives the report's view of one stored record.
func requestRowOf(r extractbench.Record) requestRow {
	span := func(ns int64, ok bool) *int64 {
		if !ok {
			return nil
		}
		return &ns
	}
	row := requestRow{Variant: r.Variant, Mode: r.Mode, Level: r.Level, Repetition: r.Repetition, DocID: r.DocID,
		LengthClass: r.LengthClass, TTFT: span(r.TTFT()), E2E: span(r.E2E()),
		E2ESched: span(r.E2ESched()), ClientQueue: span(r.ClientQueue()),
		PromptTokens: nonZero(int64(r.PromptTokens)), CompletionTokens: nonZero(int64(r.CompletionTokens)),
		HTTPStatus: nonZero(int64(r.HTTPStatus)), FinishReason: r.FinishReason, Failure: string(r.Failure), FailureDetail: r.FailureDetail, Accepted: r.Accepted}
	if r.Failure != extractbench.None {
		out := r.Output
		if out == "" {
			out = r.ErrorBody // a failure with no output (an OOM answer, a reset) shows the engine's error body
		}
		if len(out) > excerptBytes {
			out = out[:excerptBytes]
		}
		row.Output = out
	}
	return row
}

// sampleRow is one telemetry sample of one pass.
type sampleRow struct {
	extractbench.PassKey
	results.TelemetrySample
}

// dataset is everything the report reads from one results directory: the
// latest run as results reads it for every page, and what it shows of its
// requests, series by series (scan.go), never the requests themselves.
type dataset struct {
	*results.RunData
	Rows      map[[2]string]*seriesRows // by (variant, mode)
	Telemetry []sampleRow
}

// load reads the latest run of dir/results.db through results' read-only
// reader.
func load(ctx context.Context, dir string) (*dataset, error) {
	rd, err := results.OpenReadOnly(ctx, dir)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	run, err := rd.Load(ctx)
	if err != nil {
		return nil, err
	}
	d := &dataset{RunData: run, Rows: map[[2]string]*seriesRows{}}
	for _, es := range run.Series() {
		k := [2]string{es.Variant, string(es.Mode)}
		if d.Rows[k] != nil {
			continue
		}
		if d.Rows[k], err = scanSeries(ctx, rd, run, es); err != nil {
			return nil, err
		}
	}
	if d.Telemetry, err = loadTelemetry(ctx, rd, run); err != nil {
		return nil, err
	}
	return d, nil
}

// keyOf names a pass.
func keyOf(p extractbench.Pass) extractbench.PassKey {
	return extractbench.PassKey{RunID: p.RunID, Variant: p.Variant, Mode: p.Mode, Level: p.Level, Repetition: p.Repetition}
}

// loadTelemetry reads the timeline samples of the heaviest pass of each
// variant and mode, and only those: a run sampled every 100 ms holds
// hundreds of thousands of samples the report never draws.
func loadTelemetry(ctx context.Context, rd *results.Reader, run *results.RunData) ([]sampleRow, error) {
	has, err := rd.TelemetryPasses(ctx, run.Run.RunID)
	if err != nil {
		return nil, err
	}
	var out []sampleRow
	seen := map[[2]string]bool{}
	for _, p := range run.Passes {
		if seen[[2]string{p.Variant, string(p.Mode)}] {
			continue
		}
		seen[[2]string{p.Variant, string(p.Mode)}] = true
		k, ok := heaviest(run.Passes, p.Variant, p.Mode, has)
		if !ok {
			continue
		}
		samples, err := rd.Telemetry(ctx, k, timelineMetricNames()...)
		if err != nil {
			return nil, fmt.Errorf("read telemetry of %s %s %d repetition %d: %w", k.Variant, k.Mode, k.Level, k.Repetition, err)
		}
		for _, s := range samples {
			out = append(out, sampleRow{PassKey: k, TelemetrySample: s})
		}
	}
	return out, nil
}

func nonZero(v int64) *int64 {
	if v == 0 {
		return nil
	}
	return &v
}
