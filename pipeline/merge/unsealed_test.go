package merge

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/extractbench/extractbench/pipeline/pipelinetest"
	"github.com/extractbench/extractbench/results/resultstest"
)

// TestMerge_UnsealedSaysWhy is issue 40 item 10's third error: a shard
// whose digests were deleted after its run ended is named as such, never
// as "written by an extractbench without them", which its schema version
// shows it was not; a shard whose run never ended says that.
func TestMerge_UnsealedSaysWhy(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status string
		want   string
	}{
		{"digests deleted", "", "they were removed after it ended"},
		{"run never ended", "running", "its run never ended"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			dirs := synthShards{docs: 20, count: 2, levels: []int{1}, sealed: true}.write(t, root)
			edits := []resultstest.Edit{resultstest.DeleteDigests()}
			if tc.status != "" {
				edits = append(edits, resultstest.SetRunStatus(tc.status))
			}
			resultstest.Tamper(t, dirs[1], edits...)
			var progress bytes.Buffer
			sum, err := Merge(pipelinetest.Context(t), Options{OutDir: filepath.Join(root, "merged"), Dirs: dirs, Progress: &progress})
			if err != nil {
				t.Fatal(err)
			}
			if len(sum.Unsealed) != 1 || !strings.Contains(sum.Unsealed[0], tc.want) || strings.Contains(sum.Unsealed[0], "without them") {
				t.Errorf("unsealed notes %q, want one saying %q", sum.Unsealed, tc.want)
			}
		})
	}
}
