package eval

import (
	"testing"

	"github.com/extractbench/extractbench"
)

func TestPromptDrift_Sentence(t *testing.T) {
	rec := func(prompt, expected int) extractbench.Record {
		r := extractbench.Record{}
		r.PromptTokens, r.UsageReported, r.ExpectedPromptTokens = prompt, true, &expected
		return r
	}
	for _, tt := range []struct {
		name string
		recs []extractbench.Record
		want string
	}{
		{"none drifted", []extractbench.Record{rec(100, 100), rec(5000, 5000)}, ""},
		{"llama.cpp without the normalizer", []extractbench.Record{rec(132, 100), rec(7806, 5553), rec(100, 100)},
			"this engine tokenises 2 of 3 documents differently (+36.3% tokens, median; up to +40.6%) than the model's tokenizer (tokenizer.json and its chat template)"},
		{"one token in 5,000", []extractbench.Record{rec(5001, 5000)},
			"this engine tokenises 1 of 1 documents differently (+0.02% tokens, median; up to +0.02%) than the model's tokenizer (tokenizer.json and its chat template)"},
	} {
		d := DriftOf(tt.recs, extractbench.DriftAgainstTokenizer)
		if got := d.Sentence(); got != tt.want {
			t.Errorf("%s: %q\nwant %q", tt.name, got, tt.want)
		}
	}
	var none *extractbench.PromptDrift
	if none.Sentence() != "" || none.Drifted() {
		t.Error("a nil drift says something")
	}
	if d := DriftOf([]extractbench.Record{{}}, extractbench.DriftAgainstTokenizer); d.Compared != nil || d.Reference != "" {
		t.Errorf("nothing to compare gave %+v, want all NULL", d)
	}
}
