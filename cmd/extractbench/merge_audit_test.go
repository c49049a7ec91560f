package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/results"
	"github.com/extractbench/extractbench/results/resultstest"
)

// auditShards runs the two shards of a 60-document run on the built-in
// engine and returns their directories and the count of shard 1's
// documents.
func auditShards(t *testing.T, dir string) (shards []string, docs1 int) {
	t.Helper()
	corpusPath, texts := shardCorpus(t, dir, shardTestDocs)
	proto := writeFile(t, dir, "audit.yaml", strings.NewReplacer("%CORPUS%", corpusPath, "%MIN%", "0.5").Replace(smallProtocol))
	for i := range 2 {
		out := filepath.Join(dir, fmt.Sprintf("shard-%d", i))
		if code, _, stderr := runCLI(t, "run", "-quiet", "-protocol", proto, "-shard", fmt.Sprintf("%d/2", i), "-out", out); code != exitOK {
			t.Fatalf("shard %d/2: exit %d: %s", i, code, stderr)
		}
		shards = append(shards, out)
	}
	for id := range texts {
		if extractbench.ShardOf(id, 2) == 1 {
			docs1++
		}
	}
	return shards, docs1
}

// tamperedCopy copies shard's results.db into a new directory and applies
// the edits to the copy, as someone with sqlite3 would.
func tamperedCopy(t *testing.T, shard string, edits ...resultstest.Edit) string {
	t.Helper()
	dir := resultstest.CopyDir(t, shard, "shard-1")
	resultstest.Tamper(t, dir, edits...)
	return dir
}

// idOfShard is an id that is in no corpus and hashes to shard index of 2.
func idOfShard(index int) string {
	for i := 0; ; i++ {
		if id := fmt.Sprintf("not-in-the-corpus-%d", i); extractbench.ShardOf(id, 2) == index {
			return id
		}
	}
}

// TestMerge_RefusesTamperedShards: a shard whose rows are not what its run
// left (rows deleted, a verdict flipped, a document id changed to one
// outside the corpus, a pass removed) is refused with exit 2, naming the
// shard, the pass and the count, and nothing is written; the intact shards
// merge as before, bit for bit. A shard without digests (an older one) is
// merged with a line saying so, and still refused when its rows disagree
// with its passes rows.
func TestMerge_RefusesTamperedShards(t *testing.T) {
	dir := t.TempDir()
	shards, docs1 := auditShards(t, dir)
	merged := filepath.Join(dir, "merged")
	code, stdout, stderr := runCLI(t, "merge", "-out", merged, shards[0], shards[1])
	if code != exitOK {
		t.Fatalf("intact merge: exit %d\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "shard 1/2 in "+shards[1]+": every pass's rows match the digest") {
		t.Errorf("intact merge: stderr does not say the digests matched:\n%s", stderr)
	}
	before := passesOf(t, merged)

	firstFailed := resultstest.Row{Level: 2, Failed: true}
	tests := []struct {
		name  string
		edits []resultstest.Edit
		want  []string // the message names these
	}{
		{"ten level-1 rows deleted",
			[]resultstest.Edit{resultstest.DeleteRequests(1, 10)},
			[]string{"bf16/concurrency/level=1/rep=1: ", fmt.Sprintf("%d rows, but its run left %d (its digest)", docs1-10, docs1),
				fmt.Sprintf("every one of the shard's %d documents once, but %d rows", docs1, docs1-10), "no row for "}},
		{"accepted flipped 0 to 1",
			[]resultstest.Edit{resultstest.SetAccepted(firstFailed, false)},
			[]string{"bf16/concurrency/level=2/rep=1: ", fmt.Sprintf("%d rows, as its run left, but their content differs from its digest", docs1),
				"1 row whose verdict contradicts their scores", "accepted = 1 with failure"}},
		{"accepted flipped with its failure class cleared",
			[]resultstest.Edit{resultstest.SetAccepted(firstFailed, true)},
			[]string{"bf16/concurrency/level=2/rep=1: ", "their content differs from its digest"}},
		{"doc_id outside the corpus, of the shard's hash",
			[]resultstest.Edit{resultstest.SetDocID(resultstest.Row{Level: 1}, idOfShard(1))},
			[]string{"bf16/concurrency/level=1/rep=1: ", "their content differs from its digest", "no row for doc-",
				"a row for " + idOfShard(1) + ", which no other pass of the shard has"}},
		{"doc_id outside the corpus and the shard",
			[]resultstest.Edit{resultstest.SetDocID(resultstest.Row{Level: 1}, idOfShard(0))},
			[]string{"bf16/concurrency/level=1/rep=1: ", "1 row of documents outside shard 1/2", idOfShard(0)}},
		{"a pass removed",
			[]resultstest.Edit{resultstest.DeletePass(2)},
			[]string{fmt.Sprintf("bf16/concurrency/level=2/rep=1: its run left %d rows (its digest), but the shard no longer has the pass", docs1)}},
		{"no digest, ten rows deleted",
			[]resultstest.Edit{resultstest.DeleteDigests(), resultstest.DeleteRequests(1, 10)},
			[]string{"bf16/concurrency/level=1/rep=1: ", fmt.Sprintf("%d rows, but its passes row counts %d documents", docs1-10, docs1)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bad := tamperedCopy(t, shards[1], tt.edits...)
			out := filepath.Join(t.TempDir(), "merged")
			code, stdout, stderr := runCLI(t, "merge", "-out", out, shards[0], bad)
			if code != exitUsage {
				t.Fatalf("exit %d, want %d (a bad input)\n%s%s", code, exitUsage, stdout, stderr)
			}
			for _, want := range append([]string{"refused, nothing was written", "shard 1/2 in " + bad}, tt.want...) {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr)
				}
			}
			if strings.Contains(stderr, "shard 0/2 in "+shards[0]+" (run") {
				t.Errorf("the intact shard is named as refused:\n%s", stderr)
			}
			if _, err := os.Stat(filepath.Join(out, results.DBName)); !os.IsNotExist(err) {
				t.Errorf("a refused merge wrote %s", out)
			}
		})
	}

	t.Run("no digest, intact", func(t *testing.T) {
		old := tamperedCopy(t, shards[1], resultstest.DeleteDigests())
		out := filepath.Join(t.TempDir(), "merged")
		code, stdout, stderr := runCLI(t, "merge", "-out", out, shards[0], old)
		if code != exitOK || !strings.Contains(stderr, "shard 1/2 in "+old+" has no digest of its rows") {
			t.Fatalf("exit %d, want %d with a line naming the shard without digests\n%s%s", code, exitOK, stdout, stderr)
		}
		if got := passesOf(t, out); got != before {
			t.Errorf("a merge of the same rows without digests differs:\n%s\n%s", got, before)
		}
	})

	if code, stdout, stderr := runCLI(t, "merge", "-out", merged, shards[1], shards[0]); code != exitOK {
		t.Fatalf("merge again: exit %d\n%s%s", code, stdout, stderr)
	}
	if after := passesOf(t, merged); after != before {
		t.Errorf("merging the intact shards again changed the passes:\nbefore %s\nafter  %s", before, after)
	}
}
