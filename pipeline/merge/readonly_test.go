package merge

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/extractbench/extractbench/pipeline/pipelinetest"
	"github.com/extractbench/extractbench/results"
	"github.com/extractbench/extractbench/results/resultstest"
)

// TestMerge_ReadOnlyShards is issue 40 item 5 for merge: shards on a
// read-only mount (the README's bucket example) are merged, and the merged
// results.db is left in rollback-journal mode (header bytes 18 and 19 are
// 1), readable on such a mount in turn. Shards left in WAL mode failed the
// merge with "unable to open database file".
func TestMerge_ReadOnlyShards(t *testing.T) {
	root := t.TempDir()
	dirs := synthShards{docs: 20, count: 2, levels: []int{1}, sealed: true}.write(t, root)
	out := filepath.Join(t.TempDir(), "merged")
	resultstest.AsReader(t, root, func() error {
		if _, err := Merge(pipelinetest.Context(t), Options{OutDir: out, Dirs: dirs}); err != nil {
			return err
		}
		db := filepath.Join(out, results.DBName)
		head := make([]byte, 20)
		f, err := os.Open(db)
		if err != nil {
			return err
		}
		defer f.Close()
		if _, err := f.ReadAt(head, 0); err != nil {
			return err
		}
		if head[18] != 1 || head[19] != 1 {
			return fmt.Errorf("merged %s: header versions %d/%d, want 1/1 (rollback journal, not WAL)", db, head[18], head[19])
		}
		return nil
	})
}
