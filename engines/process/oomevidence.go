//go:build linux

package process

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// oomWitness is what the machine says about out-of-memory kills, read when
// the engine starts and again when it dies: a SIGKILL is not evidence by
// itself (anyone may send one), but a kill the kernel counted or logged
// after the engine started is.
type oomWitness struct {
	cgroupFile  string // memory.events of this process's cgroup (v2); "" when unreadable
	cgroupKills int64  // its oom_kill count at start
	kmsgSeq     int64  // the kernel log's last sequence number at start; -1 when unreadable
}

// newOOMWitness reads the counts at the engine's start.
func newOOMWitness() oomWitness {
	w := oomWitness{kmsgSeq: -1}
	if path := cgroupEventsFile(); path != "" {
		if n, err := cgroupOOMKills(path); err == nil {
			w.cgroupFile, w.cgroupKills = path, n
		}
	}
	if seq, _, err := scanKmsg(-1); err == nil {
		w.kmsgSeq = seq
	}
	return w
}

// evidence says what the machine recorded of an out-of-memory kill since
// the start ("" for nothing), and what it could not read.
func (w oomWitness) evidence() (found string, unread []string) {
	if w.cgroupFile == "" {
		unread = append(unread, "cgroup memory.events unreadable")
	} else if n, err := cgroupOOMKills(w.cgroupFile); err == nil && n > w.cgroupKills {
		return fmt.Sprintf("%s counts %d oom_kill since the engine started", w.cgroupFile, n-w.cgroupKills), nil
	}
	if w.kmsgSeq < 0 {
		unread = append(unread, "the kernel log unreadable")
	} else if _, line, err := scanKmsg(w.kmsgSeq); err == nil && line != "" {
		return fmt.Sprintf("the kernel log says %q since the engine started", line), nil
	}
	return "", unread
}

// cgroupEventsFile is memory.events of this process's cgroup v2, which an
// engine it starts shares; "" when there is none.
func cgroupEventsFile() string {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "0::"); ok {
			path := "/sys/fs/cgroup" + strings.TrimSpace(rest) + "/memory.events"
			if _, err := os.Stat(path); err == nil {
				return path
			}
		}
	}
	return ""
}

// cgroupOOMKills reads the oom_kill count of a memory.events file.
func cgroupOOMKills(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "oom_kill "); ok {
			return strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		}
	}
	return 0, errors.New("no oom_kill line")
}

// scanKmsg reads the kernel log (/dev/kmsg, without blocking) and returns
// its last sequence number and the last out-of-memory kill it logged after
// sequence number after (none: "").
func scanKmsg(after int64) (last int64, oom string, err error) {
	// Plain syscalls: an *os.File would park a non-blocking read in Go's
	// poller until the kernel logs a new line, instead of returning EAGAIN
	// at the end of the log.
	fd, err := syscall.Open("/dev/kmsg", syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return -1, "", err
	}
	defer syscall.Close(fd)
	last = -1
	buf := make([]byte, 8192)
	for i := 0; i < 1<<16; i++ { // bounded: the ring holds far fewer records
		n, err := syscall.Read(fd, buf)
		if errors.Is(err, syscall.EPIPE) {
			continue // a record was overwritten while we read: go on with the next
		}
		if err != nil || n == 0 {
			break // EAGAIN: the end of the log
		}
		head, msg, ok := strings.Cut(string(buf[:n]), ";")
		if !ok {
			continue
		}
		fields := strings.Split(head, ",")
		if len(fields) < 2 {
			continue
		}
		seq, perr := strconv.ParseInt(fields[1], 10, 64)
		if perr != nil {
			continue
		}
		last = seq
		lower := strings.ToLower(msg)
		if after >= 0 && seq > after && (strings.Contains(lower, "out of memory: killed process") || strings.Contains(lower, "oom-kill:")) {
			oom = strings.TrimSpace(strings.SplitN(msg, "\n", 2)[0])
		}
	}
	return last, oom, nil
}
