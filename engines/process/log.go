package process

import (
	"io"
	"os"
	"time"

	"github.com/extractbench/extractbench"
)

// logDrainWait is how long the end of a started engine waits for the last
// of its output to reach the log, so that the log read for crash evidence
// is complete. A descendant that keeps the output open (a worker, a
// daemon) does not hold the run longer.
const logDrainWait = time.Second

// engineLog carries a started engine's output to its log file through a
// redacting writer: engines print their arguments (vLLM lists api_key
// among its non-default args), so the log would otherwise keep the key.
// The engine writes to a pipe; one goroutine, owned by the engineLog and
// waited for by close, copies it.
type engineLog struct {
	r    *os.File // the pipe's read end
	w    *os.File // its write end, the engine's stdout and stderr; closed once the engine has it
	done chan struct{}
}

// newEngineLog starts copying to log through redact; nil, nil when there
// is nothing to redact (the engine writes to the log directly).
func newEngineLog(log *os.File, redact extractbench.Redact) (*engineLog, error) {
	if redact == nil {
		return nil, nil
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	l := &engineLog{r: r, w: w, done: make(chan struct{})}
	go func() {
		defer close(l.done)
		rw := redact(log)
		_, _ = io.Copy(rw, r) // ends at EOF (every writer gone) or when close closes r
		_ = rw.Close()
	}()
	return l, nil
}

// started closes the parent's copy of the write end: the engine has its own.
func (l *engineLog) started() {
	if l != nil {
		l.w.Close()
	}
}

// drain waits up to d for the engine's output to end and be copied.
func (l *engineLog) drain(d time.Duration) {
	if l == nil {
		return
	}
	select {
	case <-l.done:
	case <-time.After(d):
	}
}

// close waits briefly for the output to end, then stops the copy; what
// was held back for a possible secret is written.
func (l *engineLog) close() {
	if l == nil {
		return
	}
	l.w.Close() // in case the engine never started
	l.drain(logDrainWait)
	l.r.Close()
	<-l.done
}
