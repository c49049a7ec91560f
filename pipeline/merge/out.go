package merge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/results"
)

// ConfigError is a merge refused for its inputs, before anything was
// written: shards of different runs or shard counts, a directory that
// holds no shard, an -out that holds a measured run or another merge, a
// shard whose rows are not what its run left (TamperedError). The command
// line exits 2 on it, as on a run's configuration error.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// ExitCode is the status the command line exits with on a refused merge:
// 2, as a usage error.
func (e *ConfigError) ExitCode() int { return 2 }

// lockOut creates the -out directory if needed and takes its lock, as a
// run takes the lock of its own (results.LockDir): a merge and a run, or
// two merges, never write one directory at once.
func lockOut(dir string) (*results.Lock, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, &ConfigError{fmt.Errorf("results directory %s: cannot create it: %w; choose a writable -out directory", dir, unwrapPath(err))}
	}
	lock, err := results.LockDir(dir, "merge")
	var le *results.LockedError
	switch {
	case errors.As(err, &le):
		return nil, &ConfigError{err}
	case errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.EROFS):
		return nil, &ConfigError{fmt.Errorf("results directory %s is not writable (%w); choose a writable -out directory", dir, unwrapPath(err))}
	case err != nil:
		return nil, err
	}
	return lock, nil
}

// unwrapPath drops the *PathError's repetition of the path.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// checkOut refuses an -out that holds anything but a previous merge of
// this fingerprint: a merge replaces results.db, and must never replace a
// measured run.
func (mg *merger) checkOut(ctx context.Context) error {
	dir := mg.opts.OutDir
	runs, err := results.RunsIn(ctx, dir)
	var refused *results.RefusedError
	if errors.As(err, &refused) {
		return &ConfigError{fmt.Errorf("merge: -out %s: %w; use another -out directory", dir, refused.Err)}
	}
	if err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	for _, r := range runs {
		var m extractbench.Manifest
		_ = json.Unmarshal(r.Manifest, &m)
		switch {
		case m.Merge == nil:
			return &ConfigError{fmt.Errorf("merge: -out %s holds run %s, which is not a merge; a merge never replaces a measured run: use another -out directory", dir, r.RunID)}
		case r.Fingerprint != mg.sum.Fingerprint:
			return &ConfigError{fmt.Errorf("merge: -out %s holds a merge of fingerprint %.12s, and these shards have %.12s; use another -out directory", dir, r.Fingerprint, mg.sum.Fingerprint)}
		}
	}
	return nil
}

// removeDerived removes what the previous merge in OutDir made from its
// results.db (exports, Derived): from here until they are written again, a
// kill leaves the directory without them rather than with files that
// describe another merge.
func (mg *merger) removeDerived() error {
	names := append(results.ExportFiles(), mg.opts.Derived...)
	for _, name := range names {
		path := filepath.Join(mg.opts.OutDir, name)
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("merge: remove the previous merge's %s: %w", path, err)
		}
	}
	return nil
}
