package report

import (
	"fmt"

	"github.com/extractbench/extractbench"
)

// shardTable lists the shards a merged run was built from (manifest.merge):
// index, directory, run, status, documents and rows, then the indexes that
// were missing; nil for a run that is not a merge.
func shardTable(m *extractbench.Manifest) *table {
	mg := m.Merge
	if mg == nil {
		return nil
	}
	t := &table{ID: "shards", Title: "Shards",
		Note: fmt.Sprintf("This run merges %d of %d shards (documents assigned by %s); each (pass, document) row once. Pass time is the union of the shards' active spans, so the throughput of shards that ran at the same time adds up.",
			len(mg.Shards), mg.Count, extractbench.ShardHash),
		Head: []string{"shard", "directory", "run", "status", "documents", "rows", "duplicates dropped"}}
	for _, s := range mg.Shards {
		t.Rows = append(t.Rows, []string{fmt.Sprintf("%d/%d", s.Index, mg.Count), s.Dir, s.RunID, s.Status,
			fmt.Sprint(s.Documents), fmt.Sprint(s.Rows), fmt.Sprint(s.Duplicates)})
	}
	for _, i := range mg.Missing {
		t.Rows = append(t.Rows, []string{fmt.Sprintf("%d/%d", i, mg.Count), none, none, "MISSING", none, "0", "0"})
	}
	if len(mg.Missing) > 0 {
		t.Note += " Missing shard indexes " + extractbench.ShardList(mg.Missing) + ": the run is incomplete until they are merged in."
	}
	if mg.Duplicates > 0 {
		t.Note += fmt.Sprintf(" %d (pass, document) rows were found in more than one shard; the first, by shard index, was kept.", mg.Duplicates)
	}
	return t
}
