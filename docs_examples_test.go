package extractbench_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// docPages are the pages whose examples a reader runs: the README and
// every page of docs/.
func docPages(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join("docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{"README.md"}, pages...)
}

// docCommand is one command line of a page's ```sh block, continuation
// lines joined.
type docCommand struct {
	line int // where it starts in the page
	text string
}

// shellCommands returns the commands of page's fenced sh blocks
// (```sh, ```bash, ```shell), comment lines left out.
func shellCommands(t *testing.T, page string) []docCommand {
	t.Helper()
	f, err := os.Open(page)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cmds []docCommand
	sc := bufio.NewScanner(f)
	inFence, isShell, n := false, false, 0
	var pending *docCommand
	for sc.Scan() {
		n++
		line := sc.Text()
		if fence, ok := strings.CutPrefix(strings.TrimSpace(line), "```"); ok {
			inFence = !inFence
			isShell = inFence && slices.Contains([]string{"sh", "bash", "shell"}, strings.TrimSpace(fence))
			continue
		}
		if !inFence || !isShell {
			continue
		}
		if pending != nil {
			pending.text += " " + strings.TrimSpace(line)
		} else {
			s := strings.TrimSpace(line)
			if s == "" || strings.HasPrefix(s, "#") {
				continue
			}
			pending = &docCommand{line: n, text: s}
		}
		if cont, ok := strings.CutSuffix(pending.text, `\`); ok {
			pending.text = strings.TrimSpace(cont)
			continue
		}
		cmds = append(cmds, *pending)
		pending = nil
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cmds
}

// docSkip is an example left out, and why.
type docSkip struct {
	pattern *regexp.Regexp
	why     string
}

// docSkips are the examples the test does not run, each with why. An entry
// that matches no example fails the test, so that the list stays true.
var docSkips = []docSkip{
	{regexp.MustCompile(`^go test\b`), "the tests and benchmarks themselves: go test runs them (the benchmarks take minutes)"},
	{regexp.MustCompile(`^go install\b|^export PATH=`), "installs the command into GOPATH/bin: the test builds it once and puts it first on PATH"},
	{regexp.MustCompile(`^echo \$\?`), "prints the exit code of the line before, which the test checks itself"},
	{regexp.MustCompile(`^wait$`), "waits for shards sent to the background: the test runs them one after the other"},
	{regexp.MustCompile(`\bkubectl\b|^night=`), "needs a Kubernetes cluster"},
	{regexp.MustCompile(`^scripts/image\.sh|^skopeo |^podman `), "builds, pushes or runs the container image: buildah, a registry, podman"},
	{regexp.MustCompile(` -url https?://`), "needs an OpenAI-compatible server (vLLM, llama.cpp, ...) listening on the URL"},
	{regexp.MustCompile(`^pip install`), "needs Python and the network"},
	{regexp.MustCompile(`gguf\.sh`), "needs the llama.cpp build of engines/llamacpp/build.sh, Python and NumPy to make the GGUF file"},
	{regexp.MustCompile(`scripts/rss-scale\.sh`), "measures memory at 250,000 and 1,000,000 rows against an older build: tens of minutes"},
}

// docRewrites adapt an example to the test's sandbox without changing what
// it checks (its command, subcommand and flags), each with why.
var docRewrites = []struct {
	pattern *regexp.Regexp
	unless  *regexp.Regexp // an example this matches is left as it is
	replace string
	why     string
}{
	{pattern: regexp.MustCompile(`^go run \./cmd/extractbench\b`), replace: "extractbench", why: "the test built the command once; go run would build it again"},
	{pattern: regexp.MustCompile(`^extractbench run\b`), unless: regexp.MustCompile(` -(shard|resume|url)\b`),
		replace: "extractbench run -shard 0/4", why: "a quarter of the default corpus (74 documents, above the sweep's 64) keeps a run to seconds; a whole one takes minutes"},
	{pattern: regexp.MustCompile(`(\s)/data/extractbench\b`), replace: "${1}data/extractbench", why: "a dataset root shared by every night is outside the clone: here, in the page's folder"},
	{pattern: regexp.MustCompile(`\s*&$`), replace: "", why: "shards sent to the background run one after the other"},
}

// docExitCodes are the examples whose finding may be a non-zero exit code;
// every other example must exit 0.
var docExitCodes = []struct {
	pattern *regexp.Regexp
	codes   []int
	why     string
}{
	{regexp.MustCompile(`^extractbench compare\b`), []int{0, 1, 4}, "equivalence is the finding: 1 not equivalent, 4 too few documents to tell (a quarter of the corpus)"},
	{regexp.MustCompile(`^extractbench run\b.* -baseline `), []int{0, 1}, "1 is a regression against the baseline: a finding"},
}

// TestDocsExamples runs every sh example of README.md and docs/*.md, in
// order, one folder per page (as a reader runs a page from the clone's
// root), against the built-in engine: an example with an unknown flag, a
// command that no longer exists, a file it names that is not there or an
// exit code it should not have fails. What it cannot run here is on
// docSkips with the reason.
func TestDocsExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command and runs the docs' examples: about a minute")
	}
	root, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "extractbench"), "./cmd/extractbench")
	start := time.Now()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/extractbench: %v\n%s", err, out)
	}
	t.Logf("built the command in %v", time.Since(start).Round(time.Second))
	env := []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")}
	for _, kv := range os.Environ() {
		// The examples' environment is a fresh shell's: no CI summary, no shard from a Job.
		name, _, _ := strings.Cut(kv, "=")
		if name != "PATH" && name != "HOME" && name != "GITHUB_STEP_SUMMARY" && !strings.HasPrefix(name, "JOB_COMPLETION") {
			env = append(env, kv)
		}
	}
	skipped := make([]bool, len(docSkips))
	ran := 0
	pages := docPages(t)
	runs := make([][]docCommand, len(pages))
	for p, page := range pages {
		for _, c := range shellCommands(t, page) {
			if i := slices.IndexFunc(docSkips, func(s docSkip) bool { return s.pattern.MatchString(c.text) }); i >= 0 {
				skipped[i] = true
				continue
			}
			runs[p] = append(runs[p], c)
		}
		ran += len(runs[p])
	}
	t.Run("pages", func(t *testing.T) {
		for p, page := range pages {
			if len(runs[p]) == 0 {
				continue
			}
			t.Run(filepath.ToSlash(page), func(t *testing.T) {
				t.Parallel()
				dir := clone(t, root)
				pageEnv := append(slices.Clip(env), "HOME="+filepath.Join(dir, "home"))
				for _, c := range runs[p] {
					runDocCommand(t, page, c, dir, pageEnv)
				}
			})
		}
	})
	t.Run("protocols", func(t *testing.T) {
		dir := clone(t, root)
		checked := 0
		for _, page := range docPages(t) {
			for _, p := range yamlProtocols(t, page) {
				checked++
				file := filepath.Join(dir, fmt.Sprintf("%s-%d.yaml", strings.ReplaceAll(page, string(filepath.Separator), "-"), p.line))
				if err := os.WriteFile(file, []byte(p.text), 0o644); err != nil {
					t.Fatal(err)
				}
				cmd := exec.Command(filepath.Join(bin, "extractbench"), "print-protocol", file)
				cmd.Dir = dir
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Errorf("%s:%d: the protocol example does not validate (%v):\n%s\n%s", page, p.line, err, p.text, tail(out, 2000))
				}
			}
		}
		if checked < 5 {
			t.Errorf("checked %d protocol examples: the yaml blocks were not found", checked)
		}
	})
	for i, s := range docSkips {
		if !skipped[i] {
			t.Errorf("docSkips: %q matches no example of the docs any more: remove it", s.pattern)
		}
	}
	if ran < 20 {
		t.Errorf("ran %d examples of the docs: the sh blocks were not found", ran)
	}
}

// clone makes a folder that reads as the clone's root: every top-level
// entry of the repository that git tracks linked into it, so that the
// paths the examples name (corpus/default, prices.example.yaml,
// reference/...) are there, and what they write lands in the folder. Only
// tracked entries: what a user's own runs left in the checkout
// (extractbench-results/, nightly/, ignored) would otherwise be found by
// the examples that write there, and refused as a used directory.
func clone(t *testing.T, root string) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range topLevel(t, root) {
		if err := os.Symlink(filepath.Join(root, name), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// topLevel lists the repository's tracked top-level entries (git
// ls-files); without git (a source tarball), every entry not starting with
// a dot.
func topLevel(t *testing.T, root string) []string {
	t.Helper()
	seen := map[string]bool{}
	var names []string
	if out, err := exec.Command("git", "-C", root, "ls-files").Output(); err == nil && len(out) > 0 {
		for _, f := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			name, _, _ := strings.Cut(f, "/")
			if !seen[name] && !strings.HasPrefix(name, ".") {
				seen[name] = true
				names = append(names, name)
			}
		}
		return names
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") {
			names = append(names, e.Name())
		}
	}
	return names
}

// runDocCommand runs one example, rewritten by docRewrites, in dir and
// checks its exit code against docExitCodes.
func runDocCommand(t *testing.T, page string, c docCommand, dir string, env []string) {
	t.Helper()
	text := c.text
	for _, r := range docRewrites {
		if r.unless != nil && r.unless.MatchString(text) {
			continue
		}
		text = r.pattern.ReplaceAllString(text, r.replace)
	}
	want := []int{0}
	for _, e := range docExitCodes {
		if e.pattern.MatchString(c.text) {
			want = e.codes
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", text)
	cmd.Dir, cmd.Env = dir, env
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() < 0 {
		t.Errorf("%s:%d: %s: %v", page, c.line, c.text, err)
		return
	}
	code := cmd.ProcessState.ExitCode()
	t.Logf("%s:%d: exit %d in %v: %s", page, c.line, code, time.Since(start).Round(time.Millisecond), text)
	if !slices.Contains(want, code) {
		t.Errorf("%s:%d: %s\nran as: %s\nexit %d, want %v; output ends:\n%s", page, c.line, c.text, text, code, want, tail(out, 2000))
	}
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// yamlProtocols returns the protocols of page's ```yaml blocks: a block
// without variants gets one variant on the built-in engine, so that a
// fragment (a sweep, acceptance criteria) is checked as the protocol it
// belongs in; a block that starts indented is a part of a variant, left
// out.
func yamlProtocols(t *testing.T, page string) []docCommand {
	t.Helper()
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	var out []docCommand
	var block []string
	start, inYAML := 0, false
	for i, line := range strings.Split(string(b), "\n") {
		fence, isFence := strings.CutPrefix(strings.TrimSpace(line), "```")
		switch {
		case isFence && !inYAML && strings.TrimSpace(fence) == "yaml":
			inYAML, start, block = true, i+1, nil
		case isFence && inYAML:
			inYAML = false
			text := strings.Join(block, "\n") + "\n"
			if len(block) == 0 || strings.HasPrefix(block[0], " ") {
				continue
			}
			if !regexp.MustCompile(`(?m)^variants:`).MatchString(text) {
				text += "variants:\n  - {name: docs, engine: {url: builtin, model: sim-8b}}\n"
			}
			out = append(out, docCommand{line: start, text: text})
		case inYAML:
			block = append(block, line)
		}
	}
	return out
}
