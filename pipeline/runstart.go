package pipeline

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/results"
)

// openStore opens the directory's results.db, once a new run is known to
// belong there (checkFresh); dbCreated says that this run creates it.
func (rs *runState) openStore(ctx context.Context) (dbCreated bool, err error) {
	if !rs.opts.Resume {
		if err := rs.checkFresh(ctx); err != nil {
			return false, err
		}
	}
	_, statErr := os.Lstat(filepath.Join(rs.opts.OutDir, results.DBName))
	dbCreated = errors.Is(statErr, fs.ErrNotExist)
	rs.store, err = results.Open(ctx, rs.opts.OutDir)
	if err != nil {
		return false, fmt.Errorf("open results in %s: %w", rs.opts.OutDir, err)
	}
	return dbCreated, nil
}

// begin records the run in the store: a new one (create), or the latest
// run of the directory, prepared from its own manifest, resumed (resume).
// prev is the resumed run; nil for a new one.
func (rs *runState) begin(ctx context.Context, lock *results.Lock) (prev *results.Run, err error) {
	if rs.opts.Resume {
		if prev, err = rs.store.LatestRun(ctx); err != nil {
			return nil, fmt.Errorf("read the run to resume: %w", err)
		}
		if prev == nil || rs.checked == nil || prev.RunID != rs.checked.RunID {
			return nil, &ConfigError{fmt.Errorf("resume: the latest run in %s changed while it was checked; resume again", rs.opts.OutDir)}
		}
	}
	rs.store.SetSecrets(rs.secrets)
	if prev != nil {
		err = rs.resume(ctx, prev)
	} else {
		err = rs.create(ctx)
	}
	if err != nil {
		return nil, err
	}
	if lock.Stale != nil {
		rs.event(ctx, "", results.EventLockStale, 0, "the lock of "+lock.Stale.String()+" was left by a process that ended without releasing it (killed or crashed); taken over")
	}
	if rs.appendedTo != "" {
		rs.event(ctx, "", results.EventAppended, 0, "appended (-append) to a directory holding runs of the same fingerprint: "+rs.appendedTo)
	}
	return prev, nil
}

// create records a new run, its clock on the engine's when the run can
// keep one (onEngineClock).
func (rs *runState) create(ctx context.Context) error {
	rs.runID = newRunID()
	rs.clock = rs.onEngineClock(extractbench.NewClock())
	if rs.clock.Engine() != nil {
		rs.manifest.Clock = extractbench.ClockEngine
	}
	b, _ := json.Marshal(rs.manifest)
	err := rs.store.CreateRun(ctx, results.Run{RunID: rs.runID, Fingerprint: rs.manifest.Fingerprint,
		ProtocolName: rs.proto.Name, Manifest: b, StartedAt: time.Now().UnixMilli(), Status: "running",
		Simulated: rs.simulated, ClockOriginNS: rs.clock.OriginUnixNano()})
	if err != nil {
		return fmt.Errorf("record the run: %w", err)
	}
	return nil
}

// resume checks the fingerprint, keeps the run's clock origin (so instants
// stay comparable across the interruption) and records the resumption.
func (rs *runState) resume(ctx context.Context, prev *results.Run) error {
	var old extractbench.Manifest
	if err := rs.sameFingerprint(prev); err != nil { // checked by checkResume too, before the store opened
		return err
	}
	if json.Unmarshal(prev.Manifest, &old) == nil {
		rs.manifest.Variants = old.Variants // engine facts pinned by the first attempt; checked again per variant
		rs.manifest.Simulated = old.Simulated
		rs.simulated = old.Simulated
	}
	rs.runID = prev.RunID
	rs.clock = rs.onEngineClock(extractbench.NewClockAt(prev.ClockOriginNS))
	events, err := rs.store.Events(ctx, rs.runID)
	if err != nil {
		return fmt.Errorf("read the run's events: %w", err)
	}
	for _, e := range events {
		if e.Kind == results.EventResumed {
			rs.resumes = append(rs.resumes, e.ValueNS)
		}
	}
	now := rs.clock.Now()
	rs.resumes = append(rs.resumes, now)
	rs.event(ctx, "", results.EventResumed, now, fmt.Sprintf("previous status %q", prev.Status))
	if err := rs.store.SetRunStatus(ctx, rs.runID, "running", 0); err != nil {
		return fmt.Errorf("mark run %s running: %w", rs.runID, err)
	}
	return nil
}

// onEngineClock returns c read from an engine clock when the run measures
// only simulated engines that can keep one (MEASUREMENT.md section 3): every
// variant on the in-process built-in engine, one replica each, its clock
// not set to wall, and no sweep.max_in_flight (a rate request held for a
// slot goes when the client frees one, which the engine cannot foresee).
// Otherwise c as it is.
func (rs *runState) onEngineClock(c extractbench.Clock) extractbench.Clock {
	if rs.proto.Sweep.MaxInFlight > 0 || len(rs.proto.Variants) == 0 {
		return c
	}
	for _, v := range rs.proto.Variants {
		if !v.Engine.IsBuiltin() || replicaNames(v.Engine) != nil || (v.Engine.Builtin != nil && v.Engine.Builtin.Clock == extractbench.ClockWall) {
			return c
		}
	}
	return c.WithEngineClock()
}

func newRunID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return time.Now().UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}
