package tokenizer

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"golang.org/x/text/unicode/norm"
)

// normalizer is one step of tokenizer.json's normalizer.
type normalizer interface{ apply(string) string }

type unicodeForm struct{ f norm.Form }

func (u unicodeForm) apply(s string) string { return u.f.String(s) }

type replace struct {
	re      *regexp.Regexp // nil: a plain string
	from    string
	content string
}

func (r replace) apply(s string) string {
	if r.re != nil {
		return r.re.ReplaceAllLiteralString(s, r.content)
	}
	return strings.ReplaceAll(s, r.from, r.content)
}

type step struct {
	Type          string            `json:"type"`
	Normalizers   []json.RawMessage `json:"normalizers"`
	Pretokenizers []json.RawMessage `json:"pretokenizers"`
	Pattern       struct {
		Regex  *string `json:"Regex"`
		String *string `json:"String"`
	} `json:"pattern"`
	Content        string `json:"content"`
	Behavior       string `json:"behavior"`
	Invert         bool   `json:"invert"`
	AddPrefixSpace bool   `json:"add_prefix_space"`
	UseRegex       bool   `json:"use_regex"`
}

// parseNormalizer reads the normalizer at key (null: none).
func parseNormalizer(raw json.RawMessage, key string) ([]normalizer, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var s step
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	switch s.Type {
	case "Sequence":
		var out []normalizer
		for i, n := range s.Normalizers {
			steps, err := parseNormalizer(n, fmt.Sprintf("%s.normalizers[%d]", key, i))
			if err != nil {
				return nil, err
			}
			out = append(out, steps...)
		}
		return out, nil
	case "NFC":
		return []normalizer{unicodeForm{norm.NFC}}, nil
	case "NFD":
		return []normalizer{unicodeForm{norm.NFD}}, nil
	case "NFKC":
		return []normalizer{unicodeForm{norm.NFKC}}, nil
	case "NFKD":
		return []normalizer{unicodeForm{norm.NFKD}}, nil
	case "Replace":
		switch {
		case s.Pattern.String != nil:
			return []normalizer{replace{from: *s.Pattern.String, content: s.Content}}, nil
		case s.Pattern.Regex != nil:
			m, err := compileSplit(*s.Pattern.Regex)
			if err != nil || len(m.alts) != 1 || m.alts[0].re == nil {
				return nil, fmt.Errorf("%s.pattern.Regex %q: only a pattern without lookaround is implemented for Replace", key, *s.Pattern.Regex)
			}
			return []normalizer{replace{re: m.whole, content: s.Content}}, nil
		}
		return nil, fmt.Errorf("%s.pattern: neither String nor Regex", key)
	}
	return nil, fmt.Errorf("%s.type %q: not implemented", key, s.Type)
}

// preTokenizer is one step of tokenizer.json's pre_tokenizer.
type preTokenizer interface {
	split(w string, t *Tokenizer) []string
}

// splitStep is the Split pre-tokenizer with behavior Isolated: each match
// is a word, and so is each stretch between matches.
type splitStep struct{ m *matcher }

func (s splitStep) split(w string, _ *Tokenizer) []string {
	var out []string
	at := 0
	for i := 0; i < len(w); {
		n := s.m.matchAt(w, i)
		if n <= 0 {
			i += runeLen(w, i)
			continue
		}
		if i > at {
			out = append(out, w[at:i])
		}
		out = append(out, w[i:i+n])
		i += n
		at = i
	}
	if at < len(w) {
		out = append(out, w[at:])
	}
	return out
}

// byteLevel maps each byte of a word to its character of the byte-level
// alphabet (use_regex false: the Split before it has cut the words).
type byteLevel struct{ addPrefixSpace bool }

func (b byteLevel) split(w string, t *Tokenizer) []string {
	if b.addPrefixSpace && !strings.HasPrefix(w, " ") {
		w = " " + w
	}
	var sb strings.Builder
	for i := 0; i < len(w); i++ {
		sb.WriteString(t.byteMap[w[i]])
	}
	return []string{sb.String()}
}

// gpt2Pattern is what ByteLevel with use_regex splits by (tokenizers'
// byte_level.rs).
const gpt2Pattern = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`

func parsePreTokenizer(raw json.RawMessage, key string) ([]preTokenizer, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var s step
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	switch s.Type {
	case "Sequence":
		var out []preTokenizer
		for i, p := range s.Pretokenizers {
			steps, err := parsePreTokenizer(p, fmt.Sprintf("%s.pretokenizers[%d]", key, i))
			if err != nil {
				return nil, err
			}
			out = append(out, steps...)
		}
		return out, nil
	case "Split":
		if s.Behavior != "Isolated" || s.Invert {
			return nil, fmt.Errorf("%s: Split behavior %q (invert %v): only Isolated is implemented", key, s.Behavior, s.Invert)
		}
		pat := ""
		switch {
		case s.Pattern.Regex != nil:
			pat = *s.Pattern.Regex
		case s.Pattern.String != nil:
			pat = regexp.QuoteMeta(*s.Pattern.String)
		default:
			return nil, fmt.Errorf("%s.pattern: neither String nor Regex", key)
		}
		if pat == digitCutPattern {
			return []preTokenizer{digitCutStep{}}, nil
		}
		m, err := compileSplit(pat)
		if err != nil {
			return nil, fmt.Errorf("%s.pattern.Regex: %w", key, err)
		}
		return []preTokenizer{splitStep{m}}, nil
	case "ByteLevel":
		var out []preTokenizer
		if s.UseRegex {
			m, err := compileSplit(gpt2Pattern)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", key, err)
			}
			out = append(out, splitStep{m})
		}
		// add_prefix_space applies to the sequence's first word only in
		// tokenizers; a chat prompt's words are cut at added tokens first,
		// which this package cannot tell apart, so it is refused.
		if s.AddPrefixSpace {
			return nil, fmt.Errorf("%s: ByteLevel add_prefix_space is not implemented", key)
		}
		return append(out, byteLevel{}), nil
	}
	return nil, fmt.Errorf("%s.type %q: not implemented", key, s.Type)
}

func hasByteLevel(steps []preTokenizer) bool {
	for _, s := range steps {
		if _, ok := s.(byteLevel); ok {
			return true
		}
	}
	return false
}
