package report

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/corpus"
	"github.com/extractbench/extractbench/eval"
)

// Limits of the document lists.
const (
	slowestDocs  = 10  // documents listed as the slowest of a series
	excerptRunes = 160 // characters of document text or output shown per document
)

// slowDoc is one of the slowest documents at the level the report reads
// (the recommended one, else the baseline).
type slowDoc struct {
	DocID, LengthClass string
	Level              int
	E2E, TTFT, Queue   int64 // median over repetitions, ns
	PromptTokens       int64
	CompletionTokens   int64
	Outcome            string // "accepted" or the failure class
	Why                string
	Excerpt            string
}

// failedDoc is one document that failed in at least one pass of a series.
type failedDoc struct {
	DocID, LengthClass string
	Failed, Passes     int            // passes it failed in, passes it ran in
	Classes            map[string]int // failure class → passes
	Levels             []int          // levels where it failed, ascending
	Class              string         // failure class of its first failure (lowest level, repetition)
	Reason             string         // failure detail of that first failure
	Output             string         // excerpt of that output
	Excerpt            string         // excerpt of the document text
}

// ClassList renders the failure classes with their counts, in precedence order.
func (f failedDoc) ClassList() string {
	var parts []string
	for _, f2 := range extractbench.Failures {
		c := string(f2)
		if n := f.Classes[c]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s×%d", c, n))
		}
	}
	return strings.Join(parts, ", ")
}

// readLevel is the level whose slowest documents the report lists: the
// recommended one, else the lowest measured.
func (s *series) readLevel() int { return readLevelOf(s.Rec, s.Levels) }

func readLevelOf(rec eval.Recommendation, levels []eval.Level) int {
	if rec.Usable() {
		return rec.Recommended
	}
	if len(levels) > 0 {
		return levels[0].Level
	}
	return 0
}

// slowest lists the documents with the longest median E2E at the read
// level (scanned by slowestAt), with their text's excerpt.
func slowest(s *series, texts map[string]string) []slowDoc {
	out := slices.Clone(s.Slowest)
	for i := range out {
		out[i].Excerpt = excerpt(texts[out[i].DocID])
	}
	return out
}

// slowWhy names what made a document slow, from the figures at hand: time in
// the client's queue, time to the first token (prefill, engine queue) or the
// tokens it generated.
func slowWhy(d slowDoc) string {
	var parts []string
	if d.LengthClass != "" {
		parts = append(parts, d.LengthClass+" document")
	}
	if d.PromptTokens > 0 {
		parts = append(parts, fmt.Sprintf("%d prompt tokens", d.PromptTokens))
	}
	if d.CompletionTokens > 0 {
		parts = append(parts, fmt.Sprintf("%d output tokens", d.CompletionTokens))
	}
	if d.E2E > 0 && d.TTFT > d.E2E/2 {
		parts = append(parts, "most of it before the first token")
	}
	if d.E2E > 0 && d.Queue > d.E2E/10 {
		parts = append(parts, "waited "+fmtNS(float64(d.Queue))+" in the client queue")
	}
	return strings.Join(parts, "; ")
}

// medianNS is distOf(v).P50 (eval.Percentile's type 7 over the values as
// float64s) without the rest of the distribution: slowestAt takes three a
// document, and the whole distribution cost more than the scan's SQLite.
func medianNS(v []int64) int64 {
	if len(v) == 0 {
		return 0
	}
	f := make([]float64, len(v))
	for i, x := range v {
		f[i] = float64(x)
	}
	slices.Sort(f)
	return int64(eval.Percentile(f, 50))
}

// failed lists every document that failed in at least one complete pass of
// the series (counted by scanSeries), in document order, with its text's
// excerpt.
func failed(s *series, texts map[string]string) []failedDoc {
	out := slices.Clone(s.Failed)
	for i := range out {
		out[i].Excerpt = excerpt(texts[out[i].DocID])
	}
	return out
}

// excerpt keeps the first excerptRunes characters of s with whitespace
// collapsed and control characters dropped. It is plain text: the templates
// escape it, and nothing in it becomes a link.
func excerpt(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	var b strings.Builder
	n := 0
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) {
			space = b.Len() > 0
			continue
		}
		if unicode.IsControl(r) {
			continue
		}
		if n >= excerptRunes {
			b.WriteString("…")
			break
		}
		if space {
			b.WriteByte(' ')
			n++
			space = false
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}

// corpusTexts reads the run's documents for excerpts, from the corpus path
// the manifest names (the embedded default, an absolute path, or one relative
// to the results directory or to the working directory). It returns nil and
// a note saying why when the corpus is not there or is not the one the run
// measured: text from another corpus would mislabel the failures.
func corpusTexts(dir string, info extractbench.CorpusInfo) (map[string]string, string) {
	if info.Path == "" {
		return nil, "document excerpts unavailable: the run manifest names no corpus path"
	}
	if info.Path == corpus.DefaultName {
		return textsOf(corpus.LoadDefault, info.Path, info.SHA256)
	}
	var tried []string
	for _, p := range corpusCandidates(dir, info.Path) {
		if _, err := os.Stat(p); err != nil {
			tried = append(tried, p)
			continue
		}
		return textsOf(func() (*corpus.Corpus, error) { return corpus.Load(p) }, p, info.SHA256)
	}
	// The same content elsewhere is the same corpus: the hash pins it.
	if def, err := corpus.LoadDefault(); err == nil && info.SHA256 != "" && def.Manifest.SHA256 == info.SHA256 {
		return textsOf(func() (*corpus.Corpus, error) { return def, nil }, corpus.DefaultName, info.SHA256)
	}
	return nil, "document excerpts unavailable: corpus not found at " + strings.Join(tried, " or ")
}

// textsOf loads a corpus and maps its ids to texts, or says why not.
func textsOf(load func() (*corpus.Corpus, error), name, sha string) (map[string]string, string) {
	c, err := load()
	if err != nil {
		return nil, fmt.Sprintf("document excerpts unavailable: load corpus %s: %v", name, firstLine(err.Error()))
	}
	if sha != "" && c.Manifest.SHA256 != sha {
		return nil, fmt.Sprintf("document excerpts unavailable: corpus %s has sha256 %.12s…, the run measured %.12s…", name, c.Manifest.SHA256, sha)
	}
	texts := make(map[string]string, len(c.Documents))
	for _, d := range c.Documents {
		texts[d.ID] = d.Text
	}
	return texts, ""
}

func corpusCandidates(dir, path string) []string {
	if filepath.IsAbs(path) {
		return []string{path}
	}
	return []string{filepath.Join(dir, path), path}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
