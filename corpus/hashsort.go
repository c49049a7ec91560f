package corpus

import (
	"bufio"
	"container/heap"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"slices"
)

// hashRun is how many hashes a hashSorter holds in memory (2 MiB): a
// corpus with more has its hashes sorted in runs of this size, written to
// a temporary file and merged, so that looking for duplicates takes the
// same memory for a million documents as for a thousand.
var hashRun = 1 << 18

// hashSorter collects 64-bit hashes and finds those that occur more than
// once: an external sort, in memory while they fit in one run.
type hashSorter struct {
	buf  []uint64
	file *os.File // the sorted runs, one after the other; nil while one run holds them all
	runs []int64  // hashes in each run written
	err  error
}

// add takes one hash.
func (h *hashSorter) add(v uint64) {
	h.buf = append(h.buf, v)
	if len(h.buf) >= hashRun {
		h.spill()
	}
}

// spill sorts the hashes held and writes them as a run.
func (h *hashSorter) spill() {
	if h.err != nil || len(h.buf) == 0 {
		h.buf = h.buf[:0]
		return
	}
	if h.file == nil {
		if h.file, h.err = os.CreateTemp("", "extractbench-hashes-*"); h.err != nil {
			h.err = fmt.Errorf("sort hashes in a temporary file: %w", h.err)
			return
		}
	}
	slices.Sort(h.buf)
	w := bufio.NewWriterSize(h.file, 64<<10)
	var b [8]byte
	for _, v := range h.buf {
		binary.LittleEndian.PutUint64(b[:], v)
		_, _ = w.Write(b[:])
	}
	if err := w.Flush(); err != nil {
		h.err = fmt.Errorf("sort hashes in temporary file %s: %w", h.file.Name(), err)
	}
	h.runs = append(h.runs, int64(len(h.buf)))
	h.buf = h.buf[:0]
}

// repeated returns the hashes that occur more than once (nil for none) and
// removes the temporary file.
func (h *hashSorter) repeated() (map[uint64]bool, error) {
	defer h.close()
	var rep map[uint64]bool
	note := func(v, prev uint64, n int) {
		if n > 0 && v == prev {
			if rep == nil {
				rep = map[uint64]bool{}
			}
			rep[v] = true
		}
	}
	if h.file == nil && h.err == nil { // one run, in memory
		slices.Sort(h.buf)
		for i, v := range h.buf {
			note(v, h.buf[max(i-1, 0)], i)
		}
		return rep, nil
	}
	h.spill()
	if h.err != nil {
		return nil, h.err
	}
	m := &runMerge{}
	var off int64
	for _, n := range h.runs {
		r := &runReader{r: bufio.NewReaderSize(io.NewSectionReader(h.file, off, n*8), 32<<10), left: n}
		off += n * 8
		if ok, err := r.next(); err != nil {
			return nil, fmt.Errorf("sort hashes in temporary file %s: %w", h.file.Name(), err)
		} else if ok {
			m.runs = append(m.runs, r)
		}
	}
	heap.Init(m)
	var prev uint64
	for i := 0; m.Len() > 0; i++ {
		r := m.runs[0]
		note(r.v, prev, i)
		prev = r.v
		ok, err := r.next()
		if err != nil {
			return nil, fmt.Errorf("sort hashes in temporary file %s: %w", h.file.Name(), err)
		}
		if ok {
			heap.Fix(m, 0)
		} else {
			heap.Pop(m)
		}
	}
	return rep, nil
}

// close removes the temporary file, if any.
func (h *hashSorter) close() {
	if h.file != nil {
		h.file.Close()
		os.Remove(h.file.Name())
		h.file = nil
	}
	h.buf = nil
}

// runReader reads one sorted run back; v is its current hash.
type runReader struct {
	r    *bufio.Reader
	left int64
	v    uint64
}

func (r *runReader) next() (bool, error) {
	if r.left == 0 {
		return false, nil
	}
	var b [8]byte
	if _, err := io.ReadFull(r.r, b[:]); err != nil {
		return false, err
	}
	r.v, r.left = binary.LittleEndian.Uint64(b[:]), r.left-1
	return true, nil
}

// runMerge is a min-heap of runs by their current hash.
type runMerge struct{ runs []*runReader }

func (m *runMerge) Len() int           { return len(m.runs) }
func (m *runMerge) Less(i, j int) bool { return m.runs[i].v < m.runs[j].v }
func (m *runMerge) Swap(i, j int)      { m.runs[i], m.runs[j] = m.runs[j], m.runs[i] }
func (m *runMerge) Push(x any)         { m.runs = append(m.runs, x.(*runReader)) }
func (m *runMerge) Pop() any {
	r := m.runs[len(m.runs)-1]
	m.runs = m.runs[:len(m.runs)-1]
	return r
}
