package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/results"
)

// checkResume reads the run to resume and checks, before anything is
// written, what refuses a resume: no run, a protocol, corpus or schema of
// another fingerprint, a variant's engine that changed since it was pinned.
// A refused resume leaves the results directory as it was, byte for byte:
// a finished run is never turned failed by a safety check. It prepares rs
// (protocol, corpus, manifest) and returns the run.
func (rs *runState) checkResume(ctx context.Context) (*results.Run, error) {
	dir := rs.opts.OutDir
	if _, err := os.Stat(filepath.Join(dir, results.DBName)); err != nil {
		return nil, &ConfigError{fmt.Errorf("resume: no run in %s (no %s)", dir, results.DBName)}
	}
	rd, err := results.OpenReadOnly(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("read the run to resume: %w", err)
	}
	prev, err := rd.LatestRun(ctx)
	rd.Close()
	if err != nil {
		return nil, fmt.Errorf("read the run to resume: %w", err)
	}
	if prev == nil {
		return nil, &ConfigError{fmt.Errorf("resume: no run in %s", dir)}
	}
	if err := rs.prepare(prev); err != nil {
		return nil, err
	}
	if err := rs.sameFingerprint(prev); err != nil {
		return nil, err
	}
	if err := rs.sameEngines(ctx, prev); err != nil {
		return nil, err
	}
	return prev, nil
}

// sameFingerprint refuses to resume prev with a protocol, corpus or schema
// that give another fingerprint.
func (rs *runState) sameFingerprint(prev *results.Run) error {
	if prev.Fingerprint == rs.manifest.Fingerprint {
		return nil
	}
	var old extractbench.Manifest
	why := ""
	if json.Unmarshal(prev.Manifest, &old) == nil && old.Sweep.Order == "" {
		why = " (it was measured before sweep.order existed, in corpus order; every fingerprint now covers the order, so this version cannot resume it)"
	}
	return &ConfigError{fmt.Errorf("resume: run %s in %s has fingerprint %.12s but this protocol, corpus and schema give %.12s%s; results of different fingerprints are never mixed: use a new -out directory",
		prev.RunID, rs.opts.OutDir, prev.Fingerprint, rs.manifest.Fingerprint, why)}
}

// sameEngines asks each pinned variant's engine what it is, and refuses
// the resume when one changed. An engine.start variant is started for the
// check with its log and pid file in a directory of its own, outside the
// results directory, and stopped after it: the resume loads it once more.
// An engine that does not start or answer (its port taken by one an
// interrupted attempt left running, say) is let through: the run meets it
// again, checks it when it pins it (engine.pin) and records why.
func (rs *runState) sameEngines(ctx context.Context, prev *results.Run) error {
	var old extractbench.Manifest
	if json.Unmarshal(prev.Manifest, &old) != nil {
		return nil
	}
	// Quiet and without a store: the run says again what it meets.
	progress := rs.progress
	rs.progress = io.Discard
	defer func() { rs.progress = progress }()
	rs.clock = rs.onEngineClock(extractbench.NewClockAt(prev.ClockOriginNS))
	for i := range rs.proto.Variants {
		v := &rs.proto.Variants[i]
		at := slices.IndexFunc(old.Variants, func(m extractbench.VariantManifest) bool { return m.Name == v.Name })
		if at < 0 || !pinned(old.Variants[at]) {
			continue
		}
		diff, err := engineDiff(ctx, rs, v, old.Variants[at])
		if err != nil {
			return err
		}
		if diff != "" {
			return environmentChanged(v, diff)
		}
	}
	return nil
}

// engineDiff starts (or reaches) v's engine, reads what it is, stops it and
// says how it differs from pinned; "" when it does not or did not answer.
func engineDiff(ctx context.Context, rs *runState, v *extractbench.Variant, pinned extractbench.VariantManifest) (string, error) {
	filesDir := ""
	if v.Engine.Start != "" {
		tmp, err := os.MkdirTemp("", "extractbench-resume-check-")
		if err != nil {
			return "", fmt.Errorf("resume: a directory to start variant %s's engine in for its check: %w", v.Name, err)
		}
		defer os.RemoveAll(tmp)
		filesDir = tmp
	}
	e, err := startEngineIn(ctx, rs, v, filesDir)
	if err != nil {
		return "", nil
	}
	defer e.close()
	return environmentDiff(pinned, e.identity(ctx, pinned.Engine, e.client.Describe(ctx))), nil
}
