package process

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/extractbench/extractbench"
)

// Engine process timing bounds.
const (
	// engineStopGrace is how long a started engine gets to exit after
	// SIGTERM before its process group is killed.
	engineStopGrace = 15 * time.Second
	// stopCommandTimeout bounds a protocol's stop: command (docker stop
	// waits 10 s before it kills).
	stopCommandTimeout = 60 * time.Second
)

// Process is an engine extractbench started from a protocol's `start`
// command, in its own process group so that stopping it stops its workers,
// with a log and a pid file in the results directory so that a resume finds
// an engine a crashed attempt left. On Linux it dies with extractbench even
// by kill -9 (Pdeathsig, then engineScript kills the group).
type Process struct {
	cmd         *exec.Cmd
	command     string
	stopCommand string // the protocol's stop:, run by Stop; "" for none
	logFile     *os.File
	log         *engineLog          // the redacting copy of the output to logFile; nil: written directly
	redact      extractbench.Redact // applied to the log
	pidPath     string
	exited      atomic.Bool
	stopping    atomic.Bool // Stop began: a later exit is ours, not a crash
	daemonised  atomic.Bool // start exited 0 and stop: runs the engine's end
	done        chan struct{}
	waitErr     error
	once        sync.Once
	stopErr     error
	loadTime    time.Duration // set by Starter once the engine answered
	oom         oomWitness    // the machine's out-of-memory counts at start
}

// Start runs command with sh -c, its output appended to logPath through
// redact (nil: as it is). A non-empty pidPath receives the process's
// identity (see PIDFile).
// stopCommand, when set, is run by Stop; with it, a start command that
// exits 0 (an engine that daemonises: docker run -d, nohup ... &) is not a
// failure.
func Start(command, stopCommand, logPath, pidPath string, redact extractbench.Redact) (*Process, error) {
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open engine log %s: %w", logPath, err)
	}
	log, err := newEngineLog(f, redact)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("engine log %s: %w", logPath, err)
	}
	cmd := exec.Command("/bin/sh", "-c", engineScript(command))
	cmd.Stdout, cmd.Stderr = f, f
	if log != nil {
		cmd.Stdout, cmd.Stderr = log.w, log.w
	}
	cmd.SysProcAttr = engineSysProcAttr()
	p := &Process{cmd: cmd, command: command, stopCommand: stopCommand, logFile: f, log: log, redact: redact, pidPath: pidPath, done: make(chan struct{}),
		oom: newOOMWitness()}
	started := make(chan error, 1)
	go func() { // owned by p: Stop waits for done
		// Locked for good: the thread ends with this goroutine, after the
		// child is reaped, and with it the child's Pdeathsig.
		runtime.LockOSThread()
		err := cmd.Start()
		log.started()
		if err != nil {
			started <- err
			return
		}
		started <- nil
		p.waitErr = cmd.Wait()
		log.drain(logDrainWait) // its last words, before anyone reads the log for them
		p.exited.Store(true)
		close(p.done)
	}()
	if err := <-started; err != nil {
		log.close()
		f.Close()
		return nil, fmt.Errorf("start engine %q: %w", command, err)
	}
	if pidPath != "" {
		if err := writePIDFile(pidPath, cmd.Process.Pid, command); err != nil {
			p.Stop()
			return nil, err
		}
	}
	return p, nil
}

// engineScript wraps a start command so that its shell outlives it and
// kills the process group on SIGHUP, the signal Pdeathsig sends when
// extractbench dies. dash, the usual /bin/sh, does not exec a -c command,
// so the shell is the engine's parent and a Pdeathsig on it alone would
// orphan the engine. The command runs as a background job the shell waits
// for, because a shell runs a trap only between commands; on SIGTERM (Stop
// signals the whole group) the shell keeps waiting while the engine shuts
// down gracefully. The shell's exit status is the command's (137 when it
// was killed by SIGKILL). A command that ends with & (an engine that
// daemonises) leaves the shell at once; stop: ends that engine.
func engineScript(command string) string {
	return `trap 'kill -KILL 0' HUP
trap : TERM INT
{
` + command + `
} &
child=$!
wait $child; s=$?
while kill -0 $child 2>/dev/null; do wait $child; s=$?; done
exit $s
`
}

// Exited reports whether the engine process has ended (crashed, killed by
// the OOM killer, or stopped). A daemonised engine's start command has
// ended by design: it is not reported.
func (p *Process) Exited() bool {
	return p != nil && p.exited.Load() && !p.daemonised.Load()
}

// Daemonised reports whether the start command exited 0 and left the
// engine running on its own (stop: ends it).
func (p *Process) Daemonised() bool { return p != nil && p.daemonised.Load() }

// ExitError returns how the process ended, once it has.
func (p *Process) ExitError() error {
	if !p.Exited() {
		return nil
	}
	return p.waitErr
}

// Pid is the process id of the start command (the shell, or the engine it
// exec'd), which is also its process group id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// LogPath is the engine's log file.
func (p *Process) LogPath() string { return p.logFile.Name() }

// ExitStatus says how the process ended, in a few words.
func (p *Process) ExitStatus() string {
	return fmt.Sprintf("exit: %v", p.waitErr)
}

// ExitDetail says how the process ended and quotes the end of its log.
func (p *Process) ExitDetail() string {
	tail := ""
	if b := p.logTail(2000); len(b) > 0 {
		tail = "; log tail: " + string(b)
	}
	return fmt.Sprintf("engine exited (%v) before extractbench stopped it%s", p.waitErr, tail)
}

// logTail returns at most n bytes from the end of the engine's log.
func (p *Process) logTail(n int64) []byte {
	f, err := os.Open(p.logFile.Name())
	if err != nil {
		return nil
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil
	}
	off := max(st.Size()-n, 0)
	b := make([]byte, st.Size()-off)
	nr, _ := f.ReadAt(b, off)
	return b[:nr]
}

// waitExit waits up to d for the process to end; it reports whether it has.
func (p *Process) waitExit(d time.Duration) bool {
	if p.Daemonised() {
		return false
	}
	select {
	case <-p.done:
		return true
	case <-time.After(d):
		return false
	}
}

// The readiness poll: WaitReady checks health again after a tenth of the
// time the engine has taken so far, no sooner than readyPollMin and no later
// than readyPollMax. The load time ends at the first check that succeeds,
// so it is late by at most the wait before that check: 10% of it past the
// first 100 ms (a server ready in 0.6 s reads 0.6–0.66 s; polling every
// 250 ms read 752 ms), and never more than 250 ms for a slow engine.
const (
	readyPollMin = 10 * time.Millisecond
	readyPollMax = 250 * time.Millisecond
)

// readyPollInterval is the wait before the next health check of an engine
// that has been starting for elapsed.
func readyPollInterval(elapsed time.Duration) time.Duration {
	return min(max(elapsed/10, readyPollMin), readyPollMax)
}

// WaitReady polls health until it succeeds, the process fails or timeout
// passes (readyPollInterval apart); it returns how long the engine took to
// become ready. A start
// command that exits 0 while a stop: command is set has daemonised its
// engine: polling goes on until ready or timeout.
func (p *Process) WaitReady(ctx context.Context, timeout time.Duration, health func(context.Context) error) (time.Duration, error) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTimer(readyPollMin)
	defer tick.Stop()
	done := p.done
	var last error
	for {
		hctx, hcancel := context.WithTimeout(ctx, 5*time.Second)
		last = health(hctx)
		hcancel()
		if last == nil {
			return time.Since(start), nil
		}
		tick.Reset(readyPollInterval(time.Since(start)))
		select {
		case <-done:
			if p.waitErr == nil && p.stopCommand != "" {
				p.daemonised.Store(true)
				done = nil // the engine lives on its own now; keep polling
				continue
			}
			return 0, fmt.Errorf("engine exited before it was ready (%v); see its log %s", exitText(p.waitErr), p.logFile.Name())
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return 0, fmt.Errorf("engine not ready after %s (last health check: %v); see its log %s", timeout, last, p.logFile.Name())
			}
			return 0, ctx.Err()
		case <-tick.C:
		}
	}
}

func exitText(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// Stop runs the protocol's stop: command if there is one, then sends
// SIGTERM to the engine's process group, SIGKILL after a grace period, and
// waits for it. The pid file is removed once the engine is stopped. The
// error is the stop: command's failure, if any.
func (p *Process) Stop() error {
	if p == nil {
		return nil
	}
	p.once.Do(func() {
		p.stopping.Store(true)
		if p.stopCommand != "" {
			p.stopErr = runStopCommand(p.stopCommand, p.logFile, p.redact)
		}
		if !p.exited.Load() {
			_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
			select {
			case <-p.done:
			case <-time.After(engineStopGrace):
				_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
				<-p.done
			}
		}
		// Workers left in the group after the leader ended.
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		p.log.close()
		p.logFile.Close()
		if p.pidPath != "" && p.stopErr == nil {
			_ = os.Remove(p.pidPath)
		}
	})
	return p.stopErr
}

// runStopCommandTo runs a stop: command with its output appended to the
// log file at logPath through redact.
func runStopCommandTo(command, logPath string, redact extractbench.Redact) error {
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("open engine log %s: %w", logPath, err)
	}
	defer f.Close()
	return runStopCommand(command, f, redact)
}

// stopCommandContext bounds one stop: command (stopCommandTimeout); a
// test replaces it to end a hanging command when it chooses.
var stopCommandContext = func() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), stopCommandTimeout)
}

// runStopCommand runs a protocol's stop: command with sh -c, its output
// appended to the engine's log through redact. The command runs in
// its own process group: one that hangs past stopCommandTimeout is killed
// with everything it started (a docker CLI, a helper sleeping), not its
// shell alone, which would leave them orphaned.
func runStopCommand(command string, log *os.File, redact extractbench.Redact) error {
	ctx, cancel := stopCommandContext()
	defer cancel()
	fmt.Fprintf(log, "\n[extractbench] running the stop command: %s\n", command)
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", command)
	cmd.Stdout, cmd.Stderr = log, log
	if redact != nil {
		rw := redact(log)
		defer rw.Close()
		cmd.Stdout, cmd.Stderr = rw, rw
		cmd.WaitDelay = logDrainWait // a process it leaves behind does not hold the output open
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	err := cmd.Run()
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("engine stop command %q did not end within %s: killed, with every process it started (%v)", command, stopCommandTimeout, err)
	}
	if err != nil {
		return fmt.Errorf("engine stop command %q: %w", command, err)
	}
	return nil
}

// oomLogMarkers are lower-case fragments an engine's log or stderr carries
// when it died for want of memory: PyTorch ("torch.OutOfMemoryError: CUDA
// out of memory"), CUDA and HIP runtime errors, C++ allocation failures,
// llama.cpp's allocators, the kernel's OOM killer as relayed by a wrapper.
// Unlike eval's markers for HTTP bodies, "kv cache" is absent: engines log
// their KV cache size at every start.
var oomLogMarkers = []string{
	"out of memory",
	"outofmemory",
	"cudaerrormemoryallocation",
	"hiperroroutofmemory",
	"std::bad_alloc",
	"cannot allocate memory",
	"failed to allocate",
	"oom-kill",
}

// CrashEvidence waits up to wait for the process's end to be seen (a
// crash refuses connections a moment before the process is reaped) and
// then says whether it ran out of memory (crashEvidence). A daemonised
// engine is not watched: exited is false.
func (p *Process) CrashEvidence(wait time.Duration) (exited, oom bool, evidence string) {
	if !p.waitExit(wait) {
		return false, false, ""
	}
	oom, evidence = p.crashEvidence()
	return true, oom, evidence
}

// crashEvidence says whether the engine's end shows it ran out of memory,
// and what was found either way. Memory needs evidence: its log names an
// out-of-memory error, or, for a SIGKILL extractbench did not send, the
// cgroup's oom_kill count or the kernel log recorded an OOM kill since it
// started. A SIGKILL alone is not evidence: anyone may send one.
func (p *Process) crashEvidence() (oom bool, evidence string) {
	how := exitText(p.waitErr)
	tail := p.logTail(64 << 10)
	lower := bytes.ToLower(tail)
	for _, m := range oomLogMarkers {
		if i := bytes.LastIndex(lower, []byte(m)); i >= 0 {
			return true, fmt.Sprintf("the engine exited (%s) and its log %s says %q", how, p.logFile.Name(), logLine(tail, i))
		}
	}
	if p.killed() && !p.stopping.Load() {
		found, unread := p.oom.evidence()
		if found != "" {
			return true, fmt.Sprintf("the engine was killed by SIGKILL (%s), not sent by extractbench, and %s", how, found)
		}
		why := "the cgroup's oom_kill count and the kernel log show no OOM kill"
		if len(unread) > 0 {
			why = "no OOM kill found (" + strings.Join(unread, "; ") + ")"
		}
		return false, fmt.Sprintf("the engine was killed by SIGKILL (%s), not sent by extractbench, without memory evidence: no out-of-memory text in its log %s, %s", how, p.logFile.Name(), why)
	}
	return false, fmt.Sprintf("the engine exited (%s) and neither its log %s nor the machine shows an out-of-memory error", how, p.logFile.Name())
}

// killed reports whether the engine ended by SIGKILL (a shell that did not
// exec reports its child's SIGKILL as 137).
func (p *Process) killed() bool {
	var ee *exec.ExitError
	if !errors.As(p.waitErr, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ((ws.Signaled() && ws.Signal() == syscall.SIGKILL) || (ws.Exited() && ws.ExitStatus() == 128+int(syscall.SIGKILL)))
}

// logLine returns the line of b around offset i, trimmed to 200 bytes.
func logLine(b []byte, i int) string {
	start := bytes.LastIndexByte(b[:i], '\n') + 1
	end := bytes.IndexByte(b[i:], '\n')
	if end < 0 {
		end = len(b)
	} else {
		end += i
	}
	s := strings.TrimSpace(string(b[start:end]))
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}
