package results

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/klauspost/compress/zstd"
)

// TestZstdCodec_SameBytes: the zstd codec the exports use (zstdCodec,
// registered over arrow-go's) compresses pages to the very bytes arrow-go's
// pooled encoders make (a fresh encoder of their options), at the default
// level and others, whatever the page's size and however many pages it
// compressed before, and arrow-go decodes them back.
func TestZstdCodec_SameBytes(t *testing.T) {
	c, err := compress.GetCodec(compress.Codecs.Zstd)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.(*zstdCodec); !ok {
		t.Fatalf("the registered zstd codec is %T, want *zstdCodec", c)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	page := func(n int) []byte { // compressible: ids, numbers, a few labels
		var b bytes.Buffer
		for i := 0; b.Len() < n; i++ {
			fmt.Fprintf(&b, "doc-%07d,%d,%s;", rng.IntN(100000), rng.Int64N(1e12), []string{"short", "usual", "long"}[rng.IntN(3)])
		}
		return b.Bytes()[:n]
	}
	for _, level := range []int{compress.DefaultCompressionLevel, 1, 3, 9} {
		l := zstd.EncoderLevelFromZstd(level)
		if level == compress.DefaultCompressionLevel {
			l = zstd.SpeedDefault
		}
		for _, n := range []int{0, 1, 100, 4 << 10, 200 << 10, 3 << 20, 50} {
			src := page(n)
			fresh, err := zstd.NewWriter(nil, zstd.WithZeroFrames(true), zstd.WithEncoderLevel(l), zstd.WithEncoderConcurrency(1), zstd.WithAllLitEntropyCompression(true))
			if err != nil {
				t.Fatal(err)
			}
			want := fresh.EncodeAll(src, nil)
			got := c.EncodeLevel(nil, src, level)
			if !bytes.Equal(got, want) {
				t.Errorf("level %d, %d bytes: %d compressed bytes differ from arrow-go's %d", level, n, len(got), len(want))
			}
			back, err := compress.Decode(c, nil, got)
			if err != nil || !bytes.Equal(back, src) {
				t.Errorf("level %d, %d bytes: decoded %d bytes (%v)", level, n, len(back), err)
			}
		}
	}
}
