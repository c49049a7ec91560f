package corpus

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"math"
	"os"
	"path/filepath"
	"sync"
)

// docIndex holds the documents of a corpus opened by reference (Open) in a
// few flat slices instead of a Document each: per document its id's bytes,
// the id's end (4 bytes), its line's offset (8), length (4) and number (4)
// in documents.jsonl, its record's hash (8) and its length class (1): about
// 39 bytes for an id of ten characters, against about 100 for a Document
// and its id string. Doc makes a Document of one entry when it is needed.
type docIndex struct {
	ids     []byte   // every id, one after the other
	idEnds  []uint32 // document i's id is ids[idEnds[i-1]:idEnds[i]]
	offsets []int64  // where its line starts in documents.jsonl
	sizes   []int32  // its line's length, "\n" included
	lines   []uint32 // its line's number, from 1
	sums    []uint64 // its record's hash (recordSum): Resolve checks what it reads back
	classes []uint8  // its length class, an index in classNames
	names   []LengthClass
	seed    maphash.Seed
}

// recordSum is the hash of a record's bytes as the index keeps it. It
// lives as long as the process's index, so a process's own seed does.
func (x *docIndex) recordSum(record []byte) uint64 { return maphash.Bytes(x.seed, record) }

// add appends one document.
func (x *docIndex) add(id string, class LengthClass, line int, offset int64, size int, record []byte) error {
	c := -1
	for i, n := range x.names {
		if n == class {
			c = i
		}
	}
	if c < 0 {
		if len(x.names) > 255 {
			return fmt.Errorf("more than 256 length classes")
		}
		c = len(x.names)
		x.names = append(x.names, internClass(class))
	}
	if len(x.ids)+len(id) > math.MaxUint32 {
		return fmt.Errorf("the ids take more than 4 GiB")
	}
	if line > math.MaxUint32 {
		return fmt.Errorf("more than %d lines", uint32(math.MaxUint32))
	}
	x.ids = append(x.ids, id...)
	x.idEnds = append(x.idEnds, uint32(len(x.ids)))
	x.offsets = append(x.offsets, offset)
	x.sizes = append(x.sizes, int32(size))
	x.lines = append(x.lines, uint32(line))
	x.sums = append(x.sums, x.recordSum(record))
	x.classes = append(x.classes, uint8(c))
	return nil
}

func (x *docIndex) len() int { return len(x.idEnds) }

// doc is document i held by reference: its id, class and line, no text.
func (x *docIndex) doc(i int) Document {
	var start uint32
	if i > 0 {
		start = x.idEnds[i-1]
	}
	return Document{
		ID:          string(x.ids[start:x.idEnds[i]]),
		LengthClass: x.names[x.classes[i]],
		ref:         lineRef{offset: x.offsets[i], size: x.sizes[i], line: x.lines[i], sum: x.sums[i]},
	}
}

// Len is the number of documents.
func (c *Corpus) Len() int {
	if c.index != nil {
		return c.index.len()
	}
	return len(c.Documents)
}

// Doc is document i (0 ≤ i < Len), in file order. For a corpus opened by
// reference its text and expectations are empty until Resolve reads them.
func (c *Corpus) Doc(i int) Document {
	if c.index != nil {
		return c.index.doc(i)
	}
	return c.Documents[i]
}

// Open reads and validates a corpus like Load, decoding each record once.
// A corpus whose documents.jsonl is at most MaxHeldBytes is held in memory
// as Load holds it (Documents). A larger one is held by reference: Open
// keeps each document's id, length class and the place of its line in
// documents.jsonl (a compact index: Len and Doc read it; Documents stays
// nil) and the file open, and Resolve reads a document's line back when it
// is sent. Memory then grows by about 39 bytes a document. Close closes
// the file.
func Open(path string) (*Corpus, error) {
	return open(path, nil, MaxHeldBytes)
}

// OpenFields opens a corpus of the declared fields exp as Open does,
// checking it as LoadFields does; Resolve fills each document's
// Expected.Object.
func OpenFields(path string, exp Expectations) (*Corpus, error) {
	return open(path, &exp, MaxHeldBytes)
}

// DefaultMaxHeldBytes is MaxHeldBytes unless changed: 64 MiB of records,
// about 12,000 documents of the default corpus's shape, held in memory
// cost about as much again in memory, a request nothing to read.
const DefaultMaxHeldBytes = 64 << 20

// MaxHeldBytes is the size of the largest documents.jsonl that Open holds
// in memory; a larger one is held by reference. A test sets it to 0 to
// read a small corpus by reference.
var MaxHeldBytes int64 = DefaultMaxHeldBytes

// open opens the corpus at path, held in memory when its documents.jsonl
// is at most held bytes.
func open(path string, exp *Expectations, held int64) (*Corpus, error) {
	docsPath := path
	if info, err := os.Stat(path); err == nil && info.IsDir() {
		docsPath = filepath.Join(path, DocumentsFile)
	}
	if info, err := os.Stat(docsPath); err == nil && info.Size() <= held {
		return load(path, exp)
	}
	seed := maphash.MakeSeed()
	x := &docIndex{seed: seed}
	var indexErr error
	s, err := read(path, exp, func(d *Document, line int, offset int64, size int, record []byte) {
		if err := x.add(d.ID, d.LengthClass, line, offset, size, record); err != nil && indexErr == nil {
			indexErr = err
		}
	}, func() { x = &docIndex{seed: seed} }, true)
	if err != nil {
		return nil, err
	}
	if len(s.problems) > 0 {
		return nil, &LoadError{Path: path, Problems: s.problems}
	}
	if indexErr != nil {
		return nil, fmt.Errorf("open corpus %s: %w", path, indexErr)
	}
	s.corpus.index = x
	if abs, err := filepath.Abs(docsPath); err == nil {
		docsPath = abs // name the same file whatever the working directory becomes
	}
	s.corpus.docsPath = docsPath
	// One file for every request: Resolve reads at an offset and checks
	// what it reads by its hash, so a file changed since the scan is seen.
	if s.corpus.file, err = os.Open(docsPath); err != nil {
		return nil, fmt.Errorf("open corpus %s: %w", path, err)
	}
	return s.corpus, nil
}

// Close closes the file of a corpus held by reference; Resolve then fails.
// A corpus held in memory has none. Close may be called on a nil corpus.
func (c *Corpus) Close() error {
	if c == nil || c.file == nil {
		return nil
	}
	return c.file.Close()
}

// internClass returns the package's constant for a known class, so that a
// million documents share three strings.
func internClass(c LengthClass) LengthClass {
	for _, k := range []LengthClass{Short, Usual, Long} {
		if c == k {
			return k
		}
	}
	return c
}

// ErrChanged says that a document's line no longer holds the record the
// corpus indexed: the file changed after it was loaded.
var ErrChanged = errors.New("its line no longer holds the record indexed when the run loaded the corpus: the file changed after it was loaded")

// Resolve returns d with its text and expectations, reading its line from
// the file for a corpus opened by reference; other documents are returned
// as they are. The line read back must hold the very record indexed (its
// hash): a file that changed, or could not be read, gives a *ReadError and
// never another document, or an empty one.
func (c *Corpus) Resolve(d Document) (Document, error) {
	if d.ref.size == 0 || c.docsPath == "" || c.index == nil {
		return d, nil
	}
	fail := func(err error) (Document, error) {
		return d, &ReadError{ID: d.ID, Path: c.docsPath, Line: int(d.ref.line), Err: err}
	}
	if c.file == nil {
		return fail(os.ErrClosed)
	}
	bp := lineBufs.Get().(*[]byte)
	defer lineBufs.Put(bp)
	if cap(*bp) < int(d.ref.size) {
		*bp = make([]byte, d.ref.size)
	}
	buf := (*bp)[:d.ref.size]
	if _, err := c.file.ReadAt(buf, d.ref.offset); err != nil {
		if errors.Is(err, io.EOF) {
			return fail(ErrChanged) // the file is shorter than it was
		}
		return fail(err)
	}
	buf = bytes.TrimSuffix(bytes.TrimSuffix(buf, []byte("\n")), []byte("\r"))
	if d.ref.offset == 0 {
		buf = bytes.TrimPrefix(buf, utf8BOM)
	}
	if c.index.recordSum(buf) != d.ref.sum {
		return fail(ErrChanged)
	}
	var full Document
	if c.Fields != nil {
		if !c.decodeFields(buf, &full) {
			return fail(ErrChanged) // the same bytes were valid when indexed
		}
	} else if !decodeIndexed(buf, &full) {
		full = Document{}
		if err := json.Unmarshal(buf, &full); err != nil {
			return fail(ErrChanged) // the same bytes parsed when indexed: not reached unless the hashes collide
		}
	}
	if full.ID != d.ID {
		return fail(ErrChanged)
	}
	full.LengthClass = d.LengthClass
	return full, nil
}

// lineBufs are the buffers Resolve reads lines into: what it decodes is
// copied out of them.
var lineBufs = sync.Pool{New: func() any { return new([]byte) }}

// decodeFields decodes a record of declared fields read back: its id,
// text and lang, and its expected object made canonical.
func (c *Corpus) decodeFields(rec []byte, d *Document) bool {
	if !json.Valid(rec) {
		return false
	}
	v, _ := decodeRecord(rec)
	str := func(x any) string { s, _ := x.(string); return s }
	obj, probs := checkExpected(fieldOf(v, "expected"), &Expectations{Names: c.Fields})
	if len(probs) > 0 {
		return false
	}
	*d = Document{ID: str(fieldOf(v, "id")), Text: str(fieldOf(v, "text")), Lang: str(fieldOf(v, "lang")), Expected: Expected{Object: obj}}
	return true
}

// TextSize is the length of d's text, or of its line for a document held by
// reference (a close upper bound), without reading it.
func (c *Corpus) TextSize(d Document) int {
	if d.ref.size > 0 {
		return int(d.ref.size)
	}
	return len(d.Text)
}

// Keep keeps the documents whose id keep accepts, in file order, and says
// how many are left (a run's shard: the rest are not its documents). The
// corpus's Manifest still describes the whole file.
func (c *Corpus) Keep(keep func(id string) bool) int {
	if c.index == nil {
		kept := c.Documents[:0]
		for _, d := range c.Documents {
			if keep(d.ID) {
				kept = append(kept, d)
			}
		}
		c.Documents = kept
		return len(kept)
	}
	x, sub := c.index, &docIndex{names: c.index.names, seed: c.index.seed}
	for i := range x.len() {
		var start uint32
		if i > 0 {
			start = x.idEnds[i-1]
		}
		id := x.ids[start:x.idEnds[i]]
		if !keep(string(id)) {
			continue
		}
		sub.ids = append(sub.ids, id...)
		sub.idEnds = append(sub.idEnds, uint32(len(sub.ids)))
		sub.offsets = append(sub.offsets, x.offsets[i])
		sub.sizes = append(sub.sizes, x.sizes[i])
		sub.lines = append(sub.lines, x.lines[i])
		sub.sums = append(sub.sums, x.sums[i])
		sub.classes = append(sub.classes, x.classes[i])
	}
	c.index = sub
	return sub.len()
}
