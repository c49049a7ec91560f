package tokenizer

// digitCutPattern is superbpe's digit split (llama-vocab.cpp's
// LLAMA_VOCAB_PRE_TYPE_SUPERBPE, and the retrained model's tokenizer.json,
// engines/transformers/retrain/): a Split whose only match is the empty
// string before each run of ASCII digits that a multiple of three digits
// end, so 1234567 is cut into 1, 234, 567.
const digitCutPattern = `(?=([0-9]{3})+(?![0-9]))`

// digitCutStep is that Split with behavior Isolated. Its matches are empty
// (tokenizers keeps no empty piece), so a word is cut at every position
// whose maximal run of ASCII digits from there is 3, 6, 9… digits long:
// ([0-9]{3})+ takes the run in threes, and (?![0-9]) holds only where
// the run ends.
type digitCutStep struct{}

func (digitCutStep) split(w string, _ *Tokenizer) []string {
	var out []string
	at := 0
	for i := 0; i < len(w); {
		if !isDigit(w[i]) {
			i += runeLen(w, i)
			continue
		}
		j := i
		for j < len(w) && isDigit(w[j]) {
			j++
		}
		for p := i; p < j; p++ {
			if (j-p)%3 == 0 && p > at {
				out = append(out, w[at:p])
				at = p
			}
		}
		i = j
	}
	return append(out, w[at:])
}

func isDigit(b byte) bool { return '0' <= b && b <= '9' }
