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
func ApproxTokens(text string) int {
	n := 0
	letters, digits := 0, 0
	newline := false
	var punct rune // the previous rune when it was a symbol, for runs like "....."
	run := 0
	for i := 0; i < len(text); {
		// Runs of ASCII letters, digits and spaces, most of a text, are
		// counted a run at a time: each byte of a run would do the same.
		switch k := asciiKinds[text[i]]; k {
		case kindLetter, kindDigit, kindSpace:
			j := i + 1
			for j < len(text) && asciiKinds[text[j]] == k {
				j++
			}
			switch k {
			case kindLetter:
				if digits > 0 {
					n, digits = n+runTokens(0, digits), 0
				}
				letters += j - i
			case kindDigit:
				if letters > 0 {
					n, letters = n+runTokens(letters, 0), 0
				}
				digits += j - i
			default:
				n, letters, digits = n+runTokens(letters, digits), 0, 0
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
			n, letters, digits = n+runTokens(letters, digits), 0, 0
			if !newline {
				n++
			}
			newline = true
			punct, run = 0, 0
			continue
		case r >= 0x2E80 && unicode.IsLetter(r):
			// Han, kana, Hangul: no spaces between words, about a token a character.
			n, letters, digits = n+runTokens(letters, digits), 0, 0
			n++
		case unicode.IsLetter(r) || unicode.Is(unicode.Mn, r):
			// Accented Latin (ç, ã, é) and combining marks stay inside the word.
			if digits > 0 {
				n, digits = n+runTokens(0, digits), 0
			}
			letters++
		case unicode.IsSpace(r):
			n, letters, digits = n+runTokens(letters, digits), 0, 0
		default:
			n, letters, digits = n+runTokens(letters, digits), 0, 0
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
	n, letters, digits = n+runTokens(letters, digits), 0, 0
	return n
}

// runTokens is what a run of letters and one of digits cost.
func runTokens(letters, digits int) int {
	return (letters+lettersPerToken-1)/lettersPerToken + (digits+digitsPerToken-1)/digitsPerToken
}

// The kinds of byte ApproxTokens counts a run at a time.
const (
	kindOther uint8 = iota // any other byte, read as (part of) a rune
	kindLetter
	kindDigit
	kindSpace // ' ' and '\t'
)

// asciiKinds is each byte's kind.
var asciiKinds = func() (k [256]uint8) {
	for c := 0; c < 256; c++ {
		switch b := byte(c); {
		case asciiLetter(b):
			k[c] = kindLetter
		case asciiDigit(b):
			k[c] = kindDigit
		case b == ' ' || b == '\t':
			k[c] = kindSpace
		}
	}
	return k
}()

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
