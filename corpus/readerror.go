package corpus

import (
	"errors"
	"fmt"
	"syscall"
)

// ReadError is a document of a corpus opened by reference that could not be
// read back as it was indexed: its file could not be read (Err is the I/O
// error), or it changed (Err is ErrChanged). Path and Line are where the
// document was when the corpus was loaded.
type ReadError struct {
	ID   string
	Path string
	Line int
	Err  error
}

func (e *ReadError) Error() string {
	if e.OutOfFiles() {
		return fmt.Sprintf("%s:%d: read back document %s: %v: this process ran out of file descriptors (the file did not change)", e.Path, e.Line, e.ID, e.Err)
	}
	return fmt.Sprintf("%s:%d: read back document %s: %v", e.Path, e.Line, e.ID, e.Err)
}

func (e *ReadError) Unwrap() error { return e.Err }

// OutOfFiles reports whether the file could not be opened because this
// process (EMFILE) or the system (ENFILE) had no file descriptor left: the
// file is as it was, the limit is what to change.
func (e *ReadError) OutOfFiles() bool {
	return errors.Is(e.Err, syscall.EMFILE) || errors.Is(e.Err, syscall.ENFILE)
}

// Remedy says what to do before the run is resumed.
func (e *ReadError) Remedy() string {
	if e.OutOfFiles() {
		return "raise the open-file limit (ulimit -n 65536 in the shell, LimitNOFILE= in a systemd unit, nofile in /etc/security/limits.conf) or lower the sweep's concurrency"
	}
	return "restore the file"
}
