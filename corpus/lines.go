package corpus

import (
	"bufio"
	"bytes"
	"io"
)

// lineReader reads lines of any length, with the byte offset of each.
type lineReader struct {
	r   *bufio.Reader
	buf []byte
	off int64
}

// next returns the next line without its "\n", its offset and its length in
// the file including the "\n"; ok is false at the end of the file.
func (lr *lineReader) next() (line []byte, offset int64, size int, ok bool, err error) {
	lr.buf = lr.buf[:0]
	for {
		chunk, err := lr.r.ReadSlice('\n')
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
		offset, size = lr.off, len(lr.buf)
		lr.off += int64(size)
		return bytes.TrimSuffix(lr.buf, []byte("\n")), offset, size, true, nil
	}
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 1<<20)}
}
