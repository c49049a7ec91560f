//go:build linux

package process

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/results"
)

// redactor is the run's redaction of secrets, as pipeline passes it.
func redactor(secrets ...string) extractbench.Redact {
	s := results.NewSecrets(secrets...)
	return func(w io.Writer) io.WriteCloser { return s.Writer(w) }
}

// TestStart_RedactsItsLog: a started engine that prints the key, in
// two writes that split it, leaves a log without it; what it printed last,
// just before it crashed, is in the log when the crash is judged.
func TestStart_RedactsItsLog(t *testing.T) {
	key := "sk-engine-log-0123456789abcdef"
	t.Setenv("EB_TEST_LOG_KEY", key)
	path := filepath.Join(t.TempDir(), "engine.log")
	p, err := Start(`printf 'args: --api-key %s' "${EB_TEST_LOG_KEY%????????????}"; sleep 0.05; printf '%s done\n' "${EB_TEST_LOG_KEY#??????????????????}"; echo "torch.OutOfMemoryError: CUDA out of memory"; exit 1`,
		"", path, "", redactor(key))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop() })
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the engine did not exit")
	}
	if oom, evidence := p.crashEvidence(); !oom {
		t.Errorf("crashEvidence = false (%s): the log's last line was not there yet", evidence)
	}
	p.Stop()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if log := string(b); strings.Contains(log, key) || !strings.Contains(log, "args: --api-key "+results.Redacted+" done") {
		t.Errorf("engine log = %q, want the key redacted", log)
	}
}

// TestEngineScript_KillsGroupOnHangup: the start command's shell kills the
// engine's whole process group when it gets SIGHUP, Pdeathsig's signal.
func TestEngineScript_KillsGroupOnHangup(t *testing.T) {
	p, err := Start("sleep 30 & sleep 30", "", filepath.Join(t.TempDir(), "engine.log"), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	// Not before the shell has its trap: SIGHUP's default action would end
	// the shell alone, its sleeps holding the log's pipe for 30 s (on a
	// loaded machine a fixed 200 ms was not always enough).
	waitHangupTrap(t, p.Pid(), "the shell never set its SIGHUP trap")
	if err := syscall.Kill(p.Pid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		t.Fatal("the shell did not end on SIGHUP")
	}
	for deadline := time.Now().Add(3 * time.Second); groupRuns(p.Pid()); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("processes of the engine's group survived its shell's SIGHUP")
		}
	}
}

// catches reports whether process pid has a handler for sig (its
// /proc/PID/status SigCgt mask).
func catches(pid int, sig syscall.Signal) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if mask, ok := strings.CutPrefix(line, "SigCgt:"); ok {
			m, err := strconv.ParseUint(strings.TrimSpace(mask), 16, 64)
			return err == nil && m&(1<<(uint(sig)-1)) != 0
		}
	}
	return false
}

// groupRuns reports whether a process of group pgid still runs (zombies
// waiting for init to reap them do not).
func groupRuns(pgid int) bool {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 2 && f[2] == strconv.Itoa(pgid) && f[0] != "Z" && f[0] != "X" {
			return true
		}
	}
	return false
}

// TestEngineScript_TrapsHangupUnderNohup runs this test binary with SIGHUP
// ignored, as nohup starts a program: the engine's shell must still set its
// SIGHUP trap (a shell cannot trap a signal ignored on its entry), or a
// killed extractbench leaves its engine running.
func TestEngineScript_TrapsHangupUnderNohup(t *testing.T) {
	if os.Getenv("EXTRACTBENCH_TEST_NOHUP_CHILD") == "1" {
		if !signal.Ignored(syscall.SIGHUP) {
			fmt.Println("child: SIGHUP not ignored at start")
			os.Exit(3)
		}
		p, err := Start("sleep 30 & sleep 30", "", filepath.Join(t.TempDir(), "engine.log"), "", nil)
		if err != nil {
			t.Fatal(err)
		}
		defer p.Stop()
		waitHangupTrap(t, p.Pid(), "under nohup the engine's shell has no SIGHUP trap")
		return
	}
	cmd := exec.Command("/bin/sh", "-c", `trap "" HUP; exec "$0" -test.run='^TestEngineScript_TrapsHangupUnderNohup$' -test.count=1`, os.Args[0])
	cmd.Env = append(os.Environ(), "EXTRACTBENCH_TEST_NOHUP_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child with SIGHUP ignored: %v\n%s", err, out)
	}
}

// waitHangupTrap waits up to 10 s for process pid to catch SIGHUP (its
// shell's trap set), failing the test with msg if it never does.
func waitHangupTrap(t *testing.T, pid int, msg string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !catches(pid, syscall.SIGHUP); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal(msg)
		}
	}
}
