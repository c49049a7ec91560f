package merge

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/extractbench/extractbench/pipeline/pipelinetest"
	"github.com/extractbench/extractbench/results/resultstest"
)

// TestMerge_FieldDigest: a sealed shard's digests cover its request_fields
// rows, so that a field row edited or deleted after its run ended, the
// request rows untouched, refuses the merge naming the shard, the pass and
// the table; the untouched shards merge with no note; a shard sealed by an
// extractbench of schema version 16 (digests of its requests rows alone)
// still merges, named as such. Before, both edits merged silently.
func TestMerge_FieldDigest(t *testing.T) {
	shards := synthShards{docs: 40, count: 2, levels: []int{1, 2}, sealed: true, score: variedScore}
	merge := func(t *testing.T, dirs []string) (*Report, string, error) {
		var progress bytes.Buffer
		sum, err := Merge(pipelinetest.Context(t), Options{OutDir: filepath.Join(t.TempDir(), "merged"), Dirs: dirs, Progress: &progress})
		return sum, progress.String(), err
	}

	t.Run("untouched", func(t *testing.T) {
		sum, _, err := merge(t, shards.write(t, t.TempDir()))
		if err != nil {
			t.Fatal(err)
		}
		if len(sum.Unsealed) != 0 {
			t.Errorf("sealed shards named: %q", sum.Unsealed)
		}
	})

	for _, tt := range []struct {
		name string
		edit resultstest.Edit
		want string
	}{
		{"field row edited", resultstest.SetFieldGot(2, `"2031-12-31"`),
			"bf16/concurrency/level=2/rep=1: request_fields: 60 rows, as its run left, but their content differs from its digest: a field row was edited since the run ended"},
		{"field row deleted", resultstest.DeleteFieldRows(1, 1),
			"bf16/concurrency/level=1/rep=1: request_fields: 59 rows, but its run left 60 (its digest)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dirs := shards.write(t, t.TempDir())
			resultstest.Tamper(t, dirs[1], tt.edit)
			_, _, err := merge(t, dirs)
			var te *TamperedError
			var ce *ConfigError
			if !errors.As(err, &te) || !errors.As(err, &ce) || len(te.Shards) != 1 || te.Shards[0].Dir != dirs[1] || len(te.Shards[0].Problems) != 1 {
				t.Fatalf("err = %v, want a ConfigError refusing shard 1/2 in %s for one pass", err, dirs[1])
			}
			if !strings.Contains(err.Error(), "shard 1/2 in "+dirs[1]) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to name the shard and say %q", err, tt.want)
			}
		})
	}

	t.Run("sealed before field digests", func(t *testing.T) {
		dirs := shards.write(t, t.TempDir())
		resultstest.BeforeFieldDigests(t, dirs[1])
		sum, progress, err := merge(t, dirs)
		if err != nil {
			t.Fatal(err)
		}
		if sum.Rows != 80 || len(sum.Unsealed) != 1 || !strings.Contains(sum.Unsealed[0], "shard 1/2 in "+dirs[1]+" has no digest of its request_fields rows") {
			t.Errorf("merged %d rows (want 80), notes %q: want one naming shard 1/2's field rows", sum.Rows, sum.Unsealed)
		}
		if !strings.Contains(progress, "an edited field row cannot be told") {
			t.Errorf("progress does not say so:\n%s", progress)
		}
	})
}
