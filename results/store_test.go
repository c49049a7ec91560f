package results

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/extractbench/extractbench"
)

// MustOpen opens a store in a fresh temporary directory and closes it when
// the test ends.
func MustOpen(tb testing.TB) (*Store, string) {
	tb.Helper()
	dir := tb.TempDir()
	s, err := Open(context.Background(), dir)
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Errorf("Close: %v", err)
		}
	})
	return s, dir
}

func strp(s string) *string { return &s }
func i64p(v int64) *int64   { return &v }
func f64p(v float64) *float64 {
	return &v
}

var testKey = extractbench.PassKey{RunID: "run-1", Variant: "ref", Mode: "concurrency", Level: 4, Repetition: 2}

// testRecord returns the i-th record of a pass, varied so that every column
// sees values and NULLs: an accepted document, a truncation, a transport
// error that never got a byte, a format failure with a null prediction.
func testRecord(key extractbench.PassKey, i int) extractbench.Record {
	r := extractbench.Record{
		RunID: key.RunID, Variant: key.Variant, Mode: key.Mode, Level: key.Level, Repetition: key.Repetition,
		DocID: fmt.Sprintf("doc-%05d", i), LengthClass: []string{"short", "usual", "long"}[i%3],
	}
	base := int64(1_000_000 * (i + 1))
	r.Timings = extractbench.Timings{SchedNS: base, SendNS: base + 10, FirstByteNS: base + 500, FirstTokenNS: base + 900, LastTokenNS: base + 5000, DoneNS: base + 5100}
	r.PromptTokens, r.CompletionTokens, r.UsageReported = 300+i, 40, true
	r.FinishReason, r.HTTPStatus = "stop", 200
	r.Endpoint = []string{"http://10.0.0.1:8000", "http://10.0.0.2:8000", ""}[i%3] // "": a row written before schema version 6
	if i%2 == 0 {                                                                  // and nil: an engine that does not report its prompt cache
		cached := []int{0, 299 + i}[i/2%2]
		r.CachedPromptTokens = &cached
	}
	r.Output = fmt.Sprintf(`{"date": "2025-01-%02d", "amount": %d.50, "category": "rent"}`, i%28+1, i)
	switch i % 4 {
	case 0:
		r.Score = extractbench.Score{StrictParseOK: true, LenientParseOK: true, SchemaOK: true,
			Date: extractbench.TP, Amount: extractbench.TP, Category: extractbench.TN, Accepted: true,
			Prediction: extractbench.Prediction{Date: strp("2025-01-01"), Amount: strp(fmt.Sprintf("%d.50", i))}}
	case 1:
		r.FinishReason = "length"
		r.UsageReported = false
		r.Output = `{"date": "2025-`
		r.Score = extractbench.Score{Failure: extractbench.Truncation, FailureDetail: "finish_reason=length"}
	case 2:
		r.Timings = extractbench.Timings{SchedNS: base, SendNS: base + 10, DoneNS: base + 30_000_000}
		r.PromptTokens, r.CompletionTokens, r.HTTPStatus, r.FinishReason, r.Output = 0, 0, 0, "", ""
		r.Transport.Kind, r.Transport.Detail, r.EngineDied = extractbench.TransportRefused, "dial tcp: connection refused", true
		r.Score = extractbench.Score{Failure: extractbench.Memory, FailureDetail: "engine died"}
	case 3:
		r.HTTPStatus, r.Transport.Kind, r.ErrorBody = 200, extractbench.TransportOK, ""
		r.Score = extractbench.Score{StrictParseOK: false, LenientParseOK: true, SchemaOK: true,
			Date: extractbench.FPFN, Amount: extractbench.FN, Category: extractbench.FP, Failure: extractbench.Quality, FailureDetail: "date differs",
			Prediction: extractbench.Prediction{Date: strp("2025-02-01"), Category: strp("")}}
	}
	if i < testFieldDocs {
		r.Score.Fields = testFields(r.Score)
	}
	return r
}

// testFieldDocs is how many documents of a pass testRecord gives field
// scores (request_fields rows); the others are rows without, as a
// scorer before schema version 16 wrote them.
const testFieldDocs = 64

// testFields are the default fields' scores of s, as the scorer makes
// them: the result's counts, an unscored field whose value was expected
// counting FN.
func testFields(s extractbench.Score) []extractbench.FieldScore {
	type f struct {
		name          string
		res           extractbench.FieldResult
		expected, got string
	}
	var fields []extractbench.FieldScore
	for _, c := range []f{
		{"date", s.Date, `"2025-01-01"`, map[bool]string{true: `"2025-01-01"`, false: `"2025-02-01"`}[s.Date == extractbench.TP]},
		{"amount", s.Amount, `12.5`, map[bool]string{true: `12.5`, false: ""}[s.Amount == extractbench.TP]},
		{"category", s.Category, `null`, map[bool]string{true: `null`, false: `""`}[s.Category == extractbench.TN]},
	} {
		fs := extractbench.FieldScore{Name: c.name, Expected: c.expected, Got: c.got, Result: c.res}
		switch c.res {
		case extractbench.TP:
			fs.TP = 1
		case extractbench.FPFN:
			fs.FP, fs.FN, fs.Reason = 1, 1, c.name+" differs"
		case extractbench.FN:
			fs.FN, fs.Reason = 1, c.name+" missing"
		case extractbench.FP:
			fs.FP, fs.Reason = 1, c.name+" not expected"
		case extractbench.Unscored:
			fs.Got, fs.Reason = "", "not scored"
			if c.expected != "null" {
				fs.FN = 1
			}
		}
		fields = append(fields, fs)
	}
	return fields
}

func TestOpen_Migrations(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "nested", "results")
	for i := range 2 { // opening twice applies nothing the second time
		s, err := Open(ctx, dir)
		if err != nil {
			t.Fatalf("Open #%d: %v", i+1, err)
		}
		var v int
		if err := s.rdb.QueryRow(`PRAGMA user_version`).Scan(&v); err != nil {
			t.Fatal(err)
		}
		if got, want := v, len(migrations); got != want {
			t.Errorf("user_version after Open #%d = %d, want %d", i+1, got, want)
		}
		var mode string
		if err := s.rdb.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil {
			t.Fatal(err)
		}
		if mode != "wal" {
			t.Errorf("journal_mode = %q, want wal", mode)
		}
		if err := s.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
	}

	db, err := sql.Open("sqlite3", filepath.Join(dir, DBName))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(fmt.Sprintf(`PRAGMA user_version = %d`, len(migrations)+1)); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if s, err := Open(ctx, dir); err == nil {
		s.Close()
		t.Fatal("Open of a database with a newer user_version succeeded, want an error")
	} else if !strings.Contains(err.Error(), "newer") {
		t.Errorf("Open error = %v, want it to say the schema is newer", err)
	}
}

func TestStore_Runs(t *testing.T) {
	ctx := context.Background()
	s, _ := MustOpen(t)
	if r, err := s.LatestRun(ctx); err != nil || r != nil {
		t.Fatalf("LatestRun on an empty db = %v, %v; want nil, nil", r, err)
	}
	first := Run{RunID: "a", Fingerprint: "fp1", ProtocolName: "p", Manifest: json.RawMessage(`{"x":1}`),
		StartedAt: 1700000000000, Status: RunComplete, EndedAt: 1700000001000, Simulated: true, ClockOriginNS: 17e17}
	second := Run{RunID: "b", Fingerprint: "fp2", ProtocolName: "p", Manifest: json.RawMessage(`{"y":[1,2]}`),
		StartedAt: 1600000000000, Status: RunRunning} // older clock, created later: still the latest
	for _, r := range []Run{first, second} {
		if err := s.CreateRun(ctx, r); err != nil {
			t.Fatalf("CreateRun(%s): %v", r.RunID, err)
		}
	}
	if err := s.CreateRun(ctx, first); err == nil {
		t.Error("CreateRun of an existing run id succeeded, want an error")
	}
	if err := s.CreateRun(ctx, Run{RunID: "c", Status: "bogus"}); err == nil {
		t.Error("CreateRun with status bogus succeeded, want an error")
	}
	got, err := s.LatestRun(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(*got, second) {
		t.Errorf("LatestRun = %+v, want %+v", *got, second)
	}

	if err := s.SetRunStatus(ctx, "b", RunInterrupted, 1600000009000); err != nil {
		t.Fatal(err)
	}
	if err := s.UpdateManifest(ctx, "b", map[string]int{"gpu": 1}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetRunStatus(ctx, "nope", RunComplete, 1); err == nil {
		t.Error("SetRunStatus of a missing run succeeded, want an error")
	}
	runs, err := s.Runs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	second.Status, second.EndedAt, second.Manifest = RunInterrupted, 1600000009000, json.RawMessage(`{"gpu":1}`)
	if want := []Run{first, second}; !reflect.DeepEqual(runs, want) {
		t.Errorf("Runs = %+v\nwant %+v", runs, want)
	}
	// A resumed run goes back to running with no end time.
	if err := s.SetRunStatus(ctx, "b", RunRunning, 0); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.LatestRun(ctx); got.Status != RunRunning || got.EndedAt != 0 {
		t.Errorf("after resume: status %q ended_at %d, want running and 0", got.Status, got.EndedAt)
	}
}

func TestStore_AddFlush(t *testing.T) {
	ctx := context.Background()
	s, _ := MustOpen(t)
	const n = 10_000
	keys := []extractbench.PassKey{testKey, {RunID: "run-1", Variant: "q4", Mode: "concurrency", Level: 8, Repetition: 1}}
	var wg sync.WaitGroup
	for _, k := range keys { // two dispatchers at once, as two passes never are, but Add must not care
		wg.Go(func() {
			for i := range n / 2 {
				s.Add(testRecord(k, i))
			}
		})
	}
	wg.Wait()
	// The same (pass, doc) again, changed: the first row must stay.
	dup := testRecord(testKey, 7)
	dup.Output, dup.Accepted = "second attempt", true
	s.Add(dup)
	if err := s.Flush(ctx); err != nil {
		t.Fatalf("Flush: %v", err)
	}

	var rows, distinct int
	if err := s.rdb.QueryRow(`SELECT count(*), count(DISTINCT run_id||variant||mode||level||repetition||doc_id) FROM requests`).Scan(&rows, &distinct); err != nil {
		t.Fatal(err)
	}
	if rows != n || distinct != n {
		t.Errorf("requests has %d rows, %d distinct; want %d and %d", rows, distinct, n, n)
	}
	var out string
	if err := s.rdb.QueryRow(`SELECT output FROM requests WHERE variant = ? AND level = ? AND doc_id = ?`, testKey.Variant, testKey.Level, dup.DocID).Scan(&out); err != nil {
		t.Fatal(err)
	}
	if want := testRecord(testKey, 7).Output; out != want {
		t.Errorf("duplicate (pass, doc) replaced the first row: output %q, want %q", out, want)
	}
	done, err := s.DoneDocs(ctx, testKey)
	if err != nil {
		t.Fatal(err)
	}
	if done.Len() != n/2 || done.Has("doc-99999") || done.Has("") || done.Has("doc-0000") || done.Has("doc-000000") {
		t.Errorf("DoneDocs has %d docs, want the %d of the pass", done.Len(), n/2)
	}
	for i := range n {
		if id := fmt.Sprintf("doc-%05d", i); done.Has(id) != (i < n/2) {
			t.Errorf("DoneDocs.Has(%s) = %v, want %v", id, done.Has(id), i < n/2)
		}
	}
}

// TestStore_AddCommitsWithoutFlush checks the interval commit: a lone record
// reaches the database with no Flush.
func TestStore_AddCommitsWithoutFlush(t *testing.T) {
	s, _ := MustOpen(t)
	s.Add(testRecord(testKey, 0))
	for range 100 { // up to ~2 s at 20 ms, far beyond DefaultFlushInterval
		var n int
		if err := s.rdb.QueryRow(`SELECT count(*) FROM requests`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 1 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("a record added without Flush was never committed")
}

func TestStore_PassRecordsRoundTrip(t *testing.T) {
	ctx := context.Background()
	s, _ := MustOpen(t)
	var want []extractbench.Record
	for i := range 8 {
		r := testRecord(testKey, i)
		want = append(want, r)
		s.Add(r)
	}
	other := testKey
	other.Repetition = 3
	s.Add(testRecord(other, 99))            // another pass: not returned
	got, err := s.PassRecords(ctx, testKey) // flushes by itself
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("PassRecords returned %d records, want %d", len(got), len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("record %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}

	// Derived columns and NULLs, as SQL sees them.
	var ttft, e2e, tpot, queue sql.NullInt64
	var firstTok sql.NullInt64
	var dateOK sql.NullBool
	if err := s.rdb.QueryRow(`SELECT first_token_ns, ttft_ns, e2e_ns, tpot_ns, client_queue_ns, date_ok FROM requests WHERE doc_id = 'doc-00002' AND repetition = 2`).
		Scan(&firstTok, &ttft, &e2e, &tpot, &queue, &dateOK); err != nil {
		t.Fatal(err)
	}
	if firstTok.Valid || ttft.Valid || tpot.Valid || dateOK.Valid {
		t.Errorf("doc-00002 (no token, unscored): first_token %v ttft %v tpot %v date_ok %v, want all NULL", firstTok, ttft, tpot, dateOK)
	}
	if !e2e.Valid || e2e.Int64 != 30_000_000-10 || queue.Int64 != 10 {
		t.Errorf("doc-00002: e2e %v queue %v, want %d and 10", e2e, queue, 30_000_000-10)
	}
	if err := s.rdb.QueryRow(`SELECT ttft_ns, tpot_ns FROM requests WHERE doc_id = 'doc-00000' AND repetition = 2`).Scan(&ttft, &tpot); err != nil {
		t.Fatal(err)
	}
	if ttft.Int64 != 890 || tpot.Int64 != (5000-900)/39 {
		t.Errorf("doc-00000: ttft %d tpot %d, want 890 and %d", ttft.Int64, tpot.Int64, (5000-900)/39)
	}
}

func TestStore_Passes(t *testing.T) {
	ctx := context.Background()
	s, _ := MustOpen(t)
	p := extractbench.Pass{RunID: "run-1", Variant: "ref", Mode: "batch", Level: 8, Repetition: 1, Phase: extractbench.PhaseSweep, Attempt: 1,
		RequestedBatch: i64p(8), SentConcurrency: 8, BatchTransport: extractbench.TransportBarrier, Status: extractbench.PassComplete,
		StartedNS: i64p(100), EndedNS: i64p(2_000_000_100), DurationNS: 2_000_000_000,
		Docs: 300, Accepted: 290, UniqueIDs: 290,
		TTFTN: 300, TTFTP50NS: i64p(1), TTFTP90NS: i64p(2), TTFTP95NS: i64p(3), TTFTP99NS: i64p(4), TTFTMinNS: i64p(0), TTFTMaxNS: i64p(5),
		E2EN: 300, E2EP95NS: i64p(9), OutputTokens: 12000, UsageReportedShare: f64p(1), OutputTokensPerS: f64p(6000.5),
		DateF1: f64p(0.99), PeakKVUsage: f64p(0.875), PeakGPUMemBytes: i64p(80 << 30), Verdict: "usable", VerdictReason: "acceptance 96.7% ≥ 95%"}
	for i, f := range extractbench.Failures { // every class has its own column, generated from eval's list
		p.Failures.Add(f, int64(i+1))
	}
	if err := s.PutPass(ctx, p); err != nil {
		t.Fatal(err)
	}
	interrupted := extractbench.Pass{RunID: "run-1", Variant: "ref", Mode: "batch", Level: 1, Repetition: 1, Phase: extractbench.PhaseBaseline, Attempt: 1, Status: extractbench.PassInterrupted}
	if err := s.PutPass(ctx, interrupted); err != nil {
		t.Fatal(err)
	}
	if err := s.PutPass(ctx, extractbench.Pass{RunID: "run-1", Status: "half"}); err == nil {
		t.Error("PutPass with status half succeeded, want an error")
	}
	// Upsert: the same key again replaces the aggregates.
	p.Accepted, p.PeakTorchReservedBytes = 295, i64p(1<<30)
	if err := s.PutPass(ctx, p); err != nil {
		t.Fatal(err)
	}
	retry := p
	retry.Phase, retry.Attempt, retry.RetryOf, retry.Accepted = extractbench.PhaseRetry, 2, i64p(16), 1
	if err := s.PutPass(ctx, retry); err == nil {
		t.Error("PutPass of a retry over a planned pass succeeded, want an error")
	}
	got, err := s.Passes(ctx, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	if want := []extractbench.Pass{interrupted, p}; !reflect.DeepEqual(got, want) {
		t.Errorf("Passes =\n%+v\nwant\n%+v", got, want)
	}
	one, err := s.Pass(ctx, extractbench.PassKey{RunID: "run-1", Variant: "ref", Mode: "batch", Level: 8, Repetition: 1})
	if err != nil || one == nil || !reflect.DeepEqual(*one, p) {
		t.Errorf("Pass = %+v, %v; want %+v", one, err, p)
	}
	if none, err := s.Pass(ctx, testKey); none != nil || err != nil {
		t.Errorf("Pass of a missing key = %+v, %v; want nil, nil", none, err)
	}
	var bt, verdict sql.NullString
	var peak sql.NullInt64
	if err := s.rdb.QueryRow(`SELECT batch_transport, verdict, peak_gpu_mem_bytes FROM passes WHERE level = 1`).Scan(&bt, &verdict, &peak); err != nil {
		t.Fatal(err)
	}
	if bt.Valid || verdict.Valid || peak.Valid {
		t.Errorf("interrupted pass: batch_transport %v verdict %v peak %v, want NULL", bt, verdict, peak)
	}
}

func TestStore_DecisionsEventsTelemetry(t *testing.T) {
	ctx := context.Background()
	s, _ := MustOpen(t)
	ds := []Decision{
		{RunID: "run-1", Variant: "ref", Mode: "concurrency", AtMS: 10, Kind: DecisionRetryLower, FromLevel: 16, ToLevel: 12, Reason: "memory failure at 16"},
		{RunID: "run-1", Variant: "ref", AtMS: 20, Kind: DecisionSkipLevel, FromLevel: 32, Reason: "16 failed on memory"},
	}
	for _, d := range ds {
		if err := s.AddDecision(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	es := []Event{
		{RunID: "run-1", Variant: "ref", AtMS: 5, Kind: EventEngineLoad, ValueNS: 42e9},
		{RunID: "run-1", AtMS: 30, Kind: EventInterrupted, Detail: "signal: interrupt"},
	}
	for _, e := range es {
		if err := s.AddEvent(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.AddEvent(ctx, Event{RunID: "run-1"}); err == nil {
		t.Error("AddEvent without a kind succeeded, want an error")
	}
	gotD, err := s.Decisions(ctx, "run-1")
	if err != nil || !reflect.DeepEqual(gotD, ds) {
		t.Errorf("Decisions = %+v, %v; want %+v", gotD, err, ds)
	}
	gotE, err := s.Events(ctx, "run-1")
	if err != nil || !reflect.DeepEqual(gotE, es) {
		t.Errorf("Events = %+v, %v; want %+v", gotE, err, es)
	}
	samples := []TelemetrySample{{TNS: 1, Metric: "vllm:num_requests_running", Value: 3}, {TNS: 2, Metric: "vllm:kv_cache_usage_perc", Value: 0.5}}
	if err := s.AddTelemetry(ctx, testKey, samples); err != nil {
		t.Fatal(err)
	}
	var n int
	var sum float64
	if err := s.rdb.QueryRow(`SELECT count(*), sum(value) FROM telemetry WHERE run_id = ? AND level = ?`, testKey.RunID, testKey.Level).Scan(&n, &sum); err != nil {
		t.Fatal(err)
	}
	if n != 2 || sum != 3.5 {
		t.Errorf("telemetry: %d rows summing %v, want 2 and 3.5", n, sum)
	}
}

func TestStore_Closed(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s.Add(testRecord(testKey, 0))
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := s.Flush(ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("Flush after Close = %v, want ErrClosed", err)
	}
	if err := s.AddEvent(ctx, Event{RunID: "r", Kind: "k"}); !errors.Is(err, ErrClosed) {
		t.Errorf("AddEvent after Close = %v, want ErrClosed", err)
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	s2, _ := MustOpen(t)
	if err := s2.Flush(canceled); !errors.Is(err, context.Canceled) {
		t.Errorf("Flush(canceled) = %v, want context.Canceled", err)
	}
}

// TestStore_BatchErrorIsSticky checks that a failed batch is reported by every
// later Flush: its records are lost and the run must say so.
func TestStore_BatchErrorIsSticky(t *testing.T) {
	ctx := context.Background()
	s, _ := MustOpen(t)
	bad := testRecord(testKey, 0)
	bad.Failure = "exploded" // violates the CHECK on failure
	s.Add(bad)
	if err := s.Flush(ctx); err == nil || !strings.Contains(err.Error(), "doc-00000") {
		t.Fatalf("Flush after a bad record = %v, want an error naming the document", err)
	}
	s.Add(testRecord(testKey, 1))
	if err := s.Flush(ctx); err == nil {
		t.Error("second Flush forgot the failed batch")
	}
	s.errMu.Lock() // let Cleanup's Close pass
	s.err = nil
	s.errMu.Unlock()
}

// TestStore_AddAllocsPerRecord bounds the heap allocations of the ingest
// per record: one prepared statement of insertRows rows per 32 records,
// values bound as the driver takes them. A statement per record, with its
// arguments converted by database/sql, allocated 26.7 per record.
func TestStore_AddAllocsPerRecord(t *testing.T) {
	ctx := context.Background()
	s, _ := MustOpen(t)
	recs := benchRecords(1000)
	rep := 0
	allocs := testing.AllocsPerRun(5, func() {
		rep++
		for _, r := range recs {
			r.Repetition = rep // a new pass each time: every row is inserted
			s.Add(r)
		}
		if err := s.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}) / float64(len(recs))
	if allocs > 24 {
		t.Errorf("%.1f allocations per record, want at most 24", allocs)
	}
	t.Logf("%.1f allocations per record", allocs)
}

// TestStore_CheckpointsOffTheWriter checks that the writer's commits never
// checkpoint (its connection's wal_autocheckpoint is 0) and that the
// checkpointer copies the committed WAL into the database file meanwhile.
func TestStore_CheckpointsOffTheWriter(t *testing.T) {
	ctx := context.Background()
	s, dir := MustOpen(t)
	var auto int
	if err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `PRAGMA wal_autocheckpoint`).Scan(&auto)
	}); err != nil {
		t.Fatal(err)
	}
	if auto != 0 {
		t.Errorf("the writer's wal_autocheckpoint is %d pages: its commits checkpoint", auto)
	}
	for i := range 3 * checkpointRecords {
		s.Add(testRecord(testKey, i))
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, DBName)
	for range 250 { // up to ~5 s at 20 ms
		if fi, err := os.Stat(db); err == nil && fi.Size() > 1<<20 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	fi, _ := os.Stat(db)
	t.Fatalf("%s holds %d bytes after %d records: the WAL was never checkpointed", DBName, fi.Size(), 3*checkpointRecords)
}

// TestStore_StatementJournalInMemory checks that the writer keeps its
// statement journals in memory (temp_store MEMORY): on disk, every
// multi-row INSERT of records wrote and threw away a temporary file as
// large as its share of the WAL.
func TestStore_StatementJournalInMemory(t *testing.T) {
	ctx := context.Background()
	s, _ := MustOpen(t)
	var store int
	if err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `PRAGMA temp_store`).Scan(&store)
	}); err != nil {
		t.Fatal(err)
	}
	if store != 2 {
		t.Errorf("the writer's temp_store is %d, want 2 (MEMORY): its statement journals spill to files", store)
	}
}

// TestStoreEveryFailureClass stores a request of every class eval lists and
// reads it back, through the writer and through the read-only reader: a
// class added to extractbench.Failures is stored with no migration (the
// requests table has no CHECK on failure since migration 12).
func TestStoreEveryFailureClass(t *testing.T) {
	ctx := context.Background()
	s, dir := MustOpen(t)
	if err := s.CreateRun(ctx, Run{RunID: testKey.RunID, Fingerprint: "f", ProtocolName: "p", Manifest: []byte("{}"), Status: RunRunning}); err != nil {
		t.Fatal(err)
	}
	for i, f := range extractbench.Failures {
		r := testRecord(testKey, i)
		r.Accepted, r.Failure, r.FailureDetail = false, f, "test"
		s.Add(r)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatalf("store one request per failure class: %v", err)
	}
	rd, err := OpenReadOnly(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	recs, err := rd.Requests(ctx, testKey.RunID, RequestFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(extractbench.Failures) {
		t.Fatalf("read %d requests, want %d", len(recs), len(extractbench.Failures))
	}
	for i, f := range extractbench.Failures {
		if recs[i].Failure != f {
			t.Errorf("request %d: failure %q, want %q", i, recs[i].Failure, f)
		}
	}
}

// TestOpenReadOnly_OlderSchema: an older database is read through a migrated
// temporary copy and never written; a missing one names the directory.
func TestOpenReadOnly_OlderSchema(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, DBName)
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	// A database of schema version 3, as a binary of then left it: the
	// migrations up to it, whatever came later.
	if err := migrateTo(ctx, db, 3); err != nil {
		t.Fatalf("migrate to 3: %v", err)
	}
	if _, err := db.Exec(`INSERT INTO runs (run_id, fingerprint, protocol_name, manifest, started_at, status, simulated)
		VALUES ('old', 'f', 'p', '{"protocol_name":"p"}', 1, 'complete', 0)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	before, _ := os.ReadFile(path)
	run, err := LoadRun(ctx, dir)
	if err != nil {
		t.Fatalf("read a version-3 database: %v", err)
	}
	if run.Run.RunID != "old" || run.Manifest.ProtocolName != "p" {
		t.Errorf("got run %q protocol %q", run.Run.RunID, run.Manifest.ProtocolName)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Error("reading an older database wrote to it")
	}
	if _, err := LoadRun(ctx, t.TempDir()); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing results.db: got %v, want an error wrapping os.ErrNotExist", err)
	}
}
