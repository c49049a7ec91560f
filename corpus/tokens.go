package corpus

import (
	"unicode"
	"unicode/utf8"
)

// Token estimate parameters. They approximate a modern byte-pair tokenizer
// (Llama 3, Qwen 2.5) on Latin-script business text: short words are one
// token, long words break into pieces of a few letters, numbers split into
// groups of up to three digits, and punctuation marks stand alone.
const (
	lettersPerToken = 4 // a letter run costs one token per started 4 letters
	digitsPerToken  = 3 // Llama 3 and Qwen split digit runs into groups of 3
	symbolsPerToken = 8 // a run of one repeated symbol ("....") costs a token per 8
)

// ApproxTokens returns the project's one approximate token count of text,
// so that the generator's length classes, the built-in engine's prompt
// tokens and the memory planner agree with each other, even when a real
// tokenizer differs by ±20%. A run of letters costs a token per 4, of
// digits per 3, of line breaks one, of one repeated symbol one per 8;
// spaces are free and any other rune is one.
//
// Opening a corpus counts every text, so ASCII is counted four bytes at a
// time, by one lookup in a table of states (asciiStep) with no branch on
// what the bytes are, eight bytes a loop; accented letters, a few in a
// hundred bytes of the default corpus, step that table as a letter; other
// runes go one at a time by the definition (tokenCount.rune).
// TestApproxTokens_Random, TestApproxTokens_Runs and FuzzApproxTokens hold
// it to the definition read rune by rune and to the count by runs it
// replaced.
func ApproxTokens(text string) int {
	var t tokenCount
	st, n, tok := stateNone, 0, 0
	prev := byte(0x80) // no ASCII symbol came before the text
	var last rune      // the rune before, when it is not ASCII
	for i := 0; i < len(text); {
		// Eight ASCII bytes: two steps of four.
		for ; i+8 <= len(text); i += 8 {
			w := text[i : i+8]
			if (w[0]|w[1]|w[2]|w[3]|w[4]|w[5]|w[6]|w[7])&0x80 != 0 {
				break
			}
			st, tok = st.quad(quadClasses(w[0], w[1], w[2], w[3], prev))
			n += tok
			st, tok = st.quad(quadClasses(w[4], w[5], w[6], w[7], w[3]))
			n += tok
			prev = w[7]
		}
		if i == len(text) {
			break
		}
		if w := text[i:min(i+4, len(text))]; len(w) == 4 && (w[0]|w[1]|w[2]|w[3])&0x80 == 0 {
			st, tok = st.quad(quadClasses(w[0], w[1], w[2], w[3], prev))
			n += tok
			i, prev = i+4, w[3]
			continue
		}
		if b := text[i]; b < utf8.RuneSelf {
			st, tok = st.one(byteClass(b, prev))
			n += tok
			i, prev = i+1, b
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		if r < 0x2E80 && unicode.IsLetter(r) {
			// Accented Latin (ç, ã, é), most of the rest: within a word.
			st, tok = st.one(classLetter)
			n += tok
		} else {
			if prev < utf8.RuneSelf {
				last = rune(prev)
			}
			t.setState(st, last)
			t.rune(r)
			st = t.state()
		}
		last = r
		i += size
		prev = text[i-1]
	}
	return n + t.n
}

// tokenCount is ApproxTokens's state between runes. A run's tokens are
// counted as it grows, at each letter that starts a group of 4, each digit
// that starts a group of 3 and each symbol that starts a group of 8, which
// sums to what counting each run when it ends gives.
type tokenCount struct {
	n       int
	letters int  // letters in the current run, modulo lettersPerToken
	digits  int  // digits in the current run, modulo digitsPerToken
	newline bool // the previous rune was a line break
	punct   rune // the previous rune when it was a symbol, for runs like "....."
	run     int  // symbols in the current run of punct, modulo symbolsPerToken
}

// rune counts one rune that is not ASCII (or an invalid byte, as
// utf8.RuneError), as ApproxTokens's definition reads.
func (t *tokenCount) rune(r rune) {
	switch {
	case r >= 0x2E80 && unicode.IsLetter(r):
		// Han, kana, Hangul: no spaces between words, about a token a character.
		t.letters, t.digits = 0, 0
		t.n++
	case unicode.IsLetter(r) || unicode.Is(unicode.Mn, r):
		// Accented Latin (ç, ã, é) and combining marks stay inside the word.
		t.digits = 0
		if t.letters == 0 {
			t.n++
		}
		t.letters = (t.letters + 1) % lettersPerToken
	case unicode.IsSpace(r):
		t.letters, t.digits = 0, 0
	default:
		t.letters, t.digits = 0, 0
		// A BPE vocabulary holds runs of one symbol ("........", "____")
		// as single tokens of up to about 8 characters.
		if r != t.punct {
			t.run = 0
		}
		if t.run == 0 {
			t.n++
		}
		t.punct, t.run = r, (t.run+1)%symbolsPerToken
		t.newline = false
		return
	}
	t.punct, t.run = 0, 0
	t.newline = false
}

// The classes of an ASCII byte, for asciiStep.
const (
	classLetter = iota
	classDigit
	classNewline // '\n', '\r'
	classSpace   // ' ', '\t', '\v', '\f'
	classSymbol  // any other: starts a run of itself
	classRepeat  // a symbol equal to the byte before: continues its run
)

// byteClass is b's class, prev the byte before it.
func byteClass(b, prev byte) uint16 {
	c := uint16(asciiClasses[b&0x7F])
	if c == classSymbol && b == prev {
		c = classRepeat
	}
	return c
}

// quadClasses is the index of four ASCII bytes' classes in asciiStep,
// prev the byte before them: two lookups of two bytes each, the first
// byte of each pair then made a repeat when it is a symbol equal to the
// byte before it (rare: the branches are seldom taken).
func quadClasses(b0, b1, b2, b3, prev byte) uint16 {
	c := pairClasses[int(b0)<<7|int(b1)] + 36*pairClasses[int(b2)<<7|int(b3)]
	if b0 == prev && asciiClasses[b0] == classSymbol {
		c += classRepeat - classSymbol
	}
	if b2 == b1 && asciiClasses[b2] == classSymbol {
		c += 36 * (classRepeat - classSymbol)
	}
	return c
}

// pairClasses[b0<<7 | b1] is byteClass(b0, not b0) + 6 × byteClass(b1, b0).
var pairClasses = func() (table [128 << 7]uint16) {
	for b0 := range byte(128) {
		for b1 := range byte(128) {
			table[int(b0)<<7|int(b1)] = byteClass(b0, b0+1) + 6*byteClass(b1, b0)
		}
	}
	return
}()

var asciiClasses = func() (classes [128]uint8) {
	for c := range byte(128) {
		switch {
		case asciiLetter(c):
			classes[c] = classLetter
		case asciiDigit(c):
			classes[c] = classDigit
		case c == '\n' || c == '\r':
			classes[c] = classNewline
		case c == ' ' || c == '\t' || c == '\v' || c == '\f':
			classes[c] = classSpace
		default:
			classes[c] = classSymbol
		}
	}
	return classes
}()

// asciiState is what ApproxTokens must know of the bytes before the next:
// the count, modulo its group, of the letter, digit or symbol run they
// end, or that they end in a line break. A run whose count is a multiple
// of its group is left as none: its next byte starts a group either way.
type asciiState uint8

const (
	stateNone    asciiState = 0
	stateLetters asciiState = 1  // 1 to 3 letters: 1, 2, 3
	stateDigits  asciiState = 4  // 1 or 2 digits: 4, 5
	stateNewline asciiState = 6  // a line break
	stateSymbols asciiState = 7  // 1 to 7 of one symbol: 7 to 13
	stateCount              = 14 // states
)

// step is one byte of class c from st: the state it leads to and whether
// it starts a token.
func step(st asciiState, c uint16) (asciiState, int) {
	letters, digits, symbols := 0, 0, 0
	switch {
	case st >= stateLetters && st < stateDigits:
		letters = int(st - stateLetters + 1)
	case st >= stateDigits && st < stateNewline:
		digits = int(st - stateDigits + 1)
	case st >= stateSymbols:
		symbols = int(st - stateSymbols + 1)
	}
	starts := 0
	switch c {
	case classLetter:
		if letters == 0 {
			starts = 1
		}
		return runState(stateLetters, letters+1, lettersPerToken), starts
	case classDigit:
		if digits == 0 {
			starts = 1
		}
		return runState(stateDigits, digits+1, digitsPerToken), starts
	case classNewline:
		if st != stateNewline {
			starts = 1
		}
		return stateNewline, starts
	case classSpace:
		return stateNone, 0
	case classRepeat:
		if symbols > 0 {
			return runState(stateSymbols, symbols+1, symbolsPerToken), 0
		}
	}
	return stateSymbols, 1 // a symbol that starts a run, or a group of a run
}

// runState is the state of a run of count, modulo per, from first.
func runState(first asciiState, count, per int) asciiState {
	if count%per == 0 {
		return stateNone
	}
	return first + asciiState(count%per-1)
}

// asciiStep[st<<11 | c] is the state four bytes of classes c (the first
// byte's class + 6 × the second's + 36 × the third's + 216 × the fourth's)
// lead to from st, shifted left 3, plus the tokens they start.
var asciiStep = func() (table [16 << 11]asciiState) { // 16 ≥ stateCount: a power of two to index without a bound check
	for st := range asciiState(stateCount) {
		for c := range 6 * 6 * 6 * 6 {
			next, n := st, 0
			for j, cj := 0, c; j < 4; j, cj = j+1, cj/6 {
				var tok int
				next, tok = step(next, uint16(cj%6))
				n += tok
			}
			table[int(st)<<11|c] = next<<3 | asciiState(n)
		}
	}
	return
}()

// quad is the state four bytes of classes c (quadClasses) lead to from
// st and the tokens they start.
func (st asciiState) quad(c uint16) (asciiState, int) {
	e := asciiStep[(int(st)<<11|int(c))&(len(asciiStep)-1)]
	return e >> 3, int(e & 7)
}

// one is quad for one byte of class c.
func (st asciiState) one(c uint16) (asciiState, int) {
	e := asciiStep1[int(st)<<3|int(c)]
	return e >> 3, int(e & 7)
}

// asciiStep1[st<<3 | c] is asciiStep's for one byte of class c.
var asciiStep1 = func() []asciiState {
	table := make([]asciiState, stateCount<<3)
	for st := range asciiState(stateCount) {
		for c := range 6 {
			next, n := step(st, uint16(c))
			table[int(st)<<3|c] = next<<3 | asciiState(n)
		}
	}
	return table
}()

// state is t's state for asciiRun.
func (t *tokenCount) state() asciiState {
	switch {
	case t.letters > 0:
		return stateLetters + asciiState(t.letters-1)
	case t.digits > 0:
		return stateDigits + asciiState(t.digits-1)
	case t.newline:
		return stateNewline
	case t.run > 0:
		return stateSymbols + asciiState(t.run-1)
	}
	return stateNone
}

// setState sets t from st, last the rune that led to it.
func (t *tokenCount) setState(st asciiState, last rune) {
	*t = tokenCount{n: t.n}
	switch {
	case st >= stateSymbols:
		t.punct, t.run = last, int(st-stateSymbols+1)
	case st == stateNewline:
		t.newline = true
	case st >= stateDigits:
		t.digits = int(st - stateDigits + 1)
	case st >= stateLetters:
		t.letters = int(st - stateLetters + 1)
	}
}

// ClassRange returns the token range, by ApproxTokens, of a length class:
// min inclusive, max exclusive for short and inclusive otherwise. ok is false
// for an unknown class.
func ClassRange(c LengthClass) (min, max int, ok bool) {
	switch c {
	case Short:
		return 1, 300, true
	case Usual:
		return 300, 1500, true
	case Long:
		return 5500, 7500, true
	}
	return 0, 0, false
}

// ClassOf returns the length class whose range holds tokens, and false when
// none does (between usual and long, or beyond long).
func ClassOf(tokens int) (LengthClass, bool) {
	switch {
	case tokens < 300:
		return Short, true
	case tokens <= 1500:
		return Usual, true
	case tokens >= 5500 && tokens <= 7500:
		return Long, true
	}
	return "", false
}

func asciiLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func asciiDigit(c byte) bool { return c >= '0' && c <= '9' }
