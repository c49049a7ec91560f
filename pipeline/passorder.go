package pipeline

import (
	"slices"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/corpus"
	"github.com/extractbench/extractbench/pipeline/dispatch"
)

// passDocs are the documents a pass at level sends, listed in corpus order
// (passOrder puts them in send order): the whole corpus, or in a context
// sweep the documents of the level's length class only. A pass is
// complete, and resume sends what is left, against this set.
func (rs *runState) passDocs(level int) docList {
	if rs.proto.Sweep.Mode != extractbench.ModeContext {
		return docList{c: rs.corpus}
	}
	class := extractbench.LengthClassOf(level)
	out := docList{c: rs.corpus, idx: []int32{}}
	for i := range rs.corpus.Len() {
		if string(rs.corpus.Doc(i).LengthClass) == class {
			out.idx = append(out.idx, int32(i))
		}
	}
	return out
}

// passOrder is the documents a pass at level, repetition rep sends, in the
// order it sends them, and the seed of that order (passes.order_seed; nil
// for corpus order): the one place the send order is made, for every mode
// (the dispatchers send position 0 first, and a rate pass's planned
// arrivals go to the documents in this order). It is a function of the
// protocol, the corpus (or shard) and the pass's level and repetition
// only, never the variant or what was sent before, so every variant sends
// a level and repetition in the same order and a resumed pass recomputes
// it exactly.
func (rs *runState) passOrder(level, rep int) (docList, *int64) {
	docs := rs.passDocs(level)
	seed := dispatch.OrderSeed(rs.proto.Sweep, rs.proto.Generation.Seed, level, rep)
	if seed == nil {
		return docs, nil
	}
	idx := dispatch.Permute(docs.Len(), *seed)
	for i, j := range idx {
		idx[i] = docs.pos(int(j))
	}
	return docList{c: rs.corpus, idx: idx}, seed
}

// docList is a list of the corpus's documents: all of them in corpus order
// (idx nil), or those at idx in idx's order. It holds 4 bytes a document at
// most, never a Document each: corpus.Corpus.Doc makes one when it is sent.
type docList struct {
	c   *corpus.Corpus
	idx []int32
}

// Len is the number of documents listed.
func (l docList) Len() int {
	if l.idx == nil {
		return l.c.Len()
	}
	return len(l.idx)
}

// At is the i-th document listed.
func (l docList) At(i int) corpus.Document { return l.c.Doc(int(l.pos(i))) }

// pos is the i-th document's place in the corpus.
func (l docList) pos(i int) int32 {
	if l.idx == nil {
		return int32(i)
	}
	return l.idx[i]
}

// levels is the pass plan's levels for this corpus: the protocol's, less a
// context sweep's length classes that have no document.
func (rs *runState) levels() []int {
	levels := rs.proto.Levels()
	if rs.proto.Sweep.Mode != extractbench.ModeContext {
		return levels
	}
	return slices.DeleteFunc(levels, func(l int) bool { return rs.passDocs(l).Len() == 0 })
}
