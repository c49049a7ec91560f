package compare

import (
	"sort"

	"github.com/extractbench/extractbench/sizing"
)

// LevelFigures are one variant's figures at one level over its complete
// repetitions: the median for latency and throughput, the highest for
// memory peaks. Nil means not measured.
type LevelFigures struct {
	Repetitions      int      `json:"repetitions"`
	AcceptedShare    float64  `json:"accepted_share"` // mean over repetitions
	TTFTP50NS        *int64   `json:"ttft_p50_ns"`
	TTFTP95NS        *int64   `json:"ttft_p95_ns"`
	E2EP50NS         *int64   `json:"e2e_p50_ns"`
	E2EP95NS         *int64   `json:"e2e_p95_ns"`
	DocsPerHour      *float64 `json:"docs_per_hour"` // accepted documents per hour
	OutputTokensPerS *float64 `json:"output_tokens_per_s"`
	PeakGPUMemBytes  *int64   `json:"peak_gpu_mem_bytes"`
	PeakTorchAlloc   *int64   `json:"peak_torch_allocated_bytes"`
	PeakTorchReserve *int64   `json:"peak_torch_reserved_bytes"`
	PeakKVUsage      *float64 `json:"peak_kv_usage"`
	Usable           bool     `json:"usable"`
}

// LevelRow sets A and B side by side at one level both measured.
type LevelRow struct {
	Level int          `json:"level"`
	A     LevelFigures `json:"a"`
	B     LevelFigures `json:"b"`
}

// levelRows builds a row for each level both sides measured in mode.
func levelRows(a, b *loaded, mode string) []LevelRow {
	fa, fb := levelFigures(a, mode), levelFigures(b, mode)
	var levels []int
	for lv := range fa {
		if _, ok := fb[lv]; ok {
			levels = append(levels, lv)
		}
	}
	sort.Ints(levels)
	rows := make([]LevelRow, 0, len(levels))
	for _, lv := range levels {
		rows = append(rows, LevelRow{Level: lv, A: fa[lv], B: fb[lv]})
	}
	return rows
}

// LevelsOf summarises a run's passes of one variant and mode per level.
func LevelsOf(run *sizing.RunData, variant, mode string) map[int]LevelFigures {
	passes := map[int][]sizing.Pass{}
	var figs []sizing.PassFigures
	for _, p := range run.Passes {
		if p.Variant != variant || p.Mode != mode || !(p.Status == "" || p.Status == "complete") {
			continue
		}
		passes[p.Level] = append(passes[p.Level], p)
		figs = append(figs, p.PassFigures)
	}
	rec := sizing.Recommend(figs, run.Manifest.Acceptance)
	out := map[int]LevelFigures{}
	for lv, ps := range passes {
		f := LevelFigures{Repetitions: len(ps)}
		var share float64
		var ttft50, ttft95, e2e50, e2e95 []int64
		var dph, tok []float64
		for _, p := range ps {
			share += p.Share()
			ttft50, ttft95 = appendInt(ttft50, p.TTFTP50NS), appendInt(ttft95, p.TTFTP95NS)
			e2e50 = appendInt(e2e50, p.E2EP50NS)
			if p.E2EP95NS > 0 {
				e2e95 = append(e2e95, p.E2EP95NS)
			}
			dph, tok = appendFloat(dph, p.DocsPerHour), appendFloat(tok, p.OutputTokensPerS)
			f.PeakGPUMemBytes = maxPtr(f.PeakGPUMemBytes, p.PeakGPUMemBytes)
			f.PeakTorchAlloc = maxPtr(f.PeakTorchAlloc, p.PeakTorchAllocatedBytes)
			f.PeakTorchReserve = maxPtr(f.PeakTorchReserve, p.PeakTorchReservedBytes)
			f.PeakKVUsage = maxPtr(f.PeakKVUsage, p.PeakKVUsage)
		}
		f.AcceptedShare = share / float64(len(ps))
		f.TTFTP50NS, f.TTFTP95NS = medianInt(ttft50), medianInt(ttft95)
		f.E2EP50NS, f.E2EP95NS = medianInt(e2e50), medianInt(e2e95)
		f.DocsPerHour, f.OutputTokensPerS = medianFloat(dph), medianFloat(tok)
		if lv, ok := rec.Level(lv); ok {
			f.Usable = lv.Usable
		}
		out[lv] = f
	}
	return out
}

func levelFigures(l *loaded, mode string) map[int]LevelFigures {
	return LevelsOf(l.run, l.variant, mode)
}

func appendInt(s []int64, v *int64) []int64 {
	if v == nil {
		return s
	}
	return append(s, *v)
}

func appendFloat(s []float64, v *float64) []float64 {
	if v == nil {
		return s
	}
	return append(s, *v)
}

// medianInt is the middle value (the mean of the two middle ones), nil for none.
func medianInt(s []int64) *int64 {
	if len(s) == 0 {
		return nil
	}
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return &m
}

func medianFloat(s []float64) *float64 {
	if len(s) == 0 {
		return nil
	}
	sort.Float64s(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return &m
}

func maxPtr[T int64 | float64](cur, v *T) *T {
	if v == nil || (cur != nil && *cur >= *v) {
		return cur
	}
	x := *v
	return &x
}
