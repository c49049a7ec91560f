package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/pipeline"
	"github.com/extractbench/extractbench/pipeline/merge"
	"github.com/extractbench/extractbench/results/report"
)

type mergeCommand struct{ env }

func (c *mergeCommand) Synopsis() string {
	return "merge the results directories of a run's shards (run -shard I/N) into one run: results.db, Parquet, raw table, report"
}

func (c *mergeCommand) Run(ctx context.Context, args []string) error {
	fs := newFlags("merge -out DIR SHARD_DIR... (or a glob: 'results/shard-*')", c.Synopsis(), c.env)
	out := fs.String("out", "", "the merged run's results directory (a previous merge of the same shards there is replaced)")
	asJSON := fs.Bool("json", false, "print a machine-readable summary on stdout instead of the table")
	if err := parseFlags(fs, reorder(args)); err != nil {
		return err
	}
	if *out == "" {
		return &usageError{msg: "merge: -out DIR is required"}
	}
	dirs, err := expandShardDirs(fs.Args())
	if err != nil {
		return err
	}
	sum, err := merge.Merge(ctx, merge.Options{OutDir: *out, Dirs: dirs, Progress: c.stderr,
		Derived: []string{report.HTMLFile, report.MarkdownFile}})
	if err != nil {
		return err // merge.Merge's errors already say "merge: ..."
	}
	if err := report.Write(ctx, *out); err != nil {
		return readError("merge: report", err)
	}
	sum.Exports = append(sum.Exports, filepath.Join(*out, report.HTMLFile), filepath.Join(*out, report.MarkdownFile))
	if *asJSON {
		enc := json.NewEncoder(c.stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(sum)
	} else {
		printMerge(c, sum)
	}
	if sum.Incomplete() {
		return &incompleteError{sum: sum}
	}
	if !sum.Passed {
		return outcomesError(sum.Variants)
	}
	return nil
}

// expandShardDirs expands the arguments that are globs (a mounted bucket's
// prefix, results/shard-*); a glob that matches nothing is a usage error.
func expandShardDirs(args []string) ([]string, error) {
	var dirs []string
	for _, a := range args {
		if !strings.ContainsAny(a, "*?[") {
			dirs = append(dirs, a)
			continue
		}
		m, err := filepath.Glob(a)
		if err != nil {
			return nil, &usageError{msg: fmt.Sprintf("merge: %s: %v", a, err)}
		}
		if len(m) == 0 {
			return nil, &usageError{msg: fmt.Sprintf("merge: %s matches no directory", a)}
		}
		dirs = append(dirs, m...)
	}
	if len(dirs) == 0 {
		return nil, &usageError{msg: "merge: no shard directory given: merge -out DIR SHARD_DIR... (or a glob such as 'results/shard-*')"}
	}
	return dirs, nil
}

// printMerge writes the shards, what was missing or repeated, then the
// merged run's table as run prints it.
func printMerge(c *mergeCommand, s *merge.Report) {
	w := c.stdout
	fmt.Fprintf(w, "merged %d shard directories of %d shards into %s: %d request rows\n", len(s.Shards), s.Count, s.OutDir, s.Rows)
	var rows [][]string
	for _, sh := range s.Shards {
		rows = append(rows, []string{fmt.Sprintf("%d/%d", sh.Index, s.Count), sh.Dir, sh.RunID, sh.Status, fmt.Sprint(sh.Documents), fmt.Sprint(sh.Rows), fmt.Sprint(sh.Duplicates)})
	}
	writeTable(w, []string{"shard", "directory", "run", "status", "documents", "rows", "duplicates"}, rows)
	if len(s.Missing) > 0 {
		fmt.Fprintf(w, "MISSING shard indexes %s of %d: the merged run is incomplete; merge again when they land\n", extractbench.ShardList(s.Missing), s.Count)
	}
	if len(s.DuplicateIndexes) > 0 {
		fmt.Fprintf(w, "REPEATED shard indexes %s: more than one directory holds them; the first (by directory name) keeps each row\n", extractbench.ShardList(s.DuplicateIndexes))
	}
	if s.Duplicates > 0 {
		fmt.Fprintf(w, "DUPLICATES: %d (pass, document) rows were found in more than one shard; the first was kept:\n", s.Duplicates)
		for _, d := range s.DuplicateRows {
			fmt.Fprintf(w, "  %s\n", d)
		}
	}
	if len(s.Missing)+len(s.DuplicateIndexes) > 0 || s.Duplicates > 0 {
		fmt.Fprintln(w)
	}
	printSummary(w, &pipeline.RunReport{RunID: s.RunID, Fingerprint: s.Fingerprint, OutDir: s.OutDir, Protocol: s.Protocol,
		Status: s.Status, Simulated: s.Simulated, Variants: s.Variants, Passes: s.Passes, Exports: s.Exports, Elapsed: s.Elapsed})
}

// incompleteError is a merge that lacks a shard or holds an unfinished
// one: exit 3, like an interrupted run; merging again completes it.
type incompleteError struct{ sum *merge.Report }

// ExitCode is the exit status of an incomplete merge: that of an
// interrupted run.
func (e *incompleteError) ExitCode() int { return exitInfra }

func (e *incompleteError) Error() string {
	msg := fmt.Sprintf("the merged run in %s is %s", e.sum.OutDir, e.sum.Status)
	if len(e.sum.Missing) > 0 {
		msg += fmt.Sprintf(" (shard indexes %s of %d missing)", extractbench.ShardList(e.sum.Missing), e.sum.Count)
	}
	return msg + "; merge again when the retried shards land (the merge is replaced, never appended)"
}
