package results

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	unicodeutf8 "unicode/utf8"

	"github.com/extractbench/extractbench"
)

// TestStore_ClientRowsAreNotMeasured: a request that failed in the client
// itself (transport kind client) is kept as a row but, like an interrupted
// one, read by no figure: not a done document (resume sends it again), not
// a record of its pass; the row sent again replaces it.
func TestStore_ClientRowsAreNotMeasured(t *testing.T) {
	ctx := context.Background()
	s, _ := MustOpen(t)
	if err := s.CreateRun(ctx, Run{RunID: "r", Fingerprint: "fp", ProtocolName: "p", Manifest: json.RawMessage(`{}`), StartedAt: 1, Status: RunRunning}); err != nil {
		t.Fatal(err)
	}
	key := extractbench.PassKey{RunID: "r", Variant: "v", Mode: "concurrency", Level: 1, Repetition: 1}
	ok, fault := testRecord(key, 0), testRecord(key, 4)
	fault.Transport = extractbench.Transport{Kind: extractbench.TransportClient, Detail: "dial tcp: socket: too many open files"}
	fault.Score = extractbench.Score{}
	s.Add(ok)
	s.Add(fault)
	done, err := s.DoneDocs(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if !done.Has(ok.DocID) || done.Has(fault.DocID) {
		t.Errorf("done documents: %s %v, %s %v; want only the measured one", ok.DocID, done.Has(ok.DocID), fault.DocID, done.Has(fault.DocID))
	}
	recs, err := s.PassRecords(ctx, key)
	if err != nil || len(recs) != 1 {
		t.Fatalf("PassRecords = %d records, %v; want the measured one", len(recs), err)
	}
	again := testRecord(key, 4)
	s.Add(again)
	if recs, err = s.PassRecords(ctx, key); err != nil || len(recs) != 2 || recs[1].Kind != again.Kind {
		t.Errorf("after sending it again: %d records, %v; want the client row replaced", len(recs), err)
	}
}

// TestExport_InvalidUTF8Stored is item 9's belt in the store: whatever
// bytes a record's texts hold, requests.parquet is valid UTF-8 (DuckDB
// refuses it otherwise).
func TestExport_InvalidUTF8Stored(t *testing.T) {
	ctx := context.Background()
	s, dir := MustOpen(t)
	if err := s.CreateRun(ctx, Run{RunID: "r", Fingerprint: "fp", ProtocolName: "p", Manifest: json.RawMessage(`{}`), StartedAt: 1, Status: RunComplete}); err != nil {
		t.Fatal(err)
	}
	key := extractbench.PassKey{RunID: "r", Variant: "v", Mode: "concurrency", Level: 1, Repetition: 1}
	const bad = "ok \xff\xfe\xc3\x28 \xe2\x82"
	r := testRecord(key, 2)
	r.Output, r.ErrorBody, r.Detail, r.FinishReason, r.FailureDetail = bad, bad, bad, bad, bad
	s.Add(r)
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := Export(ctx, dir); err != nil {
		t.Fatal(err)
	}
	sch, rows := readParquet(t, filepath.Join(dir, RequestsParquet))
	checked := 0
	for _, row := range rows {
		for j, v := range row {
			if s, ok := v.(string); ok {
				checked++
				if !unicodeutf8.ValidString(s) {
					t.Errorf("column %s = %q: not valid UTF-8", sch.Field(j).Name, s)
				}
			}
		}
	}
	if checked < 5 {
		t.Errorf("%d strings read back, want the record's texts", checked)
	}
}
