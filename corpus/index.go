package corpus

import (
	"fmt"
	"math"
)

// docIndex holds the documents of a corpus opened by reference (Open) in a
// few flat slices instead of a Document each: per document its id's bytes,
// the id's end (4 bytes), its line's offset (8) and length (4) in
// documents.jsonl and its length class (1): about 27 bytes for an id of ten
// characters, against about 100 for a Document and its id string. Doc makes
// a Document of one entry when it is needed.
type docIndex struct {
	ids     []byte   // every id, one after the other
	idEnds  []uint32 // document i's id is ids[idEnds[i-1]:idEnds[i]]
	offsets []int64  // where its line starts in documents.jsonl
	sizes   []int32  // its line's length, "\n" included
	classes []uint8  // its length class, an index in classNames
	names   []LengthClass
}

// add appends one document.
func (x *docIndex) add(id string, class LengthClass, offset int64, size int) error {
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
	x.ids = append(x.ids, id...)
	x.idEnds = append(x.idEnds, uint32(len(x.ids)))
	x.offsets = append(x.offsets, offset)
	x.sizes = append(x.sizes, int32(size))
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
		ref:         lineRef{offset: x.offsets[i], size: x.sizes[i]},
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
