package merge

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/pipeline/passrow"
	"github.com/extractbench/extractbench/pipeline/protocol"
	"github.com/extractbench/extractbench/results"
)

// Options configure one merge (`extractbench merge`).
type Options struct {
	OutDir   string    // the merged run's results directory
	Dirs     []string  // the shards' results directories
	Progress io.Writer // one line per shard and what was found; nil = none
	// Derived are files in OutDir that the caller makes from results.db
	// after Merge returns (the report): removed, with the Parquet and CSV
	// exports, before the new results.db replaces the previous one, so that
	// a merge killed in between never leaves them beside a db they do not
	// describe.
	Derived []string
}

// Report is what a merge built and found: the merged run, its shards,
// what was missing or repeated, and the merged passes and verdicts, for
// the command's table and -json.
type Report struct {
	RunID       string                     `json:"run_id"`
	Fingerprint string                     `json:"fingerprint"`
	OutDir      string                     `json:"out_dir"`
	Protocol    string                     `json:"protocol"`
	Simulated   bool                       `json:"simulated"`
	Status      string                     `json:"status"` // complete only when every shard is there and complete
	Count       int                        `json:"count"`  // the shards' count N
	Shards      []extractbench.MergedShard `json:"shards"`
	Missing     []int                      `json:"missing,omitempty"`
	// DuplicateIndexes are shard indexes more than one directory held.
	DuplicateIndexes []int `json:"duplicate_indexes,omitempty"`
	Rows             int64 `json:"rows"`       // request rows in the merged run
	Duplicates       int64 `json:"duplicates"` // (pass, document) rows dropped: another shard had them first
	// DuplicateRows name the first duplicates (pass, document, where).
	DuplicateRows []string `json:"duplicate_rows,omitempty"`
	// Unsealed name the shards that have no digest of their rows (written
	// before digests, or killed mid-run), or none of their request_fields
	// rows (sealed before those were digested): checked, but an edit of
	// the rows not covered is not seen.
	Unsealed []string            `json:"unsealed,omitempty"`
	Passes   []extractbench.Pass `json:"passes"`
	Variants []results.Outcome   `json:"variants"`
	Passed   bool                `json:"passed"`
	Exports  []string            `json:"exports"`
	Elapsed  time.Duration       `json:"elapsed_ns"`
}

// Incomplete reports whether the merged run lacks a shard or holds one
// that did not complete: re-run the merge when the retried shard lands.
func (s *Report) Incomplete() bool { return s.Status != results.RunComplete }

// mergeInput is one shard directory being merged.
type mergeInput struct {
	dir      string
	rd       *results.Reader
	run      results.Run
	manifest extractbench.Manifest
	passes   []extractbench.Pass
	offset   int64 // added to its instants: its clock origin − the merged one
	info     *extractbench.MergedShard
}

// merger builds one merged run.
type merger struct {
	opts     Options
	shards   []*mergeInput         // by shard index, then directory
	manifest extractbench.Manifest // the merged run's
	store    *results.Store
	acct     *passrow.Account // the pass rows' tally, as the run's: the protocol, the merged store, the shards' spans
	sum      *Report
}

// mergeTmp is the directory inside -out where a merge builds results.db
// before it replaces the previous one.
const mergeTmp = ".merge-tmp"

// Merge builds one run from the results directories of the shards of a run
// (`run -shard I/N`): every request row, rebased on one clock, each
// (pass, document) once; each pass's row recomputed from the union by the
// runner's own code (passrow's tally, eval's aggregate and verdict), so that every
// page reads a merged run as it reads any run. It refuses shards of
// different fingerprints or shard counts (ConfigError: nothing is written)
// and reports missing shard indexes and duplicate rows. The merged
// results.db replaces the one in OutDir, which must be a previous merge of
// the same fingerprint: merging again after a retried shard lands gives
// the run a merge of all of them gives.
func Merge(ctx context.Context, opts Options) (*Report, error) {
	started := time.Now()
	if opts.Progress == nil {
		opts.Progress = io.Discard
	}
	if opts.OutDir == "" {
		return nil, &ConfigError{errors.New("merge: -out DIR is required")}
	}
	if len(opts.Dirs) == 0 {
		return nil, &ConfigError{errors.New("merge: no shard directory given (merge -out DIR SHARD_DIR... or a glob such as 'results/shard-*')")}
	}
	mg := &merger{opts: opts, sum: &Report{OutDir: opts.OutDir}}
	defer mg.closeInputs()
	if err := mg.openInputs(ctx); err != nil {
		return nil, err
	}
	if err := mg.plan(); err != nil {
		return nil, err
	}
	if err := mg.audit(ctx); err != nil {
		return nil, err
	}
	lock, err := lockOut(opts.OutDir)
	if err != nil {
		return nil, err
	}
	defer lock.Unlock()
	if err := mg.checkOut(ctx); err != nil {
		return nil, err
	}
	if err := mg.build(ctx); err != nil {
		return nil, err
	}
	sum := mg.sum
	data, err := results.LoadRun(ctx, opts.OutDir)
	if err != nil {
		return sum, fmt.Errorf("merge: read the merged run back: %w", err)
	}
	sum.Passes, sum.Variants = data.Passes, data.Outcomes()
	sum.Passed = !sum.Incomplete() && len(sum.Variants) == len(mg.manifest.Variants)
	for _, v := range sum.Variants {
		sum.Passed = sum.Passed && v.Passed()
	}
	files, err := results.ExportBoundedAfterRequests(ctx, opts.OutDir) // peak RSS flat in rows
	sum.Exports = files
	sum.Elapsed = time.Since(started)
	if err != nil {
		return sum, fmt.Errorf("merge: export the merged run: %w", err)
	}
	return sum, nil
}

// openInputs opens every shard directory read-only and reads its run.
func (mg *merger) openInputs(ctx context.Context) error {
	out, _ := filepath.Abs(mg.opts.OutDir)
	for _, dir := range mg.opts.Dirs {
		if abs, _ := filepath.Abs(dir); abs == out {
			return &ConfigError{fmt.Errorf("merge: %s is both a shard and -out; write the merged run elsewhere", dir)}
		}
		rd, err := results.OpenReadOnly(ctx, dir)
		if err != nil {
			var re *results.RefusedError
			if errors.As(err, &re) {
				return &ConfigError{fmt.Errorf("merge: %w", err)}
			}
			return fmt.Errorf("merge: %w", err)
		}
		in := &mergeInput{dir: dir, rd: rd}
		mg.shards = append(mg.shards, in)
		runs, err := rd.Runs(ctx)
		if err != nil {
			return fmt.Errorf("merge: read the runs in %s: %w", dir, err)
		}
		if len(runs) != 1 {
			return &ConfigError{fmt.Errorf("merge: %s holds %d runs; a shard's directory holds one run (run -shard I/N -out DIR)", dir, len(runs))}
		}
		in.run = runs[0]
		if err := json.Unmarshal(in.run.Manifest, &in.manifest); err != nil {
			return fmt.Errorf("merge: read the manifest of run %s in %s: %w", in.run.RunID, dir, err)
		}
		switch {
		case in.manifest.Merge != nil:
			return &ConfigError{fmt.Errorf("merge: %s holds a merged run; give the shards' directories", dir)}
		case in.manifest.Shard == nil:
			return &ConfigError{fmt.Errorf("merge: %s holds run %s of the whole corpus, not a shard (write shards with run -shard I/N)", dir, in.run.RunID)}
		}
		if in.passes, err = rd.Passes(ctx, in.run.RunID); err != nil {
			return fmt.Errorf("merge: %w", err)
		}
	}
	return nil
}

func (mg *merger) closeInputs() {
	for _, in := range mg.shards {
		in.rd.Close()
	}
}

// plan checks that the shards belong together (one fingerprint, one shard
// count), orders them, finds the missing and repeated indexes and sets the
// merged clock.
func (mg *merger) plan() error {
	byFP := map[string][]string{}
	var fps []string
	for _, in := range mg.shards {
		fp := in.run.Fingerprint
		if _, ok := byFP[fp]; !ok {
			fps = append(fps, fp)
		}
		byFP[fp] = append(byFP[fp], in.dir)
	}
	if len(fps) > 1 {
		var parts []string
		for _, fp := range fps {
			parts = append(parts, fmt.Sprintf("fingerprint %.12s: %s", fp, strings.Join(byFP[fp], ", ")))
		}
		return &ConfigError{fmt.Errorf("merge: the shards are not of one run (protocol, corpus, schema or tool differ); results of different fingerprints are never mixed: %s", strings.Join(parts, "; "))}
	}
	n := mg.shards[0].manifest.Shard.Count
	for _, in := range mg.shards {
		if c := in.manifest.Shard.Count; c != n {
			return &ConfigError{fmt.Errorf("merge: %s is shard %s but %s is shard %s: the shards of one run share their count", mg.shards[0].dir, mg.shards[0].manifest.Shard, in.dir, in.manifest.Shard)}
		}
	}
	slices.SortStableFunc(mg.shards, func(a, b *mergeInput) int {
		return cmp.Or(cmp.Compare(a.manifest.Shard.Index, b.manifest.Shard.Index), cmp.Compare(a.dir, b.dir))
	})
	present := map[int]int{}
	origin := int64(0)
	for _, in := range mg.shards {
		present[in.manifest.Shard.Index]++
		if o := in.run.ClockOriginNS; o != 0 && (origin == 0 || o < origin) {
			origin = o
		}
	}
	sum := mg.sum
	sum.Count, sum.Fingerprint = n, fps[0]
	for i := range n {
		switch {
		case present[i] == 0:
			sum.Missing = append(sum.Missing, i)
		case present[i] > 1:
			sum.DuplicateIndexes = append(sum.DuplicateIndexes, i)
		}
	}
	m := mg.shards[0].manifest // the first shard's protocol, corpus (whole) and engine facts
	m.Shard = nil
	m.Merge = &extractbench.Merge{Count: n, Missing: sum.Missing, ClockOriginNS: origin}
	for _, in := range mg.shards {
		if in.run.ClockOriginNS != 0 {
			in.offset = in.run.ClockOriginNS - origin
		}
		m.Merge.Shards = append(m.Merge.Shards, extractbench.MergedShard{Index: in.manifest.Shard.Index, Dir: in.dir, RunID: in.run.RunID,
			Status: in.run.Status, Documents: in.manifest.Shard.Documents, ClockOffsetNS: in.offset})
		m.Simulated = m.Simulated || in.manifest.Simulated
	}
	for i, in := range mg.shards {
		in.info = &m.Merge.Shards[i]
	}
	mg.manifest = m
	sum.Protocol, sum.Simulated = m.ProtocolName, m.Simulated
	ids := []string{m.Fingerprint}
	for _, in := range mg.shards {
		ids = append(ids, in.run.RunID)
	}
	sum.RunID = fmt.Sprintf("merged-%.12s-%.8s", m.Fingerprint, extractbench.SHA256Hex([]byte(strings.Join(ids, "\n"))))
	return nil
}

// build writes the merged run into a temporary results.db inside OutDir,
// then moves it over OutDir's results.db.
func (mg *merger) build(ctx context.Context) error {
	tmp := filepath.Join(mg.opts.OutDir, mergeTmp)
	if err := os.RemoveAll(tmp); err != nil {
		return fmt.Errorf("merge: clear %s: %w", tmp, err)
	}
	defer os.RemoveAll(tmp)
	// The request rows go in first, through a Copier alone on the new
	// database (results.Open made and migrated it): nothing else has it
	// open, so it writes without a WAL to checkpoint afterwards.
	store, err := results.Open(ctx, tmp)
	if err == nil {
		err = store.Close()
	}
	if err == nil {
		err = mg.copyRows(ctx, tmp, mg.passKeys())
	}
	if err == nil {
		store, err = results.Open(ctx, tmp)
	}
	if err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	mg.store = store
	err = mg.fill(ctx, tmp)
	if cerr := store.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("merge: write %s: %w", tmp, cerr)
	}
	if err != nil {
		return err
	}
	dst := filepath.Join(mg.opts.OutDir, results.DBName)
	if err := mg.removeDerived(); err != nil {
		return err
	}
	for _, suffix := range []string{"-wal", "-shm"} {
		if err := os.Remove(dst + suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("merge: replace %s: %w", dst, err)
		}
	}
	if err := os.Rename(filepath.Join(tmp, results.DBName), dst); err != nil {
		return fmt.Errorf("merge: replace %s: %w", dst, err)
	}
	fmt.Fprintf(mg.opts.Progress, "merge: wrote %s; exporting\n", dst)
	// The export begins with requests.parquet, written from the rows as the
	// passes were tallied (mergePasses); its other files follow (Merge).
	requests := filepath.Join(mg.opts.OutDir, results.RequestsParquet)
	if err := os.Rename(filepath.Join(tmp, results.RequestsParquet), requests); err != nil {
		return fmt.Errorf("merge: export %s: %w", requests, err)
	}
	return nil
}

// fill writes the merged run: its row, the shards' events and decisions
// (each named by its shard), every pass, then its status; and
// requests.parquet into dir, beside the new results.db (mergePasses).
func (mg *merger) fill(ctx context.Context, dir string) error {
	sum, m := mg.sum, &mg.manifest
	run := results.Run{RunID: sum.RunID, Fingerprint: m.Fingerprint, ProtocolName: m.ProtocolName,
		Status: results.RunRunning, ClockOriginNS: m.Merge.ClockOriginNS}
	var ended int64
	failed, unfinished := false, len(sum.Missing) > 0
	for _, in := range mg.shards {
		if s := in.run.StartedAt; s != 0 && (run.StartedAt == 0 || s < run.StartedAt) {
			run.StartedAt = s
		}
		ended = max(ended, in.run.EndedAt)
		run.Simulated = run.Simulated || in.run.Simulated
		failed = failed || in.run.Status == results.RunFailed
		unfinished = unfinished || in.run.Status != results.RunComplete
	}
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("merge: encode the manifest: %w", err)
	}
	run.Manifest = b
	if err := mg.store.CreateRun(ctx, run); err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	proto, err := protocol.Parse(m.Protocol, m.ProtocolSource+" (from the shards' manifest)", protocol.ManifestDir(m))
	if err != nil {
		return fmt.Errorf("merge: read the shards' protocol: %w", err)
	}
	mg.acct = &passrow.Account{Proto: proto, Store: mg.store, Merged: &passrow.Shards{Count: m.Merge.Count, Resumes: map[int][]int64{}}}
	if err := mg.copyEventsAndDecisions(ctx); err != nil {
		return err
	}
	if err := mg.mergePasses(ctx, dir, mg.passKeys()); err != nil {
		return err
	}
	sum.Shards = m.Merge.Shards
	m.Merge.Duplicates = sum.Duplicates
	if err := mg.store.UpdateManifest(ctx, sum.RunID, m); err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	detail := fmt.Sprintf("merged %d of %d shards (%s); %d request rows; %d duplicate (pass, document) rows dropped",
		len(mg.shards), m.Merge.Count, strings.Join(mg.shardNames(), ", "), sum.Rows, sum.Duplicates)
	if len(sum.Missing) > 0 {
		detail += fmt.Sprintf("; missing shard indexes %v", sum.Missing)
	}
	if err := mg.store.AddEvent(ctx, results.Event{RunID: sum.RunID, AtMS: time.Now().UnixMilli(), Kind: results.EventMerged, Detail: detail}); err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	sum.Status = results.RunComplete
	switch {
	case failed:
		sum.Status = results.RunFailed
	case unfinished:
		sum.Status = results.RunInterrupted
	}
	if err := mg.store.SetRunStatus(ctx, sum.RunID, sum.Status, ended); err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	return nil
}

// shardNames are the shards as "I/N DIR (status)".
func (mg *merger) shardNames() []string {
	var out []string
	for _, in := range mg.shards {
		out = append(out, fmt.Sprintf("%s %s (%s)", in.manifest.Shard, in.dir, in.run.Status))
	}
	return out
}

// copyEventsAndDecisions copies each shard's events and decisions into the
// merged run, their detail prefixed with the shard; resume instants are
// shifted onto the merged clock and kept for the passes' active time.
func (mg *merger) copyEventsAndDecisions(ctx context.Context) error {
	for _, in := range mg.shards {
		prefix := "shard " + in.manifest.Shard.String() + ": "
		events, err := in.rd.Events(ctx, in.run.RunID)
		if err != nil {
			return fmt.Errorf("merge: read the events of %s: %w", in.dir, err)
		}
		for _, e := range events {
			if e.Kind == results.EventResumed && e.ValueNS != 0 {
				e.ValueNS += in.offset
				idx := in.manifest.Shard.Index
				mg.acct.Merged.Resumes[idx] = append(mg.acct.Merged.Resumes[idx], e.ValueNS)
			}
			e.RunID, e.Detail = mg.sum.RunID, prefix+e.Detail
			if err := mg.store.AddEvent(ctx, e); err != nil {
				return fmt.Errorf("merge: %w", err)
			}
		}
		decisions, err := in.rd.Decisions(ctx, in.run.RunID)
		if err != nil {
			return fmt.Errorf("merge: read the decisions of %s: %w", in.dir, err)
		}
		for _, d := range decisions {
			d.RunID, d.Reason = mg.sum.RunID, prefix+d.Reason
			if err := mg.store.AddDecision(ctx, d); err != nil {
				return fmt.Errorf("merge: %w", err)
			}
		}
	}
	for i := range mg.acct.Merged.Resumes {
		slices.Sort(mg.acct.Merged.Resumes[i])
	}
	return nil
}
