package protocol

import (
	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/corpus"
)

// Expectations is what the corpus's expected objects must follow under
// the protocol's declared fields: their names in order, each value judged
// by Field.CheckExpectation. ok is false for a protocol that declares
// none: its corpus follows the default fields, read as before.
func (p *Protocol) Expectations() (exp corpus.Expectations, ok bool) {
	if len(p.Fields) == 0 {
		return corpus.Expectations{}, false
	}
	return FieldExpectations(p.Fields), true
}

// FieldExpectations is corpus.Expectations for fields: what corpus check
// and corpus import judge expectations by.
func FieldExpectations(fields []extractbench.Field) corpus.Expectations {
	byName := make(map[string]extractbench.Field, len(fields))
	names := make([]string, 0, len(fields))
	for _, f := range fields {
		byName[f.Name] = f
		names = append(names, f.Name)
	}
	return corpus.Expectations{Names: names, Check: func(name string, v any) error {
		return byName[name].CheckExpectation(v)
	}}
}
