package corpus

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// lineReader reads lines of any length, with the byte offset of each.
type lineReader struct {
	r   *bufio.Reader
	ra  io.ReaderAt // the same file, when it can be read at an offset; nil otherwise
	buf []byte
	off int64
}

// next returns the next line without its "\n", its offset and its length in
// the file including the "\n"; ok is false at the end of the file. The
// line is valid until the next call: one that lies whole in the reader's
// buffer, most of them, is lent from it, not copied.
//
// A line longer than the buffer already held (a document of tens of
// megabytes on one line) is measured first, then read whole at its offset
// into a buffer of its size: appending it a buffer-full at a time would
// allocate and copy it several times over.
func (lr *lineReader) next() (line []byte, offset int64, size int, ok bool, err error) {
	lr.buf = lr.buf[:0]
	for {
		chunk, err := lr.r.ReadSlice('\n')
		if err == nil && len(lr.buf) == 0 {
			return lr.done(chunk)
		}
		if err == bufio.ErrBufferFull && lr.ra != nil && len(lr.buf)+len(chunk) > cap(lr.buf) {
			return lr.longLine(len(lr.buf) + len(chunk))
		}
		lr.buf = append(lr.buf, chunk...)
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF:
			if len(lr.buf) == 0 {
				return nil, lr.off, 0, false, nil
			}
		case err != nil:
			return nil, lr.off, 0, false, err
		}
		return lr.done(lr.buf)
	}
}

// longLine reads the rest of a line of which n bytes were read, then the
// whole line again from the file at its offset.
func (lr *lineReader) longLine(n int) ([]byte, int64, int, bool, error) {
	for {
		chunk, err := lr.r.ReadSlice('\n')
		n += len(chunk)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && err != io.EOF {
			return nil, lr.off, 0, false, err
		}
		break
	}
	lr.buf = make([]byte, n)
	if m, err := lr.ra.ReadAt(lr.buf, lr.off); m < n {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF // the file shrank under us
		}
		return nil, lr.off, 0, false, err
	}
	return lr.done(lr.buf)
}

// done returns line, read whole, and moves past it.
func (lr *lineReader) done(line []byte) ([]byte, int64, int, bool, error) {
	offset, size := lr.off, len(line)
	lr.off += int64(size)
	return bytes.TrimSuffix(line, []byte("\n")), offset, size, true, nil
}

func newLineReader(r io.Reader) *lineReader {
	lr := &lineReader{r: bufio.NewReaderSize(r, 1<<20)}
	lr.ra, _ = r.(io.ReaderAt)
	return lr
}
