package results

import (
	"context"
	"encoding/json"
	"testing"
)

// TestStore_DiscardRun: a run that recorded no request and no pass is
// removed with its events and decisions; a run that measured anything is
// never removed, nor are the other runs' rows.
func TestStore_DiscardRun(t *testing.T) {
	ctx := context.Background()
	s, _ := MustOpen(t)
	for _, id := range []string{testKey.RunID, "empty"} {
		if err := s.CreateRun(ctx, Run{RunID: id, Fingerprint: "fp", ProtocolName: "p", Manifest: json.RawMessage(`{}`), Status: RunRunning}); err != nil {
			t.Fatal(err)
		}
		if err := s.AddEvent(ctx, Event{RunID: id, AtMS: 1, Kind: EventVariantFail, Detail: "model not served"}); err != nil {
			t.Fatal(err)
		}
	}
	s.Add(testRecord(testKey, 1))
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if discarded, left, err := s.DiscardRun(ctx, testKey.RunID); err != nil || discarded || left != 2 {
		t.Errorf("DiscardRun of a run with a request = %v, %d runs left, %v; want kept, 2", discarded, left, err)
	}
	if discarded, left, err := s.DiscardRun(ctx, "empty"); err != nil || !discarded || left != 1 {
		t.Errorf("DiscardRun of a run that measured nothing = %v, %d runs left, %v; want removed, 1", discarded, left, err)
	}
	runs, err := s.Runs(ctx)
	if err != nil || len(runs) != 1 || runs[0].RunID != testKey.RunID {
		t.Errorf("runs after discarding = %+v, %v; want only %s", runs, err, testKey.RunID)
	}
	if es, err := s.Events(ctx, "empty"); err != nil || len(es) != 0 {
		t.Errorf("events of the discarded run = %+v, %v; want none", es, err)
	}
	if es, err := s.Events(ctx, testKey.RunID); err != nil || len(es) != 1 {
		t.Errorf("events of the kept run = %+v, %v; want its one", es, err)
	}
}
