package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// engineStopGrace is how long a started engine gets to exit after SIGTERM
// before its process group is killed.
const engineStopGrace = 15 * time.Second

// EngineProcess is an engine extractbench started from a protocol's `start`
// command. It runs in its own process group so that stopping it stops the
// whole tree (vLLM and friends fork workers); its output goes to a log file
// kept in the results directory.
type EngineProcess struct {
	cmd     *exec.Cmd
	logFile *os.File
	exited  atomic.Bool
	done    chan struct{}
	waitErr error
	once    sync.Once
}

// StartEngine runs command with sh -c, output to logPath.
func StartEngine(command, logPath string) (*EngineProcess, error) {
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open engine log %s: %w", logPath, err)
	}
	cmd := exec.Command("/bin/sh", "-c", command)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("start engine %q: %w", command, err)
	}
	p := &EngineProcess{cmd: cmd, logFile: f, done: make(chan struct{})}
	go func() { // owned by p: Stop waits for done
		p.waitErr = cmd.Wait()
		p.exited.Store(true)
		close(p.done)
	}()
	return p, nil
}

// Exited reports whether the engine process has ended (crashed, killed by
// the OOM killer, or stopped).
func (p *EngineProcess) Exited() bool { return p != nil && p.exited.Load() }

// ExitError returns how the process ended, once it has.
func (p *EngineProcess) ExitError() error {
	if !p.Exited() {
		return nil
	}
	return p.waitErr
}

// exitDetail says how the process ended and quotes the end of its log.
func (p *EngineProcess) exitDetail() string {
	tail := ""
	if b, err := os.ReadFile(p.logFile.Name()); err == nil {
		if len(b) > 2000 {
			b = b[len(b)-2000:]
		}
		tail = "; log tail: " + string(b)
	}
	return fmt.Sprintf("engine exited (%v) before extractbench stopped it%s", p.waitErr, tail)
}

// WaitReady polls health until it succeeds, the process exits or timeout
// passes; it returns how long the engine took to become ready.
func (p *EngineProcess) WaitReady(ctx context.Context, timeout time.Duration, health func(context.Context) error) (time.Duration, error) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		hctx, hcancel := context.WithTimeout(ctx, 5*time.Second)
		last = health(hctx)
		hcancel()
		if last == nil {
			return time.Since(start), nil
		}
		select {
		case <-p.done:
			return 0, fmt.Errorf("engine exited before it was ready (%v); see its log %s", p.waitErr, p.logFile.Name())
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return 0, fmt.Errorf("engine not ready after %s (last health check: %v); see its log %s", timeout, last, p.logFile.Name())
			}
			return 0, ctx.Err()
		case <-tick.C:
		}
	}
}

// Stop sends SIGTERM to the engine's process group, then SIGKILL after a
// grace period, and waits for it.
func (p *EngineProcess) Stop() error {
	if p == nil {
		return nil
	}
	p.once.Do(func() {
		if !p.Exited() {
			_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
			select {
			case <-p.done:
			case <-time.After(engineStopGrace):
				_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
				<-p.done
			}
		}
		p.logFile.Close()
	})
	return nil
}
