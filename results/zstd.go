package results

import (
	"io"
	"runtime"
	"sync"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/klauspost/compress/zstd"
)

// zstdCodec is arrow-go's zstd codec (compress.Codecs.Zstd) with encoders
// that last: arrow-go keeps its per-level encoders in a sync.Pool, which
// every garbage collection empties, so an export (whose tight GC goal,
// ExportBounded, collects every few tens of MB) made a new encoder, a
// megabyte of history and tables zeroed, for most of its pages: 3% of a
// merge's CPU, and as much again of the GC's. Here each level has one
// encoder for the process, compressing up to zstdEncoders pages at once,
// with arrow-go's options: the same bytes (TestZstdCodec_SameBytes).
// Decoding and the streaming writers are arrow-go's.
type zstdCodec struct {
	compress.ErrorCodec
	stream compress.StreamingCodec

	mu      sync.Mutex
	byLevel map[zstd.EncoderLevel]*zstd.Encoder
}

// zstdEncoders is how many pages one level's encoder compresses at once
// (each holds about 2 MB for the process's life): an export's files are
// encoded by a few goroutines, one each.
var zstdEncoders = min(runtime.GOMAXPROCS(0), 4)

func init() {
	c, err := compress.GetCodec(compress.Codecs.Zstd)
	if err != nil {
		return
	}
	ec, ok := c.(compress.ErrorCodec)
	sc, ok2 := c.(compress.StreamingCodec)
	if ok && ok2 {
		compress.RegisterCodec(compress.Codecs.Zstd, &zstdCodec{ErrorCodec: ec, stream: sc, byLevel: map[zstd.EncoderLevel]*zstd.Encoder{}})
	}
}

// EncodeLevel compresses src at level as arrow-go's codec does, with the
// level's lasting encoder.
func (c *zstdCodec) EncodeLevel(dst, src []byte, level int) []byte {
	l := zstd.EncoderLevelFromZstd(level)
	if level == compress.DefaultCompressionLevel {
		l = zstd.SpeedDefault
	}
	return c.encoder(l).EncodeAll(src, dst[:0])
}

// encoder is level l's encoder, made on first use with the options of
// arrow-go's pooled ones (zero frames, all literals entropy-coded).
func (c *zstdCodec) encoder(l zstd.EncoderLevel) *zstd.Encoder {
	c.mu.Lock()
	defer c.mu.Unlock()
	enc := c.byLevel[l]
	if enc == nil {
		enc, _ = zstd.NewWriter(nil, zstd.WithZeroFrames(true), zstd.WithEncoderLevel(l),
			zstd.WithEncoderConcurrency(zstdEncoders), zstd.WithAllLitEntropyCompression(true))
		c.byLevel[l] = enc
	}
	return enc
}

func (c *zstdCodec) NewReader(r io.Reader) io.ReadCloser  { return c.stream.NewReader(r) }
func (c *zstdCodec) NewWriter(w io.Writer) io.WriteCloser { return c.stream.NewWriter(w) }
func (c *zstdCodec) NewWriterLevel(w io.Writer, level int) (io.WriteCloser, error) {
	return c.stream.NewWriterLevel(w, level)
}
