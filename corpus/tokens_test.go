package corpus

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestApproxTokens(t *testing.T) {
	tests := []struct {
		text string
		want int
	}{
		{"", 0},
		{"the", 1},
		{"invoice", 2},     // 7 letters: ceil(7/4)
		{"Total due", 3},   // 1 + 2
		{"1234.56", 4},     // "123" "4" "." "56"
		{"R$ 1.234,56", 7}, // R $ 1 . 234 , 56
		{"emissão", 2},     // accented letters stay in the word
		{"a\n\n\nb", 3},    // a line-break run is one token
		{"..........", 2},  // a run of one symbol: ceil(10/8)
		{"____/____", 3},   // two runs and a slash
		{"日本語", 3},         // no spaces: a token a character
		{"   \t ", 0},      // spaces are free
		{"12/03/2025", 6},  // 12 / 03 / 202 5
		{string([]byte{0xff}) + "a" + string([]byte{0xfe}), 3}, // an invalid byte is a symbol
	}
	for _, tt := range tests {
		if got := ApproxTokens(tt.text); got != tt.want {
			t.Errorf("ApproxTokens(%q) = %d, want %d", tt.text, got, tt.want)
		}
	}
}

// TestApproxTokens_Additive checks the property the generator relies on to
// size documents block by block: blocks joined by a blank line cost the sum
// of their tokens plus one per separator.
func TestApproxTokens_Additive(t *testing.T) {
	blocks := []string{"Fatura Nº 123", "Data de emissão: 12/03/2025", "Total ........ R$ 1.234,56"}
	want := 0
	for _, b := range blocks {
		want += ApproxTokens(b)
	}
	want += len(blocks) - 1
	if got := ApproxTokens(strings.Join(blocks, "\n\n")); got != want {
		t.Errorf("joined = %d, want %d", got, want)
	}
}

func TestClassOf(t *testing.T) {
	tests := []struct {
		tokens int
		want   LengthClass
		ok     bool
	}{
		{10, Short, true}, {299, Short, true}, {300, Usual, true}, {1500, Usual, true},
		{1501, "", false}, {5499, "", false}, {5500, Long, true}, {7500, Long, true}, {7501, "", false},
	}
	for _, tt := range tests {
		got, ok := ClassOf(tt.tokens)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ClassOf(%d) = %q, %v; want %q, %v", tt.tokens, got, ok, tt.want, tt.ok)
		}
	}
}

// approxTokensByRuns is ApproxTokens as it was before it stepped a table
// of states four bytes at a time: it counted runs of ASCII letters, digits
// and spaces at once. The three must agree.
func approxTokensByRuns(text string) int {
	n := 0
	letters, digits := 0, 0
	newline := false
	var punct rune // the previous rune when it was a symbol, for runs like "....."
	run := 0
	for i := 0; i < len(text); {
		// Runs of ASCII letters, digits and spaces, most of a text, are
		// counted a run at a time: each byte of a run would do the same.
		switch k := byRunsKinds[text[i]]; k {
		case byRunsLetter, byRunsDigit, byRunsSpace:
			j := i + 1
			for j < len(text) && byRunsKinds[text[j]] == k {
				j++
			}
			switch k {
			case byRunsLetter:
				if digits > 0 {
					n, digits = n+byRunsTokens(0, digits), 0
				}
				letters += j - i
			case byRunsDigit:
				if letters > 0 {
					n, letters = n+byRunsTokens(letters, 0), 0
				}
				digits += j - i
			default:
				n, letters, digits = n+byRunsTokens(letters, digits), 0, 0
			}
			i = j
			punct, run = 0, 0
			newline = false
			continue
		}
		r, size := rune(text[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(text[i:])
		}
		i += size
		switch {
		case r == '\n' || r == '\r':
			n, letters, digits = n+byRunsTokens(letters, digits), 0, 0
			if !newline {
				n++
			}
			newline = true
			punct, run = 0, 0
			continue
		case r >= 0x2E80 && unicode.IsLetter(r):
			// Han, kana, Hangul: no spaces between words, about a token a character.
			n, letters, digits = n+byRunsTokens(letters, digits), 0, 0
			n++
		case unicode.IsLetter(r) || unicode.Is(unicode.Mn, r):
			// Accented Latin (ç, ã, é) and combining marks stay inside the word.
			if digits > 0 {
				n, digits = n+byRunsTokens(0, digits), 0
			}
			letters++
		case unicode.IsSpace(r):
			n, letters, digits = n+byRunsTokens(letters, digits), 0, 0
		default:
			n, letters, digits = n+byRunsTokens(letters, digits), 0, 0
			// A BPE vocabulary holds runs of one symbol ("........", "____")
			// as single tokens of up to about 8 characters.
			if r == punct && run%symbolsPerToken != 0 {
				run++
				continue
			}
			if r != punct {
				run = 0
			}
			punct = r
			run++
			n++
			newline = false
			continue
		}
		punct, run = 0, 0
		newline = false
	}
	n, letters, digits = n+byRunsTokens(letters, digits), 0, 0
	return n
}

// byRunsTokens is what a run of letters and one of digits cost.
func byRunsTokens(letters, digits int) int {
	return (letters+lettersPerToken-1)/lettersPerToken + (digits+digitsPerToken-1)/digitsPerToken
}

// The kinds of byte approxTokensByRuns counts a run at a time.
const (
	byRunsOther uint8 = iota // any other byte, read as (part of) a rune
	byRunsLetter
	byRunsDigit
	byRunsSpace // ' ' and '\t'
)

// byRunsKinds is each byte's kind.
var byRunsKinds = func() (k [256]uint8) {
	for c := 0; c < 256; c++ {
		switch b := byte(c); {
		case asciiLetter(b):
			k[c] = byRunsLetter
		case asciiDigit(b):
			k[c] = byRunsDigit
		case b == ' ' || b == '\t':
			k[c] = byRunsSpace
		}
	}
	return k
}()

// approxTokensRuneByRune is ApproxTokens as it was before it counted runs
// of ASCII letters, digits and spaces at once: the two must agree.
func approxTokensRuneByRune(text string) int {
	n := 0
	letters, digits := 0, 0
	newline := false
	var punct rune // the previous rune when it was a symbol, for runs like "....."
	run := 0
	flush := func() {
		n += (letters + lettersPerToken - 1) / lettersPerToken
		n += (digits + digitsPerToken - 1) / digitsPerToken
		letters, digits = 0, 0
	}
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		i += size
		switch {
		case r == '\n' || r == '\r':
			flush()
			if !newline {
				n++
			}
			newline = true
			punct, run = 0, 0
			continue
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
			if digits > 0 {
				flush()
			}
			letters++
		case r >= '0' && r <= '9':
			if letters > 0 {
				flush()
			}
			digits++
		case r == ' ' || r == '\t':
			flush()
		case r >= 0x2E80 && unicode.IsLetter(r):
			// Han, kana, Hangul: no spaces between words, about a token a character.
			flush()
			n++
		case unicode.IsLetter(r) || unicode.Is(unicode.Mn, r):
			// Accented Latin (ç, ã, é) and combining marks stay inside the word.
			if digits > 0 {
				flush()
			}
			letters++
		case unicode.IsSpace(r):
			flush()
		default:
			flush()
			// A BPE vocabulary holds runs of one symbol ("........", "____")
			// as single tokens of up to about 8 characters.
			if r == punct && run%symbolsPerToken != 0 {
				run++
				continue
			}
			if r != punct {
				run = 0
			}
			punct = r
			run++
			n++
			newline = false
			continue
		}
		punct, run = 0, 0
		newline = false
	}
	flush()
	return n
}

// TestApproxTokens_Runs holds ApproxTokens to the rune-by-rune count and
// to the count by runs it replaced on every text of the default corpus.
func TestApproxTokens_Runs(t *testing.T) {
	c, err := LoadDefault()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range c.Documents {
		// Each text as written, with CRLF line ends, and cut at 6/7 of its bytes (which may split a rune).
		for _, text := range []string{d.Text, strings.ReplaceAll(d.Text, "\n", "\r\n"), d.Text[:len(d.Text)*6/7]} {
			got, want := ApproxTokens(text), approxTokensRuneByRune(text)
			if byRuns := approxTokensByRuns(text); got != want || byRuns != want {
				t.Errorf("%s: ApproxTokens = %d, by runs %d, rune by rune %d", d.ID, got, byRuns, want)
			}
		}
	}
}

func FuzzApproxTokens(f *testing.F) {
	f.Add("Data de emissão: 12/03/2025\nTotal: R$ 1.234,56")
	f.Add("....____\n\n日本")
	f.Add("ab12 \t cd9x\r\n..a1")
	f.Add("==========a——————————\xff\xff\xffçãé\u0301x\x00\x00日本")
	f.Fuzz(func(t *testing.T, s string) {
		n := ApproxTokens(s)
		if ref, byRuns := approxTokensRuneByRune(s), approxTokensByRuns(s); n != ref || n != byRuns {
			t.Fatalf("ApproxTokens(%q) = %d, by runs %d, rune by rune %d", s, n, byRuns, ref)
		}
		if n < 0 || n > len(s) {
			t.Fatalf("ApproxTokens(%q) = %d, outside [0, %d]", s, n, len(s))
		}
		if strings.TrimSpace(s) != "" && n == 0 {
			t.Fatalf("ApproxTokens(%q) = 0 for non-blank text", s)
		}
	})
}

// TestApproxTokens_Random holds ApproxTokens to the rune-by-rune count on
// random texts of the pieces that matter to it: runs of letters, digits
// and one symbol longer than the 8 bytes it reads at a time, line breaks
// (CRLF too), accented and CJK letters, combining marks, other spaces,
// control bytes, NUL and invalid UTF-8, at every alignment.
func TestApproxTokens_Random(t *testing.T) {
	pieces := []string{
		"a", "Z", "q", "0", "7", " ", "\t", "\v", "\f", "\n", "\r", "\r\n", ".", "-", "=", "_", "/", ",", "$",
		"\x00", "\x1f", "\x7f", "ç", "ã", "É", "º", "\u0301", "日", "한", "—", "€", "\u00a0", "\u2028", "\u0085",
		"\xff", "\xc3", "\xe2\x80", "\xf0\x9f\x98", "🙂", "١",
	}
	rng := rand.New(rand.NewPCG(1, 43))
	for i := range 20000 {
		var b strings.Builder
		for range rng.IntN(40) {
			p := pieces[rng.IntN(len(pieces))]
			for range 1 + rng.IntN(12)*rng.IntN(2) { // runs of up to 12, often of 1
				b.WriteString(p)
			}
		}
		s := b.String()
		got, want := ApproxTokens(s), approxTokensRuneByRune(s)
		if byRuns := approxTokensByRuns(s); got != want || byRuns != want {
			t.Fatalf("case %d: ApproxTokens(%q) = %d, by runs %d, rune by rune %d", i, s, got, byRuns, want)
		}
	}
}

func BenchmarkApproxTokens(b *testing.B) {
	c, err := LoadDefault()
	if err != nil {
		b.Fatal(err)
	}
	size := 0
	for _, d := range c.Documents {
		size += len(d.Text)
	}
	b.SetBytes(int64(size))
	for b.Loop() {
		for _, d := range c.Documents {
			ApproxTokens(d.Text)
		}
	}
}
