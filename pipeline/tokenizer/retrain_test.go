package tokenizer_test

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/extractbench/extractbench/corpus"
	"github.com/extractbench/extractbench/pipeline/tokenizer"
)

// retrainTokenizer is the retrained model's tokenizer (issue 24 item 3):
// no normalizer, superbpe's digit split as a second Split (a lookahead
// with empty matches), and beside it the template that collapses runs of
// spaces with Jinja's replace filter (chat_template.jinja).
const retrainTokenizer = "../../engines/transformers/retrain/tokenizer.json"

// TestPrompt_Retrain counts corpus/default's prompts with the retrained
// tokenizer and its template as cpu_reference.py's Python BPE does
// (testdata/retrain.json, retrain_reference.py; 390,556 tokens in all,
// what llama.cpp's /tokenize gave, engines/llamacpp/testdata/retrain/tokens.md),
// and encodes digit runs and the collapse's cases to the same ids. Before
// the digit split and the replace filter, the tokenizer did not load.
func TestPrompt_Retrain(t *testing.T) {
	raw, err := os.ReadFile("testdata/retrain.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref reference
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	p, err := tokenizer.LoadPrompt(retrainTokenizer, "")
	if err != nil {
		t.Fatal(err)
	}
	for s, want := range ref.IDs {
		if got := p.Tokenizer.Encode(s); !slices.Equal(got, want) {
			t.Errorf("Encode(%q) = %v, want %v", s, got, want)
		}
	}
	c, err := corpus.Load("../../corpus/default")
	if err != nil {
		t.Fatal(err)
	}
	wrong, total := 0, 0
	for i := range c.Len() {
		d, err := c.Resolve(c.Doc(i))
		if err != nil {
			t.Fatal(err)
		}
		got := p.Count(system, strings.ReplaceAll(user, "{{document}}", d.Text))
		total += got
		if want := ref.Counts[d.ID]; got != want {
			wrong++
			if wrong <= 5 {
				t.Errorf("%s: %d tokens, the Python BPE %d", d.ID, got, want)
			}
		}
	}
	if wrong > 0 || total != 390556 {
		t.Errorf("%d of %d documents counted otherwise; %d tokens in all, llama.cpp and the Python BPE 390,556", wrong, c.Len(), total)
	}
}

// TestTemplate_Replace: Jinja's replace filter on the content, with the
// escapes Python's literals have; another filter is refused by name.
func TestTemplate_Replace(t *testing.T) {
	tmpl, err := tokenizer.ParseTemplate(`{% for message in messages %}[{{ message['content'] | replace('\t', ' ') | replace("  ", ' ') | replace('a|b', '\'') }}]{% endfor %}`, "t", "", "")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tmpl.Render([]tokenizer.Message{{Role: "user", Content: "x\t\t  y a|b"}}, false), "[x  y ']"; got != want {
		t.Errorf("rendered %q, want %q", got, want)
	}
	if _, err := tokenizer.ParseTemplate(`{{ message['content'] | trim }}`, "t", "", ""); err == nil || !strings.Contains(err.Error(), `filter "trim"`) {
		t.Errorf("a trim filter: %v, want refused by name", err)
	}
}
