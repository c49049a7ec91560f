package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/extractbench/extractbench/results"
)

// validate checks every variant and the sweep against the corpus before
// anything is created or started: a problem found here leaves no results
// directory, no run row and no Parquet behind. Each problem names the
// protocol's file:line.
func (rs *runState) validate() error {
	p := rs.proto
	var problems []string
	for i := range p.Variants {
		v := &p.Variants[i]
		at := func(field string) string { return p.At(fmt.Sprintf("variants.%d.engine.%s", i, field)) }
		if v.Engine.APIKeyEnv != "" && os.Getenv(v.Engine.APIKeyEnv) == "" {
			problems = append(problems, fmt.Sprintf("%s: variants.%d.engine.api_key_env: variant %s names %s, which is not set in the environment (export it, or remove api_key_env for an engine without a key)",
				at("api_key_env"), i, v.Name, v.Engine.APIKeyEnv))
		}
		if v.Engine.IsBuiltin() {
			starter, ok := rs.opts.Starters[v.Engine.URL]
			switch {
			case !ok:
				problems = append(problems, fmt.Sprintf("%s: variants.%d.engine.url: variant %s: this program has no in-process engine named %s", at("url"), i, v.Name, v.Engine.URL))
			default:
				if val, ok := starter.(EngineValidator); ok {
					if err := val.ValidateEngine(v, p); err != nil {
						msg, field := err.Error(), "model"
						if f, _, ok := strings.Cut(msg, ": "); ok && strings.HasPrefix(f, "engine.") {
							field = strings.TrimPrefix(f, "engine.")
						}
						problems = append(problems, fmt.Sprintf("%s: variants.%d.%s (variant %s)", at(field), i, msg, v.Name))
					}
				}
			}
		}
	}
	n := len(rs.corpus.Documents)
	for j, l := range p.Sweep.Levels {
		if l > n {
			problems = append(problems, fmt.Sprintf("%s: sweep.levels.%d: level %d is larger than the corpus (%d documents): a pass could never have %d requests in flight (or a batch of %d); use levels up to %d, or a larger corpus",
				p.At(fmt.Sprintf("sweep.levels.%d", j)), j, l, n, l, l, n))
		}
	}
	if len(problems) > 0 {
		return &ConfigError{errors.New(strings.Join(problems, "\n"))}
	}
	return nil
}

// lockOutDir creates the results directory when missing and takes its
// lock: one writer per directory. A directory that cannot be written is a
// configuration error that says so.
func lockOutDir(opts Options) (*results.Lock, error) {
	if err := os.MkdirAll(opts.OutDir, 0o755); err != nil {
		return nil, &ConfigError{fmt.Errorf("results directory %s: cannot create it: %w; choose a writable -out directory", opts.OutDir, unwrapPath(err))}
	}
	command := "run"
	if opts.Resume {
		command = "run -resume"
	}
	lock, err := results.LockDir(opts.OutDir, command)
	var le *results.LockedError
	switch {
	case errors.As(err, &le):
		return nil, &ConfigError{err}
	case errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.EROFS):
		return nil, &ConfigError{fmt.Errorf("results directory %s is not writable (%w); choose a writable -out directory", opts.OutDir, unwrapPath(err))}
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

// checkFresh refuses a new run into a directory that already holds one:
// two runs in one results.db and requests.parquet would be counted together
// by every query. -append adds a run only beside runs of the same fingerprint.
func (rs *runState) checkFresh(ctx context.Context) error {
	dir := rs.opts.OutDir
	if _, err := os.Stat(filepath.Join(dir, results.DBName)); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	rd, err := results.OpenReadOnly(ctx, dir)
	if err != nil {
		return &ConfigError{fmt.Errorf("results directory %s: %w; use another -out directory", dir, err)}
	}
	defer rd.Close()
	runs, err := rd.Runs(ctx)
	if err != nil {
		return fmt.Errorf("read the runs in %s: %w", dir, err)
	}
	if len(runs) == 0 {
		return nil
	}
	last := runs[len(runs)-1]
	var ids []string
	for _, r := range runs {
		if rs.opts.Append && r.Fingerprint != rs.manifest.Fingerprint {
			return &ConfigError{fmt.Errorf("-append: %s holds run %s of fingerprint %.12s, and this protocol, corpus and schema give %.12s: results of different fingerprints are never mixed in one directory; use another -out directory",
				dir, r.RunID, r.Fingerprint, rs.manifest.Fingerprint)}
		}
		ids = append(ids, r.RunID)
	}
	if rs.opts.Append {
		rs.appendedTo = strings.Join(ids, ", ")
		return nil
	}
	hint := "complete it with: extractbench run -resume " + dir
	if last.Status == "complete" {
		hint = "it is complete (extractbench report " + dir + " shows it)"
	}
	same := "a different"
	if last.Fingerprint == rs.manifest.Fingerprint {
		same = "the same"
	}
	return &ConfigError{fmt.Errorf("results directory %s already holds run %s (status %s, %s fingerprint %.12s): a second run would be mixed with it in results.db and requests.parquet; %s, or write to another -out directory (-append adds a run of the same fingerprint)",
		dir, last.RunID, last.Status, same, last.Fingerprint, hint)}
}
