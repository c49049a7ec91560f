package passrow

import (
	"math"

	"github.com/extractbench/extractbench"
)

// Token counts agree (MEASUREMENT.md section 4: count client-side and flag
// the difference) when the engine's completion_tokens and the client's
// content chunks differ by at most max(TokenCountSlack, TokenCountShare ×
// completion_tokens). A final EOS token that usage counts but no chunk
// carries, or a detokenizer holding back half a multi-byte character, is a
// gap of one; engines that pack a few tokens per chunk under load stay
// within the share.
const (
	TokenCountSlack = 2
	TokenCountShare = 0.10
)

// tokenCountMismatches counts the records whose engine-reported token count
// and client-counted chunks disagree beyond the tolerance; nil when no
// record carries the engine's usage (there is nothing to compare).
func tokenCountMismatches(recs []extractbench.Record) *int64 {
	var t tokenTally
	for i := range recs {
		t.add(&recs[i])
	}
	return t.figure()
}

// tokenTally is tokenCountMismatches one record at a time.
type tokenTally struct{ compared, mismatched int64 }

func (t *tokenTally) add(r *extractbench.Record) {
	if !r.UsageReported {
		return
	}
	t.compared++
	if !tokenCountsAgree(r.CompletionTokens, r.ClientChunks) {
		t.mismatched++
	}
}

func (t *tokenTally) figure() *int64 {
	if t.compared == 0 {
		return nil
	}
	m := t.mismatched
	return &m
}

func tokenCountsAgree(usage, chunks int) bool {
	tol := max(float64(TokenCountSlack), math.Ceil(TokenCountShare*float64(usage)))
	return math.Abs(float64(usage-chunks)) <= tol
}
