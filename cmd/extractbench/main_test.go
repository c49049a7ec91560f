package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/extractbench/extractbench"
)

// runCLI runs the command line in-process and returns its exit code and output.
func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = dispatch(context.Background(), args, env{stdout: &out, stderr: &errOut})
	return code, out.String(), errOut.String()
}

func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

const smallProtocol = `name: cli
corpus: %CORPUS%
prompt:
  user: "Extract date, amount and category.\n\n{{document}}"
generation: {max_tokens: 128, temperature: 0, seed: 7}
acceptance: {min_accepted: %MIN%}
sweep: {mode: concurrency, levels: [1, 2], repetitions: 1, warmup: 1}
variants:
  - name: bf16
    engine: {url: builtin, model: sim-8b, builtin: {time_scale: 0}}
`

// smallCorpus writes 6 documents of the default corpus as a .jsonl file.
func smallCorpus(t *testing.T, dir string) string {
	t.Helper()
	raw, err := os.ReadFile("../../corpus/default/documents.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfterN(string(raw), "\n", 7)
	return writeFile(t, dir, "small.jsonl", strings.Join(lines[:6], ""))
}

func TestDispatch_ExitCodes(t *testing.T) {
	dir := t.TempDir()
	corpus := smallCorpus(t, dir)
	proto := func(name, corpusPath, min string) string {
		return writeFile(t, dir, name, strings.NewReplacer("%CORPUS%", corpusPath, "%MIN%", min).Replace(smallProtocol))
	}
	invalid := writeFile(t, dir, "invalid.yaml", strings.Replace(strings.NewReplacer("%CORPUS%", corpus, "%MIN%", "0.5").Replace(smallProtocol),
		"warmup: 1", "warmpu: 1", 1))
	tests := []struct {
		name       string
		args       []string
		want       int
		wantStderr string // one clear message: it names this
	}{
		{"passing run", []string{"run", "-quiet", "-protocol", proto("pass.yaml", corpus, "0.5"), "-out", filepath.Join(dir, "pass")}, exitOK, ""},
		{"failing verdict", []string{"run", "-quiet", "-protocol", proto("fail.yaml", corpus, "1.0"), "-out", filepath.Join(dir, "fail")}, exitVerdict, "verdict failed"},
		{"invalid protocol", []string{"run", "-quiet", "-protocol", invalid, "-out", filepath.Join(dir, "inv")}, exitUsage, "invalid.yaml:7: sweep.warmpu: unknown key"},
		{"missing corpus", []string{"run", "-quiet", "-protocol", proto("nocorpus.yaml", filepath.Join(dir, "nowhere"), "0.5"), "-out", filepath.Join(dir, "nc")}, exitUsage, "corpus: " + filepath.Join(dir, "nowhere") + " does not exist"},
		{"missing protocol file", []string{"run", "-protocol", filepath.Join(dir, "absent.yaml"), "-out", filepath.Join(dir, "np")}, exitUsage, "cannot read protocol"},
		{"unknown flag", []string{"run", "-bogus"}, exitUsage, "flag provided but not defined"},
		{"unknown command", []string{"frobnicate"}, exitUsage, "unknown command"},
		{"corpus check default", []string{"corpus", "check", "../../corpus/default"}, exitOK, ""},
		{"corpus check bad", []string{"corpus", "check", "../../corpus/testdata/bad"}, exitUsage, "6 problem(s)"},
		{"resume of nothing", []string{"run", "-resume", filepath.Join(dir, "empty")}, exitUsage, "no run in"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, stderr := runCLI(t, tt.args...)
			if got != tt.want {
				t.Fatalf("exit code = %d, want %d; stderr:\n%s", got, tt.want, stderr)
			}
			if tt.wantStderr != "" && !strings.Contains(stderr, tt.wantStderr) {
				t.Errorf("stderr does not name %q:\n%s", tt.wantStderr, stderr)
			}
			oneMessage := tt.name == "invalid protocol" || strings.HasPrefix(tt.name, "missing")
			if oneMessage && strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
				t.Errorf("want one message line, got:\n%s", stderr)
			}
			// A run refused before it starts leaves no results directory
			// (no empty results.db beside the user's real ones).
			if tt.want == exitUsage && len(tt.args) > 0 && tt.args[0] == "run" {
				for i, a := range tt.args[:len(tt.args)-1] {
					if a == "-out" || a == "-resume" {
						if _, err := os.Stat(tt.args[i+1]); !os.IsNotExist(err) {
							t.Errorf("%s exists after a refused run (stat: %v)", tt.args[i+1], err)
						}
					}
				}
			}
		})
	}
}

func TestCorpusCheck_DefaultCounts(t *testing.T) {
	code, out, stderr := runCLI(t, "corpus", "check", "../../corpus/default")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"300", "short 100", "usual 150", "long 50"} {
		if !strings.Contains(out, want) {
			t.Errorf("corpus check output lacks %q:\n%s", want, out)
		}
	}
}

func TestRunJSONSummary(t *testing.T) {
	dir := t.TempDir()
	proto := writeFile(t, dir, "p.yaml", strings.NewReplacer("%CORPUS%", smallCorpus(t, dir), "%MIN%", "0.5").Replace(smallProtocol))
	code, out, stderr := runCLI(t, "run", "-quiet", "-json", "-protocol", proto, "-out", filepath.Join(dir, "o"))
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{`"run_id"`, `"fingerprint"`, `"passes"`, `"recommendation"`} {
		if !strings.Contains(out, want) {
			t.Errorf("-json output lacks %s", want)
		}
	}
}

// TestVersion: version, -version and --version print one line on stdout
// and exit 0.
func TestVersion(t *testing.T) {
	for _, arg := range []string{"version", "-version", "--version"} {
		code, stdout, stderr := runCLI(t, arg)
		if code != exitOK || stderr != "" || !strings.HasPrefix(stdout, "extractbench "+extractbench.ToolVersion+" ") || strings.Count(stdout, "\n") != 1 {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want one line naming version %s", arg, code, stdout, stderr, extractbench.ToolVersion)
		}
	}
}

// TestVersion_LinkedCommit: a binary built without VCS stamping
// (-buildvcs=false, as in a container context without .git) names the
// commit linked in with -X main.commit (scripts/build.sh, scripts/image.sh).
func TestVersion_LinkedCommit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "extractbench")
	build := exec.Command("go", "build", "-buildvcs=false", "-ldflags", "-X main.commit=0123abcd4567", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if want := "extractbench " + extractbench.ToolVersion + " (0123abcd4567) "; !strings.HasPrefix(string(out), want) {
		t.Errorf("version = %q, want it to start with %q", out, want)
	}
}

func TestNearest(t *testing.T) {
	names := []string{"compare", "corpus", "engine", "export", "memory", "plan", "report", "run", "help", "version"}
	for _, tt := range []struct{ got, want string }{
		{"reprot", "report"}, {"rn", "run"}, {"comapre", "compare"}, {"exprot", "export"}, {"mem", "memory"},
		{"frobnicate", ""}, {"x", ""}, {"verison", "version"},
	} {
		if got := nearest(tt.got, names); got != tt.want {
			t.Errorf("nearest(%q) = %q, want %q", tt.got, got, tt.want)
		}
	}
}
