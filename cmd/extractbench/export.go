package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/extractbench/extractbench/results"
)

type exportCommand struct{ env }

// requireResults is the usage error of a command pointed at a directory
// without results.db. A command that only reads it (readOnly) also takes
// results.db.xz, as the committed reference runs keep it; one that writes
// it (export migrates it in place) asks for it decompressed.
func requireResults(cmd, dir string, readOnly bool) error {
	if _, err := os.Stat(filepath.Join(dir, results.DBName)); err == nil || (readOnly && results.HasDB(dir)) {
		return nil
	}
	if xz := filepath.Join(dir, results.DBNameXZ); results.HasDB(dir) {
		return &usageError{msg: fmt.Sprintf("%s: %s holds only %s: decompress it first (xz -dk %s)", cmd, dir, results.DBNameXZ, xz)}
	}
	return &usageError{msg: fmt.Sprintf("%s: %s has no %s (write one with: extractbench run -out %s)", cmd, dir, results.DBName, dir)}
}

// readError is the error of a command whose results could not be read:
// a usage error (exit 2) when results refused (no results.db, no run, no
// complete pass, no such variant or level), else an infrastructure error
// (exit 3: a database that cannot be opened or read, a disk that fails).
// It says the command's name once.
func readError(cmd string, err error) error {
	var re *results.RefusedError
	if errors.As(err, &re) {
		return &usageError{msg: cmd + ": " + err.Error()}
	}
	return fmt.Errorf("%s: %w", cmd, err)
}

func (c *exportCommand) Synopsis() string {
	return "write requests/passes/telemetry.parquet and raw_table.csv from a results directory's results.db"
}

func (c *exportCommand) Run(ctx context.Context, args []string) error {
	fs := newFlags("export [-partitioned [-dataset ROOT]] DIR", c.Synopsis(), c.env)
	partitioned := fs.Bool("partitioned", false, "also write the requests, request_fields and pass_fields as Hive-partitioned datasets, ROOT/TABLE/variant=V/level=L/part-RUN.parquet, for DuckDB (hive_partitioning) and Spark")
	dataset := fs.String("dataset", "", "with -partitioned: the dataset's `ROOT`, shared by shards and nights (only this directory's runs' files are replaced); default DIR")
	if err := parseFlags(fs, reorder(args)); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return &usageError{msg: "export: want exactly one results directory"}
	}
	dir := fs.Arg(0)
	if flagSet(fs, "dataset") && !*partitioned {
		return &usageError{msg: "export: -dataset needs -partitioned"}
	}
	if err := requireResults("export", dir, false); err != nil {
		return err
	}
	lock, err := results.LockDir(dir, "export") // a run writing here exports itself
	if err != nil {
		var le *results.LockedError
		if errors.As(err, &le) {
			return &usageError{msg: "export: " + err.Error()}
		}
		return fmt.Errorf("export %s: %w", dir, err)
	}
	defer lock.Unlock()
	files, err := results.Export(ctx, dir)
	if err != nil {
		return readError("export", err)
	}
	for _, f := range files {
		fmt.Fprintln(c.stdout, f)
	}
	if !*partitioned {
		return nil
	}
	root := *dataset
	if root == "" {
		root = dir
	}
	parts, err := results.ExportPartitioned(ctx, dir, root)
	if err != nil {
		return readError("export", err)
	}
	for _, ds := range results.Datasets {
		base := filepath.Join(root, ds)
		n := 0
		for _, f := range parts {
			if strings.HasPrefix(f, base+string(filepath.Separator)) {
				n++
			}
		}
		fmt.Fprintf(c.stdout, "%s (%d files, Hive-partitioned by variant and level)\n", base, n)
	}
	return nil
}
