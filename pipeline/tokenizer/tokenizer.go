// Package tokenizer counts a prompt's tokens as a model's own Hugging Face
// tokenizer.json does, for byte-level BPE tokenizers (GPT-2's family: Llama
// 3, Qwen, the committed extract-llama-15m): the added tokens matched first,
// the normalizer, the Split and ByteLevel pre-tokenizers, merges by rank.
// With the model's chat template (template.go) it gives the prompt_tokens
// an engine should report for a chat request, so that an engine that
// tokenises the prompt otherwise (llama.cpp without the model's normalizer)
// is seen doing so (results/SCHEMA.md, passes.prompt_drift_*).
//
// It refuses, naming the key, any part of a tokenizer.json it does not
// implement exactly, rather than count approximately.
package tokenizer

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"
)

// Tokenizer is a loaded tokenizer.json. Its methods are safe for
// concurrent use.
type Tokenizer struct {
	Path   string
	SHA256 string // of the file's bytes, as read

	vocab   map[string]int
	ranks   map[[2]string]int
	added   []addedToken // longest first
	norm    []normalizer
	pre     []preTokenizer
	byteMap [256]string // ByteLevel's alphabet: each byte as the character that stands for it

	mu    sync.Mutex
	cache map[string]int // pre-token → its token count (bounded: wordCacheMax)
}

// wordCacheMax bounds the pre-token cache: a corpus's words repeat, and
// past this many distinct ones the rest are counted each time.
const wordCacheMax = 1 << 16

type addedToken struct {
	content        string
	id             int
	lstrip, rstrip bool
}

// file is the part of tokenizer.json this package reads.
type file struct {
	AddedTokens []struct {
		ID         int    `json:"id"`
		Content    string `json:"content"`
		SingleWord bool   `json:"single_word"`
		LStrip     bool   `json:"lstrip"`
		RStrip     bool   `json:"rstrip"`
		Normalized bool   `json:"normalized"`
	} `json:"added_tokens"`
	Normalizer   json.RawMessage `json:"normalizer"`
	PreTokenizer json.RawMessage `json:"pre_tokenizer"`
	Model        struct {
		Type                    string            `json:"type"`
		Vocab                   map[string]int    `json:"vocab"`
		Merges                  []json.RawMessage `json:"merges"`
		Dropout                 *float64          `json:"dropout"`
		ContinuingSubwordPrefix *string           `json:"continuing_subword_prefix"`
		EndOfWordSuffix         *string           `json:"end_of_word_suffix"`
		ByteFallback            bool              `json:"byte_fallback"`
		IgnoreMerges            bool              `json:"ignore_merges"`
	} `json:"model"`
}

// Load reads a tokenizer.json. An error names the file and the key it
// cannot follow.
func Load(path string) (*Tokenizer, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read tokenizer %s: %w", path, err)
	}
	t, err := parse(raw)
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", path, err)
	}
	sum := sha256.Sum256(raw)
	t.Path, t.SHA256 = path, hex.EncodeToString(sum[:])
	return t, nil
}

func parse(raw []byte) (*Tokenizer, error) {
	var f file
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, fmt.Errorf("not a tokenizer.json: %w", err)
	}
	if err := f.checkModel(); err != nil {
		return nil, err
	}
	ranks, err := mergeRanks(f.Model.Merges)
	if err != nil {
		return nil, err
	}
	t := &Tokenizer{vocab: f.Model.Vocab, ranks: ranks, cache: map[string]int{}}
	if t.added, err = f.addedTokens(); err != nil {
		return nil, err
	}
	if t.norm, err = parseNormalizer(f.Normalizer, "normalizer"); err != nil {
		return nil, err
	}
	if t.pre, err = parsePreTokenizer(f.PreTokenizer, "pre_tokenizer"); err != nil {
		return nil, err
	}
	if !hasByteLevel(t.pre) {
		return nil, fmt.Errorf("pre_tokenizer: no ByteLevel step: only byte-level BPE is counted")
	}
	for b, r := range byteAlphabet() {
		t.byteMap[b] = string(r)
	}
	return t, nil
}

// checkModel refuses a model this package does not count exactly: only a
// plain byte-level BPE is.
func (f *file) checkModel() error {
	m := f.Model
	switch {
	case m.Type != "BPE":
		return fmt.Errorf("model.type %q: only byte-level BPE is counted", m.Type)
	case m.Dropout != nil && *m.Dropout != 0:
		return fmt.Errorf("model.dropout %v: a BPE with dropout does not tokenise deterministically", *m.Dropout)
	case m.ContinuingSubwordPrefix != nil && *m.ContinuingSubwordPrefix != "", m.EndOfWordSuffix != nil && *m.EndOfWordSuffix != "":
		return fmt.Errorf("model: continuing_subword_prefix and end_of_word_suffix are not implemented")
	case m.ByteFallback:
		return fmt.Errorf("model.byte_fallback: not implemented (a SentencePiece-style BPE, not a byte-level one)")
	case m.IgnoreMerges:
		return fmt.Errorf("model.ignore_merges: not implemented")
	case len(m.Vocab) == 0:
		return fmt.Errorf("model.vocab is empty")
	}
	return nil
}

// mergeRanks is each merge's rank, its place in model.merges (the first
// of a repeated pair), from either form a merge is written in: "a b" or
// [a, b].
func mergeRanks(merges []json.RawMessage) (map[[2]string]int, error) {
	ranks := make(map[[2]string]int, len(merges))
	for i, r := range merges {
		var pair [2]string
		var s string
		if err := json.Unmarshal(r, &s); err == nil {
			a, b, ok := strings.Cut(s, " ")
			if !ok {
				return nil, fmt.Errorf("model.merges[%d] %q: not two symbols", i, s)
			}
			pair = [2]string{a, b}
		} else if err := json.Unmarshal(r, &pair); err != nil {
			return nil, fmt.Errorf("model.merges[%d]: neither \"a b\" nor [a, b]", i)
		}
		if _, dup := ranks[pair]; !dup {
			ranks[pair] = i
		}
	}
	return ranks, nil
}

// addedTokens are the file's added tokens, longest first (the first to
// match a text); a kind not implemented is refused.
func (f *file) addedTokens() ([]addedToken, error) {
	var out []addedToken
	for i, a := range f.AddedTokens {
		if a.SingleWord {
			return nil, fmt.Errorf("added_tokens[%d] %q: single_word is not implemented", i, a.Content)
		}
		if a.Normalized {
			return nil, fmt.Errorf("added_tokens[%d] %q: normalized added tokens are not implemented", i, a.Content)
		}
		if a.Content == "" {
			continue
		}
		out = append(out, addedToken{content: a.Content, id: a.ID, lstrip: a.LStrip, rstrip: a.RStrip})
	}
	sort.SliceStable(out, func(i, j int) bool { return len(out[i].content) > len(out[j].content) })
	return out, nil
}

// Count is the number of tokens text encodes to; the added tokens it holds
// (<|eot_id|>) count one each. No post-processor token is added: a chat
// template writes its own.
func (t *Tokenizer) Count(text string) int {
	n := 0
	t.segments(text, func(seg string, special bool) {
		if special {
			n++
			return
		}
		for _, p := range t.pieces(seg) {
			n += t.wordCount(p)
		}
	})
	return n
}

// Encode is text's token ids (as Count counts them), for tests and tools.
func (t *Tokenizer) Encode(text string) []int {
	var ids []int
	t.segments(text, func(seg string, special bool) {
		if special {
			ids = append(ids, t.specialID(seg))
			return
		}
		for _, p := range t.pieces(seg) {
			for _, sym := range t.merge(p) {
				ids = append(ids, t.vocab[sym])
			}
		}
	})
	return ids
}

func (t *Tokenizer) specialID(s string) int {
	for _, a := range t.added {
		if a.content == s {
			return a.id
		}
	}
	return -1
}

// segments cuts text at its added tokens (longest first at each position,
// as tokenizers' AddedVocabulary does), calling fn with each piece of plain
// text and each added token. lstrip/rstrip take the whitespace beside a
// token into it.
func (t *Tokenizer) segments(text string, fn func(seg string, special bool)) {
	start := 0
	for i := 0; i < len(text); {
		a, ok := t.addedAt(text, i)
		if !ok {
			_, w := utf8.DecodeRuneInString(text[i:])
			i += w
			continue
		}
		end := i
		if a.lstrip {
			end = len(strings.TrimRight(text[start:i], " \t\n\r\v\f")) + start
		}
		if end > start {
			fn(text[start:end], false)
		}
		fn(a.content, true)
		i += len(a.content)
		if a.rstrip {
			i += len(text[i:]) - len(strings.TrimLeft(text[i:], " \t\n\r\v\f"))
		}
		start = i
	}
	if start < len(text) {
		fn(text[start:], false)
	}
}

func (t *Tokenizer) addedAt(text string, i int) (addedToken, bool) {
	if text[i] != '<' && !t.anyAddedStartsWith(text[i]) {
		return addedToken{}, false
	}
	for _, a := range t.added {
		if strings.HasPrefix(text[i:], a.content) {
			return a, true
		}
	}
	return addedToken{}, false
}

func (t *Tokenizer) anyAddedStartsWith(b byte) bool {
	for _, a := range t.added {
		if a.content[0] == b {
			return true
		}
	}
	return false
}

// pieces normalises a plain-text segment and pre-tokenises it into the
// byte-level words BPE merges.
func (t *Tokenizer) pieces(seg string) []string {
	for _, n := range t.norm {
		seg = n.apply(seg)
	}
	words := []string{seg}
	for _, p := range t.pre {
		var next []string
		for _, w := range words {
			next = append(next, p.split(w, t)...)
		}
		words = next
	}
	return words
}

// wordCount is the token count of one byte-level word, cached.
func (t *Tokenizer) wordCount(w string) int {
	t.mu.Lock()
	n, ok := t.cache[w]
	t.mu.Unlock()
	if ok {
		return n
	}
	n = len(t.merge(w))
	t.mu.Lock()
	if len(t.cache) < wordCacheMax {
		t.cache[w] = n
	}
	t.mu.Unlock()
	return n
}

// merge applies the merges to a byte-level word, lowest rank first, as
// tokenizers' BPE does without dropout.
func (t *Tokenizer) merge(w string) []string {
	parts := make([]string, 0, len(w))
	for _, r := range w {
		parts = append(parts, string(r))
	}
	for len(parts) > 1 {
		best, bestRank := -1, int(^uint(0)>>1)
		for i := 0; i+1 < len(parts); i++ {
			if r, ok := t.ranks[[2]string{parts[i], parts[i+1]}]; ok && r < bestRank {
				best, bestRank = i, r
			}
		}
		if best < 0 {
			break
		}
		parts[best] += parts[best+1]
		parts = append(parts[:best+1], parts[best+2:]...)
	}
	return parts
}

// byteAlphabet is GPT-2's bytes_to_unicode: printable bytes stand for
// themselves, the others are shifted past 255.
func byteAlphabet() [256]rune {
	var out [256]rune
	n := 0
	for b := 0; b < 256; b++ {
		if b >= '!' && b <= '~' || b >= 0xA1 && b <= 0xAC || b >= 0xAE && b <= 0xFF {
			out[b] = rune(b)
			continue
		}
		out[b] = rune(256 + n)
		n++
	}
	return out
}

// WithoutNormalizer is t with its normalizer left out (Prompt.WithoutNormalizer).
func (t *Tokenizer) WithoutNormalizer() *Tokenizer {
	return &Tokenizer{Path: t.Path, SHA256: t.SHA256, vocab: t.vocab, ranks: t.ranks, added: t.added, pre: t.pre, byteMap: t.byteMap, cache: map[string]int{}}
}
