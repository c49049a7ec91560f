package pipeline

import (
	"context"
	"fmt"
	"strings"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/corpus"
	"github.com/extractbench/extractbench/pipeline/protocol"
	"github.com/extractbench/extractbench/pipeline/tokenizer"
)

// Tokenizer drift (results/SCHEMA.md, passes.prompt_drift_*): each
// measured request's prompt_tokens is checked against the count the
// protocol expects for its document. A variant whose engine.tokenizer is a
// path to a tokenizer.json (protocol.IsTokenizerFile) expects its prompt as that
// tokenizer and the model's chat template count it (pipeline/tokenizer:
// exact, the template rendered, so no overhead is estimated); a variant
// without one expects what the baseline variant of its model reported for
// the same document (passrow.Account.DriftReference). An engine that tokenises otherwise
// (llama.cpp without the model's normalizer: +32% tokens) is then a
// figure of the pass, said before any accuracy figure.

// loadTokenizers loads every variant's tokenizer file and chat template
// (rs.prompts); each one that cannot be read or counted is a problem
// naming its line.
func (rs *runState) loadTokenizers() []string {
	var problems []string
	rs.prompts = map[string]*tokenizer.Prompt{}
	for i, v := range rs.proto.Variants {
		if !protocol.IsTokenizerFile(v.Engine.Tokenizer) {
			continue
		}
		tmpl := ""
		if strings.HasSuffix(v.Engine.ChatTemplate, ".jinja") {
			tmpl = rs.proto.ResolvePath(v.Engine.ChatTemplate)
		}
		p, err := tokenizer.LoadPrompt(rs.proto.ResolvePath(v.Engine.Tokenizer), tmpl)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: variant %s: %v (a tokenizer.json of a byte-level BPE, with its chat template beside it; or name the tokenizer without .json to skip the check)",
				rs.proto.At(fmt.Sprintf("variants.%d.engine.tokenizer", i)), v.Name, err))
			continue
		}
		rs.prompts[v.Name] = p
	}
	return problems
}

// expectPromptTokens sets a chat request's expected prompt count from the
// variant's tokenizer; a variant without one is filled from its reference
// variant when its pass ends (fillExpected). A document is counted once
// per variant (a few ms for a 25 KB prompt on a busy core) and its count
// kept for the next passes, up to maxCountedDocs documents.
func (rs *runState) expectPromptTokens(v *extractbench.Variant, d corpus.Document, rec *extractbench.Record) {
	p := rs.prompts[v.Name]
	if p == nil {
		return
	}
	key := v.Name + "\x00" + d.ID
	if n, ok := rs.promptCounts.Load(key); ok {
		c := n.(int)
		rec.ExpectedPromptTokens = &c
		return
	}
	n := p.Count(rs.proto.Prompt.System, rs.userPrompt(d))
	if rs.promptCounted.Add(1) <= maxCountedDocs {
		rs.promptCounts.Store(key, n)
	}
	rec.ExpectedPromptTokens = &n
}

// maxCountedDocs bounds the expected counts kept (about 60 bytes each):
// past it a document is counted again in each pass.
const maxCountedDocs = 1 << 18

// fillExpected gives the pass's rows the reference variant's counts, when
// the variant compares against one.
func (rs *runState) fillExpected(ctx context.Context, key extractbench.PassKey) error {
	if _, ref := rs.account().DriftReference(key.Variant); ref != "" {
		return rs.store.FillExpectedPromptTokens(ctx, key, ref)
	}
	return nil
}
