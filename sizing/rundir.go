package sizing

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"

	_ "github.com/mattn/go-sqlite3" // the results.db driver
)

// DBName is the results database's file name inside a results directory.
const DBName = "results.db"

// Manifest is the part of runs.manifest the decisions read. Unknown keys
// are ignored; RunData.RawManifest keeps the whole document.
type Manifest struct {
	ProtocolName string     `json:"protocol_name"`
	Corpus       CorpusInfo `json:"corpus"`
	Parse        string     `json:"parse"`
	Generation   struct {
		MaxTokens   int      `json:"max_tokens"`
		Temperature *float64 `json:"temperature"`
	} `json:"generation"`
	Acceptance Acceptance `json:"acceptance"`
	Sweep      struct {
		Mode        string `json:"mode"`
		Levels      []int  `json:"levels"`
		Repetitions int    `json:"repetitions"`
	} `json:"sweep"`
	Simulated bool              `json:"simulated"`
	Model     string            `json:"model"`
	Engine    EngineInfo        `json:"engine"`
	GPU       GPUInfo           `json:"gpu"`
	Variants  []VariantManifest `json:"variants"`
}

// CorpusInfo pins the corpus a run measured.
type CorpusInfo struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	Count  int    `json:"count"`
}

// EngineInfo is an engine as the manifest pins it.
type EngineInfo struct {
	URL           string `json:"url"`
	Kind          string `json:"kind"`
	Version       string `json:"version"`
	Model         string `json:"model"`
	Revision      string `json:"revision"`
	ContextWindow int    `json:"context_window"`
	Simulated     bool   `json:"simulated"`
	RandomWeights bool   `json:"random_weights"` // the model's answers (so quality figures) mean nothing
}

// GPUInfo is the card a variant ran on, as nvidia-smi (or the built-in
// engine's profile) reported it.
type GPUInfo struct {
	Name             string `json:"name"`
	MemoryTotalBytes int64  `json:"memory_total_bytes"`
	Driver           string `json:"driver"`
	CUDA             string `json:"cuda"`
	Source           string `json:"source"`
}

// VariantManifest is one variant's engine and card.
type VariantManifest struct {
	Name   string     `json:"name"`
	Engine EngineInfo `json:"engine"`
	GPU    GPUInfo    `json:"gpu"`
}

// Variant returns the named variant's engine and card, falling back to the
// manifest's top-level ones (which describe the first variant).
func (m Manifest) Variant(name string) VariantManifest {
	for _, v := range m.Variants {
		if v.Name == name {
			if v.GPU.Name == "" {
				v.GPU = m.GPU
			}
			if v.Engine.Model == "" {
				v.Engine.Model = m.Model
			}
			return v
		}
	}
	eng := m.Engine
	if eng.Model == "" {
		eng.Model = m.Model
	}
	return VariantManifest{Name: name, Engine: eng, GPU: m.GPU}
}

// Pass is one row of the passes table as the decisions read it. Nullable
// columns are pointers: nil means unavailable, never 0.
type Pass struct {
	PassFigures
	Attempt                 int      `json:"attempt"`
	SentConcurrency         int      `json:"sent_concurrency"`
	DurationNS              int64    `json:"duration_ns"`
	TTFTP50NS               *int64   `json:"ttft_p50_ns"`
	TTFTP95NS               *int64   `json:"ttft_p95_ns"`
	E2EP50NS                *int64   `json:"e2e_p50_ns"`
	OutputTokens            int64    `json:"output_tokens"`
	OutputTokensPerS        *float64 `json:"output_tokens_per_s"`
	AcceptedPerS            *float64 `json:"accepted_per_s"`
	DocsPerHour             *float64 `json:"docs_per_hour"`
	PeakGPUMemBytes         *int64   `json:"peak_gpu_mem_bytes"`
	PeakTorchAllocatedBytes *int64   `json:"peak_torch_allocated_bytes"`
	PeakTorchReservedBytes  *int64   `json:"peak_torch_reserved_bytes"`
	PeakKVUsage             *float64 `json:"peak_kv_usage"`
	Verdict                 string   `json:"verdict"`
	VerdictReason           string   `json:"verdict_reason"`
}

// Event is one row of the events table.
type Event struct {
	Variant string `json:"variant"`
	AtMS    int64  `json:"at_ms"`
	Kind    string `json:"kind"`
	ValueNS *int64 `json:"value_ns"`
	Detail  string `json:"detail"`
}

// RunData is the latest run of a results directory: its runs row, decoded
// manifest, passes and events.
type RunData struct {
	Dir          string          `json:"dir"`
	RunID        string          `json:"run_id"`
	Fingerprint  string          `json:"fingerprint"`
	ProtocolName string          `json:"protocol_name"`
	Status       string          `json:"status"`
	StartedAt    int64           `json:"started_at"` // unix ms; 0 = unset
	EndedAt      int64           `json:"ended_at"`   // unix ms; 0 = unset
	Simulated    bool            `json:"simulated"`
	Manifest     Manifest        `json:"-"`
	RawManifest  json.RawMessage `json:"manifest"`
	Passes       []Pass          `json:"passes"`
	Events       []Event         `json:"events"`
}

// Figures returns the passes' verdict figures, in stored order.
func (d *RunData) Figures() []PassFigures {
	out := make([]PassFigures, len(d.Passes))
	for i, p := range d.Passes {
		out[i] = p.PassFigures
	}
	return out
}

// Variants lists the variants that have passes, in stored order.
func (d *RunData) Variants() []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range d.Passes {
		if !seen[p.Variant] {
			seen[p.Variant] = true
			out = append(out, p.Variant)
		}
	}
	return out
}

// OpenDB opens dir/results.db read-only: the decisions never write to a
// results directory, and a missing database is an error, not a new file.
func OpenDB(dir string) (*sql.DB, error) {
	path := filepath.Join(dir, DBName)
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("open results %s: %w (is it a results directory written by extractbench run?)", dir, err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open results %s: %w", dir, err)
	}
	u := url.URL{Scheme: "file", Path: abs, RawQuery: "mode=ro&_busy_timeout=5000"}
	db, err := sql.Open("sqlite3", u.String())
	if err != nil {
		return nil, fmt.Errorf("open results %s: %w", path, err)
	}
	return db, nil
}

// LoadRun reads the latest run of a results directory (by started_at) with
// its passes and events.
func LoadRun(ctx context.Context, dir string) (*RunData, error) {
	db, err := OpenDB(dir)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return ReadRun(ctx, db, dir, "")
}

// ReadRun reads one run from an open results database; runID "" means the
// latest.
func ReadRun(ctx context.Context, db *sql.DB, dir, runID string) (*RunData, error) {
	d := &RunData{Dir: dir}
	var started, ended sql.NullInt64
	var manifest string
	q := `SELECT run_id, fingerprint, protocol_name, manifest, started_at, ended_at, status, simulated
		FROM runs WHERE run_id = ? OR ? = '' ORDER BY started_at DESC, rowid DESC LIMIT 1`
	err := db.QueryRowContext(ctx, q, runID, runID).Scan(&d.RunID, &d.Fingerprint, &d.ProtocolName, &manifest,
		&started, &ended, &d.Status, &d.Simulated)
	if errors.Is(err, sql.ErrNoRows) {
		if runID != "" {
			return nil, fmt.Errorf("read run %s in %s: no such run", runID, dir)
		}
		return nil, fmt.Errorf("read runs in %s: the results database holds no run yet", dir)
	}
	if err != nil {
		return nil, fmt.Errorf("read run in %s: %w", dir, err)
	}
	d.StartedAt, d.EndedAt = started.Int64, ended.Int64
	d.RawManifest = json.RawMessage(manifest)
	if err := json.Unmarshal(d.RawManifest, &d.Manifest); err != nil {
		return nil, fmt.Errorf("decode manifest of run %s in %s: %w", d.RunID, dir, err)
	}
	if d.Passes, err = readPasses(ctx, db, d.RunID); err != nil {
		return nil, fmt.Errorf("read passes of run %s in %s: %w", d.RunID, dir, err)
	}
	if d.Events, err = readEvents(ctx, db, d.RunID); err != nil {
		return nil, fmt.Errorf("read events of run %s in %s: %w", d.RunID, dir, err)
	}
	return d, nil
}

func readPasses(ctx context.Context, db *sql.DB, runID string) ([]Pass, error) {
	rows, err := db.QueryContext(ctx, `SELECT variant, mode, level, repetition, phase, status, attempt,
		sent_concurrency, docs, accepted, failures_memory, failures_truncation, failures_format, failures_quality,
		failures_error, duration_ns, ttft_p50_ns, ttft_p95_ns, e2e_p50_ns, e2e_p95_ns, output_tokens,
		output_tokens_per_s, accepted_per_s, docs_per_hour, peak_gpu_mem_bytes, peak_torch_allocated_bytes,
		peak_torch_reserved_bytes, peak_kv_usage, verdict, verdict_reason, preemptions
		FROM passes WHERE run_id = ? ORDER BY variant, mode, level, repetition`, runID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Pass
	for rows.Next() {
		var p Pass
		var ttft50, ttft95, e2e50, e2e95, peakMem, peakAlloc, peakRes, preempt sql.NullInt64
		var tokS, accS, dph, kv sql.NullFloat64
		var verdict, reason sql.NullString
		if err := rows.Scan(&p.Variant, &p.Mode, &p.Level, &p.Repetition, &p.Phase, &p.Status, &p.Attempt,
			&p.SentConcurrency, &p.Docs, &p.Accepted, &p.FailuresMemory, &p.FailuresTruncation, &p.FailuresFormat,
			&p.FailuresQuality, &p.FailuresError, &p.DurationNS, &ttft50, &ttft95, &e2e50, &e2e95, &p.OutputTokens,
			&tokS, &accS, &dph, &peakMem, &peakAlloc, &peakRes, &kv, &verdict, &reason, &preempt); err != nil {
			return nil, err
		}
		p.TTFTP50NS, p.TTFTP95NS, p.E2EP50NS = intPtr(ttft50), intPtr(ttft95), intPtr(e2e50)
		p.E2EP95NS = e2e95.Int64
		p.OutputTokensPerS, p.AcceptedPerS, p.DocsPerHour = floatPtr(tokS), floatPtr(accS), floatPtr(dph)
		p.PeakGPUMemBytes, p.PeakTorchAllocatedBytes, p.PeakTorchReservedBytes = intPtr(peakMem), intPtr(peakAlloc), intPtr(peakRes)
		p.PeakKVUsage = floatPtr(kv)
		p.Preemptions = intPtr(preempt)
		p.Verdict, p.VerdictReason = verdict.String, reason.String
		out = append(out, p)
	}
	return out, rows.Err()
}

func readEvents(ctx context.Context, db *sql.DB, runID string) ([]Event, error) {
	rows, err := db.QueryContext(ctx, `SELECT variant, at_ms, kind, value_ns, detail FROM events
		WHERE run_id = ? ORDER BY at_ms, rowid`, runID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		var e Event
		var variant, detail sql.NullString
		var v sql.NullInt64
		if err := rows.Scan(&variant, &e.AtMS, &e.Kind, &v, &detail); err != nil {
			return nil, err
		}
		e.Variant, e.ValueNS, e.Detail = variant.String, intPtr(v), detail.String
		out = append(out, e)
	}
	return out, rows.Err()
}

func intPtr(v sql.NullInt64) *int64 {
	if !v.Valid {
		return nil
	}
	return &v.Int64
}

func floatPtr(v sql.NullFloat64) *float64 {
	if !v.Valid {
		return nil
	}
	return &v.Float64
}
