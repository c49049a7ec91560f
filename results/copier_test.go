package results

import (
	"context"
	"reflect"
	"testing"

	"github.com/extractbench/extractbench"
)

// TestCopier_CopyPass: measured rows and telemetry of a pass are copied
// into another run with every instant shifted (NULL kept NULL); an
// interrupted row is not copied; a (pass, document) already there is kept
// and counted as a duplicate. Each copied row's request_fields rows come
// with it; a duplicate keeps the destination's.
func TestCopier_CopyPass(t *testing.T) {
	ctx := context.Background()
	src, srcDir := MustOpen(t)
	key := extractbench.PassKey{RunID: "shard-run", Variant: "v", Mode: "concurrency", Level: 1, Repetition: 1}
	if err := src.CreateRun(ctx, Run{RunID: key.RunID, Fingerprint: "fp", Status: RunComplete, Manifest: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		src.Add(testRecord(key, i)) // record 2 never got a first token: its instants stay NULL
	}
	cut := testRecord(key, 4)
	cut.Transport.Kind = extractbench.TransportInterrupted
	src.Add(cut)
	if err := src.AddTelemetry(ctx, key, []TelemetrySample{{TNS: 100, Metric: "m", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	if err := src.Close(); err != nil {
		t.Fatal(err)
	}

	dst, dstDir := MustOpen(t)
	dk := key
	dk.RunID = "merged"
	if err := dst.CreateRun(ctx, Run{RunID: "merged", Fingerprint: "fp", Status: RunRunning, Manifest: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	kept := testRecord(dk, 0) // an earlier shard had document 0 already, with its own fields
	kept.Score.Fields = testFields(testRecord(dk, 3).Score)
	dst.Add(kept)
	if err := dst.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	rd, err := OpenReadOnly(ctx, srcDir)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	cp, err := OpenCopier(ctx, dstDir)
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Close()
	if err := cp.Attach(ctx, rd); err != nil {
		t.Fatal(err)
	}
	const off = 1_000_000_000
	res, err := cp.CopyPass(ctx, key, dk, off, 5)
	if err != nil {
		t.Fatal(err)
	}
	if res.Copied != 3 || res.Duplicates != 1 || len(res.Examples) != 1 || res.Examples[0] != "doc-00000" || res.Telemetry != 1 {
		t.Fatalf("copy = %+v, want 3 copied, doc-00000 duplicate, 1 sample", res)
	}
	got, err := dst.PassRecords(ctx, dk)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 {
		t.Fatalf("%d rows in the merged pass, want 4", len(got))
	}
	if !reflect.DeepEqual(got[0].Score.Fields, kept.Score.Fields) {
		t.Errorf("the kept duplicate's fields are %+v, want its own %+v", got[0].Score.Fields, kept.Score.Fields)
	}
	var fieldRows int
	if err := dst.rdb.QueryRow(`SELECT COUNT(*) FROM request_fields WHERE run_id = 'merged'`).Scan(&fieldRows); err != nil || fieldRows != 4*3 {
		t.Errorf("%d request_fields rows (%v), want 3 per merged request", fieldRows, err)
	}
	for _, g := range got[1:] {
		var i int
		for i = range 4 {
			if testRecord(key, i).DocID == g.DocID {
				break
			}
		}
		w := testRecord(key, i)
		if g.SendNS != w.SendNS+off || g.DoneNS != w.DoneNS+off || (w.FirstTokenNS == 0) != (g.FirstTokenNS == 0) ||
			(w.FirstTokenNS != 0 && g.FirstTokenNS != w.FirstTokenNS+off) || g.RunID != "merged" || g.Output != w.Output ||
			!reflect.DeepEqual(g.Score.Fields, w.Score.Fields) {
			t.Errorf("%s: send %d done %d first token %d run %s; want %d %d %d merged", g.DocID, g.SendNS, g.DoneNS, g.FirstTokenNS, g.RunID,
				w.SendNS+off, w.DoneNS+off, w.FirstTokenNS)
		}
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	drd, err := OpenReadOnly(ctx, dstDir)
	if err != nil {
		t.Fatal(err)
	}
	defer drd.Close()
	tel, err := drd.Telemetry(ctx, dk)
	if err != nil {
		t.Fatal(err)
	}
	if len(tel) != 1 || tel[0].TNS != 100+off {
		t.Errorf("telemetry %+v, want one sample at %d", tel, 100+off)
	}
}

// TestCopier_BoundedMemory: alone on a database being built, the Copier
// keeps no undo journal (one in memory holds a page's original for every
// page a pass's copy changes, and the document index makes that grow with
// the rows already copied) and a page cache of copierCacheKiB at most 16
// MiB: a merge's RSS stays flat in rows (scripts/rss-scale.sh MERGE=1).
func TestCopier_BoundedMemory(t *testing.T) {
	ctx := context.Background()
	st, dir := MustOpen(t)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	cp, err := OpenCopier(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Close()
	var mode string
	var cache int
	if err := cp.db.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if err := cp.db.QueryRowContext(ctx, `PRAGMA cache_size`).Scan(&cache); err != nil {
		t.Fatal(err)
	}
	if mode != "off" || cache >= 0 || -cache > 16<<10 {
		t.Errorf("journal_mode %s, cache_size %d, want off and at most 16 MiB (-16384)", mode, cache)
	}
}
