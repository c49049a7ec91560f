package process

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// PIDFile is the content of engine-<variant>.pid in the results
// directory: who the started engine is, so that a resumed run can find an
// engine its crashed first attempt left running and stop it before a fresh
// start. It is written when the engine starts, rewritten once it is ready
// (the shell has exec'd the engine by then) and removed when extractbench
// stops the engine.
type PIDFile struct {
	PID        int    `json:"pid"`         // the start command's process (the shell, or the engine it exec'd)
	PGID       int    `json:"pgid"`        // its process group: the engine and its workers
	StartTicks uint64 `json:"start_ticks"` // /proc/PID/stat starttime: tells this process from a later one with the same pid
	Cmdline    string `json:"cmdline"`     // /proc/PID/cmdline, NUL bytes as spaces
	Command    string `json:"command"`     // the protocol's start:
	StartedAt  int64  `json:"started_at_ms"`
}

// writePIDFile records pid's identity as it is now.
func writePIDFile(path string, pid int, command string) error {
	rec := PIDFile{PID: pid, PGID: pid, Command: command, StartedAt: time.Now().UnixMilli()}
	if st, err := readProcStat(pid); err == nil {
		rec.PGID, rec.StartTicks = st.pgid, st.startTicks
	}
	rec.Cmdline, _ = readCmdline(pid)
	b, _ := json.MarshalIndent(rec, "", "  ")
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write engine pid file %s: %w", path, err)
	}
	return nil
}

// refreshPIDFile rewrites the pid file once the engine is ready, so that
// its cmdline is the engine's and not the shell's that started it.
func (p *Process) refreshPIDFile() {
	if p.pidPath != "" && !p.exited.Load() {
		_ = writePIDFile(p.pidPath, p.cmd.Process.Pid, p.command)
	}
}

// StopStale reads the pid file at path, left by a run that did not
// stop its engine (killed, or the machine lost power), and stops that
// engine's process group if the pid is alive and still the same process:
// the same /proc/PID/cmdline and start time. It returns what it did ("" when
// there was no pid file) and removes the file; a pid that is now another
// program is left alone.
func StopStale(path string) (string, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read engine pid file %s: %w", path, err)
	}
	var rec PIDFile
	if err := json.Unmarshal(b, &rec); err != nil || rec.PID <= 0 {
		_ = os.Remove(path)
		return fmt.Sprintf("ignored the unreadable pid file %s", path), nil
	}
	what, stop := sameProcess(rec)
	if stop {
		if err := killGroup(rec); err != nil {
			return "", fmt.Errorf("stop the engine left by the interrupted run (pid %d, process group %d, from %s): %w", rec.PID, rec.PGID, path, err)
		}
		what = fmt.Sprintf("stopped the engine left running by the interrupted run: pid %d, process group %d (%s)", rec.PID, rec.PGID, rec.Cmdline)
	}
	if err := os.Remove(path); err != nil {
		return what, fmt.Errorf("remove engine pid file %s: %w", path, err)
	}
	return what, nil
}

// sameProcess says whether rec's pid still runs the process rec describes.
func sameProcess(rec PIDFile) (string, bool) {
	if err := syscall.Kill(rec.PID, 0); errors.Is(err, syscall.ESRCH) {
		return fmt.Sprintf("the engine of the interrupted run (pid %d) is no longer running", rec.PID), false
	}
	cmdline, err := readCmdline(rec.PID)
	if err != nil {
		return fmt.Sprintf("pid %d of the interrupted run's engine cannot be checked (%v): left alone", rec.PID, err), false
	}
	st, err := readProcStat(rec.PID)
	sameStart := err == nil && rec.StartTicks != 0 && st.startTicks == rec.StartTicks
	switch {
	case cmdline == rec.Cmdline && (rec.StartTicks == 0 || sameStart):
		return "", true
	case sameStart && strings.HasPrefix(rec.Cmdline, "/bin/sh -c "):
		// Recorded before the shell exec'd the engine; same process.
		return "", true
	}
	return fmt.Sprintf("pid %d now runs %q, not the interrupted run's engine %q: left alone", rec.PID, cmdline, rec.Cmdline), false
}

// killGroup sends SIGTERM to the group, then SIGKILL after the grace period.
func killGroup(rec PIDFile) error {
	pgid := rec.PGID
	if pgid <= 0 {
		pgid = rec.PID
	}
	if err := syscall.Kill(-pgid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	deadline := time.Now().Add(engineStopGrace)
	for time.Now().Before(deadline) {
		if errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH) {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}

// readCmdline returns /proc/PID/cmdline with its NUL separators as spaces.
func readCmdline(pid int) (string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return "", err
	}
	b = bytes.TrimRight(b, "\x00")
	return string(bytes.ReplaceAll(b, []byte{0}, []byte{' '})), nil
}

type procStat struct {
	pgid       int
	startTicks uint64
}

// readProcStat reads the process group and start time from /proc/PID/stat.
func readProcStat(pid int) (procStat, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStat{}, err
	}
	// The command name (field 2) is in parentheses and may hold spaces.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("parse /proc/%d/stat", pid)
	}
	f := strings.Fields(string(b[i+1:])) // f[0] is field 3 (state)
	if len(f) < 20 {
		return procStat{}, fmt.Errorf("parse /proc/%d/stat: %d fields", pid, len(f)+2)
	}
	pgid, err1 := strconv.Atoi(f[2])                // field 5
	start, err2 := strconv.ParseUint(f[19], 10, 64) // field 22
	if err1 != nil || err2 != nil {
		return procStat{}, fmt.Errorf("parse /proc/%d/stat", pid)
	}
	return procStat{pgid: pgid, startTicks: start}, nil
}
