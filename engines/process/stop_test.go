//go:build linux

package process

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/extractbench/extractbench/pipeline/pipelinetest"
)

// TestRunStopCommand_HangKillsGroup is the hardening issue's item 15: a
// stop: command that hangs is killed with the processes it started. The
// command here starts a child sleep and waits for it; the test's timeout
// hook fires once the child's pid is written, and after runStopCommand
// returns the child must be gone (it used to be orphaned, its shell alone
// killed).
func TestRunStopCommand_HangKillsGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	log, err := os.Create(filepath.Join(dir, "engine.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	old := stopCommandContext
	t.Cleanup(func() { stopCommandContext = old })
	stopCommandContext = func() (context.Context, context.CancelFunc) {
		ctx, cancel := context.WithCancel(context.Background())
		go func() { // "the timeout": once the child runs
			for {
				if b, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(b), "\n") {
					cancel()
					return
				}
				select {
				case <-ctx.Done():
					return
				case <-time.After(10 * time.Millisecond):
				}
			}
		}()
		return ctx, cancel
	}

	err = runStopCommand(fmt.Sprintf("sleep 300 & echo $! > %s; wait", pidFile), log, nil)
	if err == nil || !strings.Contains(err.Error(), "did not end") {
		t.Errorf("err = %v, want the hanging stop command killed", err)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	child, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(child, syscall.SIGKILL) }) // the orphan, should the fix regress
	// SIGKILL is delivered asynchronously: wait (bounded) for the child to
	// end rather than assert on a duration.
	deadline := time.Now().Add(pipelinetest.Deadline)
	for !processGone(child) {
		if time.Now().After(deadline) {
			t.Fatalf("the stop command's child %d still runs after the command was killed: orphaned", child)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// processGone reports whether pid no longer runs: kill(pid, 0) finds no
// process, or finds a zombie (an orphan waiting for its reaper).
func processGone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	i := strings.LastIndexByte(string(b), ')')
	return i >= 0 && len(b) > i+2 && (b[i+2] == 'Z' || b[i+2] == 'X')
}
