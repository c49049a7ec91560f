package corpus_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/corpus"
	"github.com/extractbench/extractbench/eval"
)

// TestMaxAmountDigits_IsTheScorers: the largest expected amount the corpus
// accepts is one the scorer accepts an exact answer for; one digit more,
// and no answer could match it, so the corpus refuses it.
func TestMaxAmountDigits_IsTheScorers(t *testing.T) {
	for _, tt := range []struct {
		digits     int
		corpusOK   bool
		acceptable bool
	}{
		{corpus.MaxAmountDigits, true, true},
		{corpus.MaxAmountDigits + 1, false, false},
	} {
		amount := strings.Repeat("9", tt.digits) + ".25"
		line := fmt.Sprintf(`{"id":"a","text":"Total due %s.","length_class":"short","expected":{"date":null,"amount":%q,"category":"rent"}}`, amount, amount)
		_, probs := corpus.ParseLine([]byte(line), nil)
		if got := len(probs) == 0; got != tt.corpusOK {
			t.Errorf("%d digits: corpus accepts = %v, want %v (%v)", tt.digits, got, tt.corpusOK, probs)
		}
		category := "rent"
		exp := corpus.Expected{Amount: &amount, Category: &category}
		answer := fmt.Sprintf(`{"date":null,"amount":%s,"category":"rent"}`, amount)
		o := eval.Evaluate(answer, exp, extractbench.Transport{Kind: extractbench.TransportOK, FinishReason: "stop", HTTPStatus: 200}, eval.Options{})
		if o.Accepted != tt.acceptable {
			t.Errorf("%d digits: the scorer accepts the exact answer = %v, want %v (%s)", tt.digits, o.Accepted, tt.acceptable, o.FailureDetail)
		}
	}
}
