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

// sameEngines asks each pinned variant's engine that is up without a
// process to start (the built-in engine, an engine.url) what it is, and
// refuses the resume when one changed. An engine that does not answer is
// let through: the run meets it again and records why. An engine.start
// variant is checked when the run starts it (pinEngine), after its load.
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
		if at < 0 || !pinned(old.Variants[at]) || v.Engine.Start != "" {
			continue
		}
		e, err := startEngine(ctx, rs, v)
		if err != nil {
			continue
		}
		now := e.identity(ctx, old.Variants[at].Engine, e.client.Describe(ctx))
		e.close()
		if diff := environmentDiff(old.Variants[at], now); diff != "" {
			return environmentChanged(v, diff)
		}
	}
	return nil
}
