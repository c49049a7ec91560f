package eval

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/extractbench/extractbench"
)

// CacheShareTolerance is how far, in share of the prompt (0.10 = 10
// percentage points), a level's cached prompt share may stray from its
// baseline's, or its repetitions' from one another, before the comparison
// is labelled: a pass whose prompts came from an earlier pass's cache
// measures the cache, not prefill (6-43% of prompt tokens cached between
// identical llama.cpp passes on an H200, and tokens/s followed them). The
// share every prompt's shared instructions give is the same at every
// level, so an honest comparison stays well within it.
const CacheShareTolerance = 0.10

// cacheTally is what a level's passes say of the engine's prompt cache.
type cacheTally struct {
	shares []float64      // cached_prompt_share of the passes that reported it
	resets map[string]int // cache_reset values, how many passes each
	order  []string       // cache_reset values in the order first seen
}

func (t *cacheTally) add(p *extractbench.Pass) {
	if p.CachedPromptShare != nil {
		t.shares = append(t.shares, *p.CachedPromptShare)
	}
	if p.CacheReset == "" {
		return // a row from before the reset was recorded
	}
	if t.resets == nil {
		t.resets = map[string]int{}
	}
	if t.resets[p.CacheReset] == 0 {
		t.order = append(t.order, p.CacheReset)
	}
	t.resets[p.CacheReset]++
}

// close sets the level's cache figures: the share's spread (nil when no
// pass reported it), what became of the cache unless every pass was reset,
// and the label of repetitions whose shares differ beyond the tolerance.
func (t *cacheTally) close(l *Level) {
	if len(t.shares) > 0 {
		s := spreadOf(t.shares)
		l.CachedPromptShare = &s
		if s.Max-s.Min > CacheShareTolerance {
			l.CacheNote = fmt.Sprintf("cached prompt share %s to %s across its repetitions (more than %s apart)",
				FormatShare(s.Min), FormatShare(s.Max), pointsText(CacheShareTolerance))
		}
	}
	if len(t.order) == 1 && t.order[0] == "reset" {
		return
	}
	parts := make([]string, len(t.order))
	for i, r := range t.order {
		parts[i] = fmt.Sprintf("%s ×%d", r, t.resets[r])
	}
	l.CacheReset = strings.Join(parts, ", ")
}

// labelCacheShares labels each level of s whose cached prompt share
// (median over its repetitions) differs from the baseline's by more than
// CacheShareTolerance: its latency and throughput are not compared with
// the baseline's on equal terms.
func labelCacheShares(s *Series) {
	base := s.Baseline()
	if base == nil || base.CachedPromptShare == nil {
		return
	}
	for i := range s.Levels {
		l := &s.Levels[i]
		if l.Level == base.Level || l.CachedPromptShare == nil {
			continue
		}
		d := l.CachedPromptShare.Median - base.CachedPromptShare.Median
		if math.Abs(d) <= CacheShareTolerance {
			continue
		}
		note := fmt.Sprintf("cached prompt share %s against the baseline's %s (level %s): %+.0f points, more than %s",
			FormatShare(l.CachedPromptShare.Median), FormatShare(base.CachedPromptShare.Median), LevelName(base.Mode, base.Level), d*100, pointsText(CacheShareTolerance))
		l.CacheNote = strings.Join(slices.DeleteFunc([]string{note, l.CacheNote}, func(s string) bool { return s == "" }), "; ")
	}
}

func pointsText(share float64) string { return fmt.Sprintf("%.0f points", share*100) }
