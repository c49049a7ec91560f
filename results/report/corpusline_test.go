package report

import (
	"strings"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/results"
)

// TestRunLines_Shard is issue 24's shard report: its header named the whole
// corpus, though its figures are one shard's. It names the shard (I/N and
// its documents) before the whole corpus.
func TestRunLines_Shard(t *testing.T) {
	d := &dataset{RunData: &results.RunData{}}
	m := &extractbench.Manifest{Corpus: extractbench.CorpusInfo{Path: "corpus/default", Count: 300, SHA256: "984d148083b8aa"},
		Shard: &extractbench.Shard{Index: 1, Count: 3, Documents: 97, Hash: "5eed"}}
	var corpus string
	for _, l := range runLines(d, m) {
		if l.K == "Corpus" {
			corpus = l.V
		}
	}
	if want := "shard 1/3 of corpus/default (300 documents, sha256 984d148083b8aa): 97 of its 300 documents"; !strings.HasPrefix(corpus, want) {
		t.Errorf("Corpus line %q, want it to start %q", corpus, want)
	}
	m.Shard = nil
	for _, l := range runLines(d, m) {
		if l.K == "Corpus" && l.V != "corpus/default (300 documents, sha256 984d148083b8aa)" {
			t.Errorf("whole corpus: Corpus line %q", l.V)
		}
	}
}
