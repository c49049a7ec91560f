package pipeline

import (
	"encoding/json"
	"fmt"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/results"
)

// selectShard keeps, of the loaded corpus, the documents of the run's
// shard: Options.Shard for a new run; for a resumed run, the shard its
// manifest recorded (an Options.Shard that differs is refused, so that a
// retried Kubernetes pod resumes its own shard or stops). The corpus's
// hash and counts were taken before, over the whole corpus.
func (rs *runState) selectShard(prev *results.Run) error {
	want := rs.opts.Shard
	if prev != nil {
		var m extractbench.Manifest
		if err := json.Unmarshal(prev.Manifest, &m); err != nil {
			return fmt.Errorf("read the manifest of run %s: %w", prev.RunID, err)
		}
		switch {
		case want != nil && m.Shard == nil:
			return fmt.Errorf("shard %s: the run in %s measured the whole corpus, not a shard; resume it without -shard (and without JOB_COMPLETION_INDEX)", want, rs.opts.OutDir)
		case want != nil && (want.Index != m.Shard.Index || want.Count != m.Shard.Count):
			return fmt.Errorf("shard %s: the run in %s measured shard %s; a shard resumes only itself", want, rs.opts.OutDir, m.Shard)
		}
		want = m.Shard
	}
	if want == nil {
		return nil
	}
	sh := *want
	sh.Hash = extractbench.ShardHash
	whole := rs.corpus.Len()
	n := rs.corpus.Keep(sh.Holds)
	if n == 0 {
		return fmt.Errorf("shard %s: none of the corpus's %d documents hashes to shard %d (%s); use fewer shards", sh, whole, sh.Index, extractbench.ShardHash)
	}
	sh.Documents = n
	rs.shard = &sh
	return nil
}
