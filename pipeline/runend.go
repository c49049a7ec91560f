package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/extractbench/extractbench/results"
)

// discardEmpty removes a new run that measured nothing (its engine failed
// its pre-flight: not started, the model not served), so that it leaves
// nothing behind that would block the directory: its rows, and results.db
// itself when this run created it and holds no other run. It reports
// whether the run is gone; when it is not, a warning says why.
func (rs *runState) discardEmpty(ctx context.Context, dbCreated bool) bool {
	discarded, left, err := rs.store.DiscardRun(context.WithoutCancel(ctx), rs.runID)
	if err == nil && discarded && left == 0 && dbCreated {
		err = rs.removeDB()
	}
	if err != nil {
		rs.logf("warning: remove the run that measured nothing: %v", err)
		return false
	}
	return discarded
}

// removeDB closes and removes results.db and its journal files.
func (rs *runState) removeDB() error {
	err := rs.store.Close()
	dbPath := filepath.Join(rs.opts.OutDir, results.DBName)
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		if rerr := os.Remove(dbPath + suffix); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) && err == nil {
			err = rerr
		}
	}
	return err
}

// finish ends the run, however its variants ended (runErr): the last
// writes, the run's status (and a shard's digests), the exports, and the
// report read back from the store. The first error is returned.
func (rs *runState) finish(ctx context.Context, resumed bool, runErr error) (*RunReport, error) {
	bg := context.WithoutCancel(ctx) // an interruption still finishes the writes
	sum := &RunReport{RunID: rs.runID, Fingerprint: rs.manifest.Fingerprint, OutDir: rs.opts.OutDir,
		Protocol: rs.proto.Name, Resumed: resumed, Shard: rs.shard}
	if err := rs.store.Flush(bg); err != nil && runErr == nil {
		runErr = fmt.Errorf("write results: %w", err)
	}
	sum.Interrupted = ctx.Err() != nil
	sum.Status, runErr = rs.recordStatus(bg, sum.Interrupted, runErr)
	sum.Simulated = rs.simulated // known once the engines said what they are
	if data, err := rs.store.LoadRun(bg, rs.opts.OutDir, rs.runID); err == nil {
		sum.Passes, sum.Variants = data.Passes, data.Outcomes()
	} else if runErr == nil {
		runErr = fmt.Errorf("read the run back: %w", err)
	}
	files, err := results.ExportBounded(bg, rs.opts.OutDir)
	if err != nil && runErr == nil {
		runErr = fmt.Errorf("export results: %w", err)
	}
	sum.Exports = files
	sum.Passed = runErr == nil && !sum.Interrupted && len(sum.Variants) == len(rs.proto.Variants)
	for _, v := range sum.Variants {
		sum.Passed = sum.Passed && v.Passed()
	}
	return sum, runErr
}

// recordStatus writes the run's status (complete, interrupted, failed) and,
// for a shard, the digests of its rows, which merge checks against what it
// left.
func (rs *runState) recordStatus(ctx context.Context, interrupted bool, runErr error) (string, error) {
	status := "complete"
	switch {
	case runErr != nil:
		status = "failed"
	case interrupted:
		status = "interrupted"
		rs.event(ctx, "", results.EventInterrupted, 0, "signal received; resume with: extractbench run -resume "+rs.opts.OutDir)
	}
	if rs.shard != nil {
		if err := rs.store.SealRun(ctx, rs.runID); err != nil && runErr == nil {
			runErr = fmt.Errorf("record the digests of the shard's rows: %w", err)
		}
	}
	if err := rs.store.SetRunStatus(ctx, rs.runID, status, time.Now().UnixMilli()); err != nil && runErr == nil {
		runErr = fmt.Errorf("record run status: %w", err)
	}
	return status, runErr
}
