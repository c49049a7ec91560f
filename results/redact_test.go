package results

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/extractbench/extractbench"
)

const secretKey = "sk-test-4f9a1c2e8b7d6e5f/0a1b+2c3d"

// escapeAll JSON-escapes every character of s as \uXXXX, with hex digits
// in the given case.
func escapeAll(s, hexFormat string) string {
	var b strings.Builder
	for _, r := range s {
		fmt.Fprintf(&b, `\u`+hexFormat, r)
	}
	return b.String()
}

// TestStore_SetSecrets: whatever the client let through, the store writes
// no secret: not in a request's texts, an event, a decision or a manifest.
func TestStore_SetSecrets(t *testing.T) {
	ctx := context.Background()
	st, _ := MustOpen(t)
	st.SetSecrets(NewSecrets(secretKey))
	escaped := escapeAll(secretKey, "%04x")
	manifest, _ := json.Marshal(map[string]string{"about": secretKey, "other": "kept"})
	if err := st.CreateRun(ctx, Run{RunID: testKey.RunID, Fingerprint: "f", ProtocolName: "p", Status: "running", Manifest: manifest}); err != nil {
		t.Fatal(err)
	}
	rec := testRecord(testKey, 0)
	rec.Output = `{"date":null,"amount":null,"category":"` + secretKey + `"}`
	rec.ErrorBody = `{"error":{"message":"bad key ` + escaped + `"}}`
	rec.Detail, rec.FailureDetail = "HTTP 401: "+secretKey, "echo "+secretKey
	cat := secretKey
	rec.Prediction.Category = &cat
	rec.Score.Fields = testFields(rec.Score)
	rec.Score.Fields[2].Got, rec.Score.Fields[2].Reason = `"`+secretKey+`"`, "got "+secretKey
	st.Add(rec)
	if err := st.AddEvent(ctx, Event{RunID: testKey.RunID, Kind: "engine_exit", Detail: "log tail: " + secretKey}); err != nil {
		t.Fatal(err)
	}
	if err := st.AddDecision(ctx, Decision{RunID: testKey.RunID, Variant: "ref", Kind: "stop", Reason: "because " + secretKey}); err != nil {
		t.Fatal(err)
	}
	if err := st.UpdateManifest(ctx, testKey.RunID, json.RawMessage(`{"url":"`+escaped+`"}`)); err != nil {
		t.Fatal(err)
	}
	recs, err := st.PassRecords(ctx, testKey)
	if err != nil || len(recs) != 1 {
		t.Fatalf("PassRecords = %d, %v", len(recs), err)
	}
	r := recs[0]
	events, _ := st.Events(ctx, testKey.RunID)
	decisions, _ := st.Decisions(ctx, testKey.RunID)
	runs, _ := st.Runs(ctx)
	if len(events) != 1 || len(decisions) != 1 || len(runs) != 1 {
		t.Fatalf("%d events, %d decisions, %d runs; want one of each", len(events), len(decisions), len(runs))
	}
	for name, got := range map[string]string{"output": r.Output, "error_body": r.ErrorBody, "transport_detail": r.Detail,
		"failure_detail": r.FailureDetail, "pred_category": *r.Prediction.Category,
		"request_fields got": r.Score.Fields[2].Got, "request_fields reason": r.Score.Fields[2].Reason,
		"event detail": events[0].Detail, "decision reason": decisions[0].Reason, "manifest": string(runs[0].Manifest)} {
		if strings.Contains(got, secretKey) || strings.Contains(got, escaped) || !strings.Contains(got, Redacted) {
			t.Errorf("%s = %q, want the key redacted", name, got)
		}
	}
}

// TestStore_NULStoredWhole is issue 40 item 8: an error body with NUL bytes
// was stored raw, and SQLite's length() (like any C reader) stopped at the
// first NUL: a 23-byte body read as 1 character. A NUL is stored as the
// text \u0000.
func TestStore_NULStoredWhole(t *testing.T) {
	ctx := context.Background()
	st, _ := MustOpen(t)
	rec := testRecord(testKey, 0)
	rec.ErrorBody = "x\x00internal\x00error"
	st.Add(rec)
	if _, err := st.PassRecords(ctx, testKey); err != nil {
		t.Fatal(err)
	}
	var n int
	var body string
	if err := st.rdb.QueryRowContext(ctx, `SELECT length(error_body), error_body FROM requests`).Scan(&n, &body); err != nil {
		t.Fatal(err)
	}
	if want := `x\u0000internal\u0000error`; body != want || n != len(want) {
		t.Errorf("error_body %q, length() %d; want %q, %d", body, n, want, len(want))
	}
}

// TestUnmeasured_Kinds: the SQL condition of the rows that are no
// measurement names exactly the kinds extractbench.Unmeasured lists.
func TestUnmeasured_Kinds(t *testing.T) {
	for _, k := range extractbench.Unmeasured {
		if !strings.Contains(unmeasured, "'"+string(k)+"'") {
			t.Errorf("unmeasured %s leaves out %q", unmeasured, k)
		}
	}
	if n := strings.Count(unmeasured, "'") / 2; n != len(extractbench.Unmeasured) {
		t.Errorf("unmeasured names %d kinds, extractbench.Unmeasured %d", n, len(extractbench.Unmeasured))
	}
}
