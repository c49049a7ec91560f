package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/extractbench/extractbench/results"
)

// TestShardOf_Env: -shard wins; else JOB_COMPLETION_INDEX of
// JOB_COMPLETIONS; an index without a count, or a bad value, is a usage
// error.
func TestShardOf_Env(t *testing.T) {
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	tests := []struct {
		name    string
		spec    string
		given   bool
		env     map[string]string
		want    string // "" = no shard
		wantErr string
	}{
		{"none", "", false, nil, "", ""},
		{"flag", "1/4", true, map[string]string{envShardIndex: "3", envShardCount: "8"}, "1/4", ""},
		{"env", "", false, map[string]string{envShardIndex: "3", envShardCount: "8"}, "3/8", ""},
		{"index without count", "", false, map[string]string{envShardIndex: "3"}, "", "JOB_COMPLETIONS is not"},
		{"index past count", "", false, map[string]string{envShardIndex: "8", envShardCount: "8"}, "", "from 0 to 7"},
		{"bad flag", "4/4", true, nil, "", "-shard: shard index"},
		{"empty flag", "", true, nil, "", "INDEX/COUNT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sh, err := shardOf(tt.spec, tt.given, env(tt.env))
			switch {
			case tt.wantErr != "":
				var ue *usageError
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !asUsage(err, &ue) {
					t.Fatalf("err = %v, want a usage error saying %q", err, tt.wantErr)
				}
			case err != nil:
				t.Fatal(err)
			case tt.want == "" && sh != nil, tt.want != "" && (sh == nil || sh.String() != tt.want):
				t.Fatalf("shard = %v, want %q", sh, tt.want)
			}
		})
	}
}

func asUsage(err error, ue **usageError) bool {
	u, ok := err.(*usageError)
	*ue = u
	return ok
}

// TestShards_CLI: a bad shard creates nothing (exit 2); the environment
// names a shard; a shard resumes only itself; merge refuses shards of two
// fingerprints (naming them, writing nothing), a directory that is not a
// shard and an -out holding a measured run, and reports a missing shard
// (exit 3, in the report too).
func TestShards_CLI(t *testing.T) {
	dir := t.TempDir()
	corpus := smallCorpus(t, dir)
	proto := func(name, maxTokens string) string {
		return writeFile(t, dir, name, strings.Replace(strings.NewReplacer("%CORPUS%", corpus, "%MIN%", "0.5").Replace(smallProtocol),
			"max_tokens: 128", "max_tokens: "+maxTokens, 1))
	}
	a, b := proto("a.yaml", "128"), proto("b.yaml", "96")
	at := func(name string) string { return filepath.Join(dir, name) }

	code, _, stderr := runCLI(t, "run", "-quiet", "-protocol", a, "-shard", "2/2", "-out", at("bad"))
	if code != exitUsage || !strings.Contains(stderr, "-shard: shard index \"2\"") {
		t.Errorf("-shard 2/2: exit %d, stderr %q; want 2 naming the index", code, stderr)
	}
	if _, err := os.Stat(at("bad")); !os.IsNotExist(err) {
		t.Errorf("-shard 2/2 created %s", at("bad"))
	}

	t.Setenv(envShardIndex, "1")
	t.Setenv(envShardCount, "2")
	if code, _, stderr := runCLI(t, "run", "-quiet", "-protocol", a, "-out", at("a1")); code != exitOK {
		t.Fatalf("shard 1/2 from the environment: exit %d: %s", code, stderr)
	}
	d, err := results.LoadRun(context.Background(), at("a1"))
	if err != nil {
		t.Fatal(err)
	}
	if sh := d.Manifest.Shard; sh == nil || sh.String() != "1/2" || sh.Documents == 0 || d.Manifest.Corpus.Count != 6 {
		t.Fatalf("manifest shard %+v, corpus count %d; want 1/2 with its documents, and the whole corpus's 6", sh, d.Manifest.Corpus.Count)
	}
	os.Unsetenv(envShardIndex)
	os.Unsetenv(envShardCount)
	if code, _, stderr := runCLI(t, "run", "-quiet", "-resume", at("a1"), "-shard", "0/2"); code != exitUsage || !strings.Contains(stderr, "measured shard 1/2") {
		t.Errorf("resume as another shard: exit %d, stderr %q; want 2", code, stderr)
	}
	if code, _, stderr := runCLI(t, "run", "-quiet", "-protocol", b, "-shard", "0/2", "-out", at("b0")); code != exitOK {
		t.Fatalf("shard 0/2 of b: exit %d: %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, "run", "-quiet", "-protocol", a, "-out", at("whole")); code != exitOK {
		t.Fatalf("unsharded run: exit %d: %s", code, stderr)
	}

	code, _, stderr = runCLI(t, "merge", "-out", at("m"), at("a1"), at("b0"))
	if code != exitUsage || !strings.Contains(stderr, at("a1")) || !strings.Contains(stderr, at("b0")) || !strings.Contains(stderr, "fingerprint") {
		t.Errorf("merge of two fingerprints: exit %d, stderr %q; want 2 naming both directories", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(at("m"), results.DBName)); !os.IsNotExist(err) {
		t.Errorf("a refused merge wrote %s", at("m"))
	}
	if code, _, stderr := runCLI(t, "merge", "-out", at("m"), at("a1"), at("whole")); code != exitUsage || !strings.Contains(stderr, "not a shard") {
		t.Errorf("merge of an unsharded run: exit %d, stderr %q", code, stderr)
	}
	if code, _, stderr := runCLI(t, "merge", "-out", at("whole"), at("a1")); code != exitUsage || !strings.Contains(stderr, "not a merge") {
		t.Errorf("merge over a measured run: exit %d, stderr %q", code, stderr)
	}
	if code, _, stderr := runCLI(t, "merge", "-out", at("m"), at("nothing-*")); code != exitUsage || !strings.Contains(stderr, "matches no directory") {
		t.Errorf("merge of an empty glob: exit %d, stderr %q", code, stderr)
	}

	code, stdout, stderr := runCLI(t, "merge", "-out", at("m"), at("a1"))
	if code != exitInfra || !strings.Contains(stdout, "MISSING shard indexes 0 of 2") || !strings.Contains(stderr, "missing") {
		t.Errorf("merge of 1 of 2 shards: exit %d, want %d\n%s%s", code, exitInfra, stdout, stderr)
	}
	// Each variant says which shard the merge lacks, not that a run was interrupted.
	if !strings.Contains(stdout, "shard indexes 0 of 2 are missing from this merge") || strings.Contains(stdout, "NOT RUN") {
		t.Errorf("merge of 1 of 2 shards: the variants' lines do not name the missing shard:\n%s", stdout)
	}
	md, _ := os.ReadFile(filepath.Join(at("m"), "report.md"))
	if !strings.Contains(string(md), "| 0/2 | – | – | MISSING |") {
		t.Errorf("report.md does not show the missing shard:\n%s", md)
	}
}
