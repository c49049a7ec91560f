package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/corpus"
	"github.com/extractbench/extractbench/pipeline/protocol"
	"github.com/extractbench/extractbench/results"
)

// ValidationError lists every problem found before the first request: the
// protocol, its corpus, its output schema, each variant's settings and the
// results directory. Nothing was started or sent. The CLI exits 2 on it.
type ValidationError struct {
	Problems []string
}

// ExitCode is the status the command line exits with when nothing was run
// for the problems listed: 2, a usage or configuration error.
func (e *ValidationError) ExitCode() int { return 2 }

func (e *ValidationError) Error() string {
	if len(e.Problems) == 1 {
		return e.Problems[0]
	}
	return fmt.Sprintf("%d problems, nothing was run:\n  %s", len(e.Problems), strings.Join(e.Problems, "\n  "))
}

// problemsOf turns a load error into lines: a corpus with many problems
// gives one line each.
func problemsOf(err error) []string {
	var le *corpus.LoadError
	if errors.As(err, &le) {
		out := make([]string, 0, len(le.Problems))
		for _, p := range le.Problems {
			out = append(out, fmt.Sprintf("corpus %s: %s", le.Path, p))
		}
		return out
	}
	var pe *protocol.Error
	if errors.As(err, &pe) {
		return pe.Problems
	}
	return []string{err.Error()}
}

// checkVariants checks what each variant needs before its engine is started
// or reached: its API key variable, its in-process engine and that engine's
// settings, the program its start command runs.
func (rs *runState) checkVariants() []string {
	var problems []string
	for i := range rs.proto.Variants {
		v := &rs.proto.Variants[i]
		e := v.Engine
		at := func(key string) string {
			if key == "" {
				return rs.proto.At(fmt.Sprintf("variants.%d.engine", i))
			}
			return rs.proto.At(fmt.Sprintf("variants.%d.engine.%s", i, key))
		}
		if e.APIKeyEnv != "" && os.Getenv(e.APIKeyEnv) == "" {
			problems = append(problems, fmt.Sprintf("%s: variant %s: %s is not set (export %s=... before the run)",
				at("api_key_env"), v.Name, e.APIKeyEnv, e.APIKeyEnv))
		} else if why := KeyProblem(e.APIKeyEnv, os.Getenv(e.APIKeyEnv)); why != "" {
			problems = append(problems, fmt.Sprintf("%s: variant %s: %s", at("api_key_env"), v.Name, why))
		}
		if e.IsBuiltin() {
			s, ok := rs.opts.Starters[e.URL]
			switch {
			case !ok:
				problems = append(problems, fmt.Sprintf("%s: variant %s: %s: this program has no in-process engine of that name", at("url"), v.Name, e.URL))
			default:
				if c, ok := s.(extractbench.Checker); ok {
					for _, err := range c.CheckEngine(v) {
						var fe *extractbench.FieldError
						if errors.As(err, &fe) {
							problems = append(problems, fmt.Sprintf("%s: variant %s: %v", at(fe.Field), v.Name, fe.Err))
						} else {
							problems = append(problems, fmt.Sprintf("%s: variant %s: %v", at(""), v.Name, err))
						}
					}
				}
			}
		}
		if !e.IsBuiltin() && e.Start == "" {
			// An engine the run does not start must already answer: an
			// unreachable URL is found now, not after the variants before it.
			if len(e.URLs) == 0 {
				if err := reachable(e.URL); err != nil {
					problems = append(problems, fmt.Sprintf("%s: variant %s: %s does not answer (%v): start the engine first, fix the URL, or give a start: command",
						at("url"), v.Name, e.URL, err))
				}
			}
			for j, u := range e.URLs {
				if err := reachable(u); err != nil {
					problems = append(problems, fmt.Sprintf("%s: variant %s: replica %s does not answer (%v): start it first, fix the URL, or leave it out of urls",
						at(fmt.Sprintf("urls.%d", j)), v.Name, redactURL(u), err))
				}
			}
		}
		for _, cmd := range []struct{ key, line string }{{"start", e.Start}, {"stop", e.Stop}} {
			if prog := commandProgram(cmd.line); prog != "" {
				if _, err := exec.LookPath(prog); err != nil {
					problems = append(problems, fmt.Sprintf("%s: variant %s: runs %s, which is not found (not in PATH, or not executable)",
						at(cmd.key), v.Name, prog))
				}
			}
		}
	}
	return problems
}

// shellWords are the shell's own commands, which a start line may begin
// with and exec.LookPath cannot find.
var shellWords = map[string]bool{"cd": true, "exec": true, "export": true, "source": true, ".": true, "set": true,
	"ulimit": true, "eval": true, "if": true, "for": true, "while": true, "(": true, "{": true, "!": true, "umask": true}

// assignmentRe matches a shell word that sets a variable for the command.
var assignmentRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// commandProgram is the program a shell command line runs first, when it
// can be told without a shell: the first word after VAR=value assignments.
// "" when the line is empty, starts with a shell word or is quoted or
// substituted.
func commandProgram(line string) string {
	for _, w := range strings.Fields(line) {
		if strings.ContainsAny(w, "\"'`$\\;|&<>(){}*?") {
			return ""
		}
		if assignmentRe.MatchString(w) {
			continue
		}
		if shellWords[w] {
			return ""
		}
		return w
	}
	return ""
}

// KeyProblem says why the API key in variable name cannot be sent as an
// HTTP header (a line break, as a key read from a file with its newline
// has, or another control character), "" when it can. Sent, it fails
// every request before it leaves, which reads as an engine not answering.
func KeyProblem(name, key string) string {
	i := strings.IndexFunc(key, func(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f })
	if i < 0 {
		return ""
	}
	what := fmt.Sprintf("a control character (%q)", key[i])
	if key[i] == '\r' || key[i] == '\n' {
		what = "a line break"
	}
	return fmt.Sprintf("%s holds %s at byte %d, which an HTTP header cannot carry: set it without (export %s=\"$(tr -d '\\r\\n' < FILE)\")", name, what, i+1, name)
}

// checkOutDir refuses a results directory that cannot be one: a file of
// that name, or a directory that cannot be written.
func checkOutDir(dir string) []string {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		parent := filepath.Dir(filepath.Clean(dir))
		for {
			pfi, err := os.Stat(parent)
			if err == nil {
				if !pfi.IsDir() {
					return []string{fmt.Sprintf("-out %s: %s is a file, not a directory", dir, parent)}
				}
				return nil
			}
			next := filepath.Dir(parent)
			if next == parent {
				return nil
			}
			parent = next
		}
	case err != nil:
		return []string{fmt.Sprintf("-out %s: %v", dir, err)}
	case !fi.IsDir():
		return []string{fmt.Sprintf("-out %s: a file of that name exists; give a directory", dir)}
	}
	probe, err := os.CreateTemp(dir, ".extractbench-write-check-*")
	if err != nil {
		return []string{fmt.Sprintf("-out %s: cannot write there: %v", dir, err)}
	}
	probe.Close()
	os.Remove(probe.Name())
	if fi, err := os.Stat(filepath.Join(dir, results.DBName)); err == nil && fi.IsDir() {
		return []string{fmt.Sprintf("-out %s: %s is a directory", dir, results.DBName)}
	}
	return nil
}

// lockOutDir creates the results directory when missing and takes its
// lock: one writer per directory. A directory that cannot be written is a
// configuration error that says so.
func lockOutDir(opts Options) (*results.Lock, error) {
	command := "run"
	if opts.Resume {
		command = "run -resume"
	}
	return lockDir(opts.OutDir, command)
}

// lockDir creates dir if needed and takes its lock for command.
func lockDir(dir, command string) (*results.Lock, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, &ConfigError{fmt.Errorf("results directory %s: cannot create it: %w; choose a writable -out directory", dir, unwrapPath(err))}
	}
	lock, err := results.LockDir(dir, command)
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

// checkFresh refuses a new run into a directory that already holds one:
// two runs in one results.db and requests.parquet would be counted together
// by every query. -append adds a run only beside runs of the same fingerprint.
func (rs *runState) checkFresh(ctx context.Context) error {
	dir := rs.opts.OutDir
	runs, err := results.RunsIn(ctx, dir)
	var refused *results.RefusedError
	if errors.As(err, &refused) {
		return &ConfigError{fmt.Errorf("results directory %s: %w; use another -out directory", dir, refused.Err)}
	}
	if err != nil {
		return err
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
	return &ConfigError{&OutDirUsedError{Dir: dir, Err: fmt.Errorf("results directory %s already holds run %s (status %s, %s fingerprint %.12s): a second run would be mixed with it in results.db and requests.parquet; %s, or write to another -out directory (-append adds a run of the same fingerprint)",
		dir, last.RunID, last.Status, same, last.Fingerprint, hint)}}
}

// OutDirUsedError is the refusal of a new run into a results directory
// that already holds one (inside a ConfigError): cmd adds what its flags
// can do instead.
type OutDirUsedError struct {
	Dir string
	Err error
}

func (e *OutDirUsedError) Error() string { return e.Err.Error() }
func (e *OutDirUsedError) Unwrap() error { return e.Err }

// checkLevels refuses levels larger than the corpus: a pass could never
// have that many requests in flight (or a batch that large).
func (rs *runState) checkLevels() []string {
	if rs.corpus == nil || rs.proto.Sweep.Mode == extractbench.ModeRate {
		return nil // the corpus's own problems are reported; a rate is not a count of requests
	}
	if rs.proto.Sweep.Mode == extractbench.ModeContext {
		if len(rs.levels()) == 0 {
			return []string{fmt.Sprintf("%s: no document of the corpus has a length class (%s): a context sweep has no step", rs.proto.At("sweep.levels"), strings.Join(extractbench.LengthClasses, ", "))}
		}
		return nil // the levels are length classes; the concurrency may exceed a class's documents
	}
	p, n := rs.proto, rs.corpus.Len()
	var problems []string
	for j, l := range p.Sweep.Levels {
		if l > n {
			problems = append(problems, fmt.Sprintf("%s: level %d is larger than the corpus (%d documents): a pass could never have %d requests in flight (or a batch of %d); use levels up to %d, or a larger corpus",
				p.At(fmt.Sprintf("sweep.levels.%d", j)), l, n, l, l, n))
		}
	}
	return problems
}

// reachTimeout bounds the check that an engine the run does not start
// accepts connections.
const reachTimeout = 3 * time.Second

// reachable reports whether something accepts a TCP connection at the URL's
// host and port (the scheme's port when none is written). It sends nothing:
// what answers is checked (served models, version) when the variant's turn
// comes.
func reachable(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return fmt.Errorf("not a URL")
	}
	host := u.Host
	if u.Port() == "" {
		port := "80"
		if u.Scheme == "https" {
			port = "443"
		}
		host = net.JoinHostPort(u.Hostname(), port)
	}
	c, err := net.DialTimeout("tcp", host, reachTimeout)
	if err != nil {
		var oe *net.OpError
		if errors.As(err, &oe) && oe.Err != nil {
			return oe.Err
		}
		return err
	}
	return c.Close()
}
