package numfmt

import (
	"fmt"
	"io"
)

// Writer keeps the first write error of W, so that a text page can print
// line after line and check Err once at the end.
type Writer struct {
	W   io.Writer
	Err error // the first write error; every write after it is skipped
}

// Write passes p on until the first error, which it then keeps returning.
func (e *Writer) Write(p []byte) (int, error) {
	if e.Err != nil {
		return 0, e.Err
	}
	var n int
	n, e.Err = e.W.Write(p)
	return n, e.Err
}

// Printf writes as fmt.Fprintf does, unless an earlier write failed.
func (e *Writer) Printf(format string, args ...any) {
	if e.Err == nil {
		_, e.Err = fmt.Fprintf(e.W, format, args...)
	}
}
