package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/engines/hostile"
	"github.com/extractbench/extractbench/results"
)

// TestHostileSuite runs `extractbench run` (this test binary as the CLI,
// TestMain) against every registered hostile mode at levels 1 and 16, and
// writes one row per mode: the classes of its requests, the exit code and
// the run's peak RSS. It is the attack audit's table, too slow for every
// `go test` (a few minutes): EXTRACTBENCH_HOSTILE_SUITE=FILE runs it and
// writes the table to FILE. It fails when a mode crashes the run (an exit
// code other than 0-3) or when a mode made to die or be refused without
// memory evidence is charged a memory failure.
func TestHostileSuite(t *testing.T) {
	outFile := os.Getenv("EXTRACTBENCH_HOSTILE_SUITE")
	if _, err := os.Stat("/usr/bin/time"); outFile != "" && err != nil {
		t.Skip("the suite reads peak RSS through /usr/bin/time (Debian's time package)")
	}
	if outFile == "" {
		t.Skip("EXTRACTBENCH_HOSTILE_SUITE=FILE runs every hostile mode at levels 1 and 16 (minutes)")
	}
	dir := t.TempDir()
	corpus := writeFile(t, dir, "corpus.jsonl", suiteCorpus(t))
	key := "sk-suite-0123456789abcdef0123"
	t.Setenv("EB_SUITE_KEY", key)
	var rows []string
	for _, m := range hostile.Modes() {
		srv := hostile.MustNew(t, m, hostile.Options{APIKey: key})
		out := filepath.Join(dir, string(m))
		proto := writeFile(t, dir, string(m)+".yaml", fmt.Sprintf(`name: suite
corpus: %s
prompt: {user: "Extract date, amount and category.\n\n{{document}}"}
generation: {max_tokens: 64, temperature: 0}
acceptance: {min_accepted: 0.5}
sweep: {mode: concurrency, levels: [1, 16], repetitions: 1, warmup: 0}
request_timeout: 2s
variants:
  - name: v
    engine: {url: %q, model: %s, api_key_env: EB_SUITE_KEY}
`, corpus, srv.URL, hostile.Model))
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		// Through /usr/bin/time: a child's own ru_maxrss would count this
		// test process's pages it shared until exec.
		rssFile := filepath.Join(dir, string(m)+".rss")
		cmd := exec.CommandContext(ctx, "/usr/bin/time", "-f", "%M", "-o", rssFile, os.Args[0], "run", "-protocol", proto, "-out", out, "-quiet")
		cmd.Env = append(os.Environ(), "EXTRACTBENCH_TEST_MAIN=1")
		started := time.Now()
		_ = cmd.Run()
		cancel()
		srv.Close()
		code := cmd.ProcessState.ExitCode()
		rss := int64(0)
		if b, err := os.ReadFile(rssFile); err == nil {
			fields := strings.Fields(string(b)) // "Command exited with non-zero status N" comes first
			if len(fields) > 0 {
				if kib, err := strconv.ParseInt(fields[len(fields)-1], 10, 64); err == nil {
					rss = kib / 1024
				}
			}
		}
		classes := suiteClasses(out)
		rows = append(rows, fmt.Sprintf("| %s | %s | %d | %d | %.1f |", m, classes, code, rss, time.Since(started).Seconds()))
		if code < 0 || code > 3 {
			t.Errorf("%s: exit %d", m, code)
		}
		if (m == hostile.TransportDiesAfterN || m == hostile.TransportRestarts) && strings.Contains(classes, "memory") {
			t.Errorf("%s: %s: a death without evidence charged as memory", m, classes)
		}
	}
	table := "| mode | measured requests by class | exit | max RSS MiB | s |\n| --- | --- | --- | --- | --- |\n" + strings.Join(rows, "\n") + "\n"
	if err := os.WriteFile(outFile, []byte(table), 0o644); err != nil {
		t.Fatal(err)
	}
}

// suiteCorpus is the first 16 documents of the default corpus, as JSONL.
func suiteCorpus(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile("../../corpus/default/documents.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(strings.SplitAfterN(string(raw), "\n", 17)[:16], "")
}

// suiteClasses counts the run's measured requests by class: accepted and
// each failure class (the reader leaves the unmeasured out); "no run" when
// none was kept.
func suiteClasses(out string) string {
	d, err := results.LoadRun(context.Background(), out)
	if err != nil {
		return "no run"
	}
	rd, err := results.OpenReadOnly(context.Background(), out)
	if err != nil {
		return "no run"
	}
	defer rd.Close()
	recs, err := rd.Requests(context.Background(), d.Run.RunID, results.RequestFilter{})
	if err != nil {
		return "unreadable"
	}
	n := map[string]int{}
	for _, r := range recs {
		switch {
		case r.Accepted:
			n["accepted"]++
		case r.Failure != extractbench.None:
			n[string(r.Failure)]++
		}
	}
	var parts []string
	for k, v := range n {
		parts = append(parts, fmt.Sprintf("%s %d", k, v))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}
