package passrow

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/results"
	"github.com/extractbench/extractbench/results/resultstest"
)

// TestTallies_IsReadPass: the tallies made of every pass in the one read
// that exports the rows (results.Store.ExportRequests feeding Tallies, as
// the merge does) are ReadPass's of each pass, field by field and bit for
// bit, and requests.parquet is the file Export writes. Passes of several
// sizes (none empty of measured rows but one of no rows at all), variants
// with and without replicas, unmeasured rows to pass over, resumed passes
// whose killed attempt's rows the resume replaced in place; the passes of
// a run and of a merge (its shards' segments, no steady-state trend).
func TestTallies_IsReadPass(t *testing.T) {
	replicas := map[string][]string{"v0": nil, "v1": {"http://a:8000", "http://b:8000"}, "v2": {"http://a:8000", "http://b:8000", "http://c:8000"}}
	endpoints := func(variant string) []string { return replicas[variant] }
	for _, merged := range []bool{false, true} {
		t.Run(fmt.Sprintf("merged=%v", merged), func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			var keys []extractbench.PassKey
			var all []extractbench.Record
			for i := range 18 {
				rng := rand.New(rand.NewPCG(uint64(i), 44))
				variant := fmt.Sprintf("v%d", i%3)
				key := extractbench.PassKey{RunID: "run-tallies", Variant: variant, Mode: extractbench.ModeConcurrency, Level: 1 + rng.IntN(16), Repetition: 1 + i}
				keys = append(keys, key)
				n := []int{1, 7, 90, 400, 1500, 0}[i%6]
				recs := randomPass(rng, key, n, replicas[variant])
				if i%4 == 1 && n > 1 && !merged {
					recs = killedAttempt(rng, recs)
				}
				all = append(all, recs...)
			}
			resultstest.Write(t, dir, resultstest.Run{RunID: "run-tallies", Status: results.RunRunning, Records: all})
			s, err := results.Open(ctx, dir)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			a := &Account{Store: s}
			if merged {
				a.Merged = &Shards{Count: 2, Resumes: map[int][]int64{1: {2_000_000}}}
			}
			tallies := a.NewTallies(endpoints)
			path := filepath.Join(t.TempDir(), results.RequestsParquet)
			if err := s.ExportRequests(ctx, path, tallies.Add); err != nil {
				t.Fatal(err)
			}
			if err := tallies.Close(); err != nil {
				t.Fatal(err)
			}
			for i, key := range keys {
				want, err := a.ReadPass(ctx, key, endpoints(key.Variant))
				if err != nil {
					t.Fatal(err)
				}
				if d := tallyDiff(tallies.Pass(key), want); d != "" {
					t.Errorf("pass %d (%d rows): Tallies differ from ReadPass:\n%s", i, want.Docs(), d)
				}
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := results.Export(ctx, dir); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(filepath.Join(dir, results.RequestsParquet))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("ExportRequests wrote %d bytes of requests.parquet that differ from Export's %d", len(got), len(want))
			}
		})
	}
}

// TestTallies_RefusesScatteredPass: a pass whose rows do not lie in one
// stretch (another pass's rows between them) is refused, not tallied in
// two parts.
func TestTallies_RefusesScatteredPass(t *testing.T) {
	a := &Account{}
	ts := a.NewTallies(func(string) []string { return nil })
	k1 := extractbench.PassKey{RunID: "r", Variant: "v", Mode: extractbench.ModeConcurrency, Level: 1, Repetition: 1}
	k2 := k1
	k2.Level = 2
	for _, k := range []extractbench.PassKey{k1, k2, k1} {
		ts.Add(&extractbench.Record{RunID: k.RunID, Variant: k.Variant, Mode: k.Mode, Level: k.Level, Repetition: k.Repetition, DocID: "d"})
	}
	if err := ts.Close(); err == nil {
		t.Fatal("a pass's rows in two stretches were tallied without an error")
	}
}
