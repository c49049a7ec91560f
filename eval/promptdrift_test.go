package eval

import "testing"

func TestPromptDrift_Sentence(t *testing.T) {
	rec := func(prompt, expected int) Record {
		r := Record{}
		r.PromptTokens, r.UsageReported, r.ExpectedPromptTokens = prompt, true, &expected
		return r
	}
	for _, tt := range []struct {
		name string
		recs []Record
		want string
	}{
		{"none drifted", []Record{rec(100, 100), rec(5000, 5000)}, ""},
		{"llama.cpp without the normalizer", []Record{rec(132, 100), rec(7806, 5553), rec(100, 100)},
			"this engine tokenises 2 of 3 documents differently (+36.3% tokens, median; up to +40.6%) than the model's tokenizer (tokenizer.json and its chat template)"},
		{"one token in 5,000", []Record{rec(5001, 5000)},
			"this engine tokenises 1 of 1 documents differently (+0.02% tokens, median; up to +0.02%) than the model's tokenizer (tokenizer.json and its chat template)"},
	} {
		d := DriftOf(tt.recs, DriftAgainstTokenizer)
		if got := d.Sentence(); got != tt.want {
			t.Errorf("%s: %q\nwant %q", tt.name, got, tt.want)
		}
	}
	var none *PromptDrift
	if none.Sentence() != "" || none.Drifted() {
		t.Error("a nil drift says something")
	}
	if d := DriftOf([]Record{{}}, DriftAgainstTokenizer); d.Compared != nil || d.Reference != "" {
		t.Errorf("nothing to compare gave %+v, want all NULL", d)
	}
}
