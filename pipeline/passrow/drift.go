package passrow

import (
	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/pipeline/protocol"
)

// DriftReference is what a variant's expected prompt counts come from:
// its tokenizer file (extractbench.DriftAgainstTokenizer), else the first variant
// before it in the protocol that serves the same model
// (extractbench.DriftAgainstVariant + its name), else nothing (""). The built-in
// engine counts with corpus.ApproxTokens, no tokenizer: it is neither
// compared nor a reference.
func (a *Account) DriftReference(variant string) (reference, refVariant string) {
	if a.Proto == nil {
		return "", ""
	}
	vs := a.Proto.Variants
	me := -1
	for i := range vs {
		if vs[i].Name == variant {
			me = i
		}
	}
	switch {
	case me < 0:
		return "", ""
	case protocol.IsTokenizerFile(vs[me].Engine.Tokenizer): // loaded before the run began (pipeline's loadTokenizers)
		return extractbench.DriftAgainstTokenizer, ""
	case vs[me].Engine.IsBuiltin() || vs[me].Engine.Model == "":
		return "", ""
	}
	for _, v := range vs[:me] {
		if !v.Engine.IsBuiltin() && v.Engine.Model == vs[me].Engine.Model {
			return extractbench.DriftAgainstVariant + v.Name, v.Name
		}
	}
	return "", ""
}
