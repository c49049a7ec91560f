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

// BenchmarkOpenFloor reads the same corpus as BenchmarkOpen_100k doing
// only part of what Open does, to show what its documents per CPU-second
// are bounded by: each stage adds one step to the one before. "lines"
// reads documents.jsonl and splits its lines; "decode" decodes each
// record in one pass, its text borrowed (parseFast, the fastest decode
// the loader has); "sha256" takes each record's hash, which the manifest
// pins (HashRule), so no open can skip it; "tokens" counts each text's
// ApproxTokens for its length class. Open adds to "tokens" the duplicate
// hashes, the manifest and the index.
func BenchmarkOpenFloor(b *testing.B) {
	dir := os.Getenv("EXTRACTBENCH_BENCH_CORPUS")
	if dir == "" {
		dir = filepath.Join(b.TempDir(), "corpus")
		if err := WriteDir(dir, cycledDocs(b, 100_000), DefaultCategories); err != nil {
			b.Fatal(err)
		}
	}
	enum := map[string]bool{}
	for _, c := range DefaultCategories {
		enum[c] = true
	}
	for stage, name := range []string{"lines", "decode", "sha256", "tokens"} {
		b.Run(name, func(b *testing.B) {
			var cpu time.Duration
			n := 0
			for b.Loop() {
				runtime.GC()
				c0 := processCPU()
				n += readFloor(b, filepath.Join(dir, DocumentsFile), enum, stage)
				cpu += processCPU() - c0
			}
			b.ReportMetric(float64(n)/cpu.Seconds(), "docs/cpu-s")
		})
	}
}

// readFloor reads documents.jsonl through stage (BenchmarkOpenFloor's
// index) and returns its lines.
func readFloor(b *testing.B, path string, enum map[string]bool, stage int) int {
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var fl fastLine
	var hasher spanHasher
	lr := newLineReader(f)
	n := 0
	for ; ; n++ {
		raw, _, _, ok, err := lr.next()
		if err != nil {
			b.Fatal(err)
		}
		if !ok {
			return n
		}
		if stage >= 1 && !parseFast(raw, enum, &fl, true) {
			b.Fatalf("line %d: not decoded in one pass", n+1)
		}
		if stage >= 2 {
			hasher.recordHash(&fl)
		}
		if stage >= 3 {
			ApproxTokens(fl.doc.Text)
		}
	}
}
