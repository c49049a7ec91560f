package pipelinetest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// FakeSMI puts an nvidia-smi script first on PATH that prints the given
// outputs for the memory query, the info query and the plain header, and
// returns its directory.
func FakeSMI(t *testing.T, memory, info, plain string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range map[string]string{"memory.csv": memory, "info.csv": info, "plain.txt": plain} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The arguments of each call are appended to args.txt (the --id a
	// CUDA_VISIBLE_DEVICES selection adds comes last).
	script := fmt.Sprintf(`#!/bin/sh
echo "$*" >>%[1]s/args.txt
case "$1" in
--query-gpu=name,memory.used,memory.total) cat %[1]s/memory.csv ;;
--query-gpu=name,memory.total,driver_version) cat %[1]s/info.csv ;;
""|--id=*) cat %[1]s/plain.txt ;;
*) echo "unknown option $1" >&2; exit 2 ;;
esac
`, dir)
	if err := os.WriteFile(filepath.Join(dir, "nvidia-smi"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return dir
}
