package corpus

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// cycledDocs is n documents made from the default corpus's, cycled, each
// copy with its own id and a last line of its own, as scripts/rss-scale.sh
// makes its corpora: no duplicate ids or texts.
func cycledDocs(tb testing.TB, n int) []Document {
	def, err := LoadDefault()
	if err != nil {
		tb.Fatal(err)
	}
	docs := make([]Document, n)
	for i := range docs {
		d := def.Documents[i%len(def.Documents)]
		d.ID = fmt.Sprintf("s%08d", i)
		d.Text += fmt.Sprintf("\nRef S%08d.", i)
		docs[i] = d
	}
	return docs
}

// benchmarkOpen opens a corpus directory of n cycled documents (with its
// manifest, as a run opens one) and reports documents opened per second of
// the process's CPU time (user + system): the goal is 100,000.
//
// EXTRACTBENCH_BENCH_CORPUS names a corpus to open instead (of any size:
// n is then its own), so that two builds can be timed on the same one.
func benchmarkOpen(b *testing.B, n int) {
	dir := os.Getenv("EXTRACTBENCH_BENCH_CORPUS")
	if dir == "" {
		dir = filepath.Join(b.TempDir(), "corpus")
		if err := WriteDir(dir, cycledDocs(b, n), DefaultCategories); err != nil {
			b.Fatal(err)
		}
	} else {
		n = 0 // its own
	}
	var cpu time.Duration
	for b.Loop() {
		runtime.GC()
		c0 := processCPU()
		c, err := Open(dir)
		cpu += processCPU() - c0
		if err != nil {
			b.Fatal(err)
		}
		if n == 0 {
			n = c.Len()
		}
		if c.Len() != n {
			b.Fatalf("opened %d documents, want %d", c.Len(), n)
		}
		c.Close()
	}
	b.ReportMetric(float64(n)*float64(b.N)/cpu.Seconds(), "docs/cpu-s")
}

func BenchmarkOpen_10k(b *testing.B)  { benchmarkOpen(b, 10_000) }
func BenchmarkOpen_100k(b *testing.B) { benchmarkOpen(b, 100_000) }
