package report

import (
	"fmt"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/numfmt"
)

// corpusLine is the run header's corpus: the whole corpus, or for a run of
// one shard the shard first (index/count and its documents), since its
// figures are the shard's.
func corpusLine(m *extractbench.Manifest) string {
	whole := fmt.Sprintf("%s (%d documents, sha256 %s)", orNone(m.Corpus.Path), m.Corpus.Count, orNone(shortHash(m.Corpus.SHA256)))
	if m.Shard == nil {
		return whole
	}
	sh := m.Shard
	return fmt.Sprintf("shard %d/%d of %s: %s of its %s documents (shard hash %s)",
		sh.Index, sh.Count, whole, numfmt.GroupDigits(int64(sh.Documents)), numfmt.GroupDigits(int64(m.Corpus.Count)), orNone(shortHash(sh.Hash)))
}
