package sizing

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestGGUFTensors_AsLlamaQuantize checks the calculator's GGUF weights
// against files llama-quantize made (testdata/gguf/*.tsv: every tensor's
// type, row length, rows and bytes, read back with gguf-py): the retrain's
// shape (h512, every row a multiple of 256: no fallback) and the committed
// model's (h384: Q4_K_M's q4_K rows fall back to Q5_0, Q6_K to Q8_0), for
// every rung of the ladder made. Each tensor's type must be llama-quantize's
// and the total its tensor bytes.
func TestGGUFTensors_AsLlamaQuantize(t *testing.T) {
	files, err := filepath.Glob("testdata/gguf/h*-*.tsv")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata/gguf/*.tsv (%v)", err)
	}
	for _, file := range files {
		base := strings.TrimSuffix(filepath.Base(file), ".tsv")
		shape, scheme, _ := strings.Cut(base, "-")
		raw, err := os.ReadFile(filepath.Join("testdata", "gguf", shape+"-config.json"))
		if err != nil {
			t.Fatal(err)
		}
		m, err := ParseHFConfig(raw, "extract-llama-15m-"+shape)
		if err != nil {
			t.Fatal(err)
		}
		want := readGGUFTable(t, file)
		got, err := GGUFTensors(m, scheme)
		if err != nil {
			t.Fatalf("%s: %v", base, err)
		}
		var total, wantTotal int64
		seen := map[string]bool{}
		for _, g := range got {
			w, ok := want[g.Name]
			if !ok {
				t.Errorf("%s: %s is not in the file", base, g.Name)
				continue
			}
			seen[g.Name] = true
			if g.Type.Name != w.typ || g.RowLength != w.ne0 || g.Rows != w.ne1 || g.Bytes() != w.bytes {
				t.Errorf("%s: %s predicted %s [%d, %d] %d bytes, file %s [%d, %d] %d bytes",
					base, g.Name, g.Type.Name, g.RowLength, g.Rows, g.Bytes(), w.typ, w.ne0, w.ne1, w.bytes)
			}
			total += g.Bytes()
		}
		for name, w := range want {
			wantTotal += w.bytes
			if !seen[name] {
				t.Errorf("%s: the file has %s, the prediction does not", base, name)
			}
		}
		bytes, fallbacks, err := GGUFWeightBytes(m, scheme)
		if err != nil || bytes != wantTotal || bytes != total {
			t.Errorf("%s: GGUFWeightBytes %d (%v), tensors %d, file %d", base, bytes, err, total, wantTotal)
		}
		if shape == "h512" && fallbacks != 0 {
			t.Errorf("%s: %d fallbacks predicted at hidden 512", base, fallbacks)
		}
		if shape == "h384" && scheme == "q4_k_m" && fallbacks != 48 {
			t.Errorf("%s: %d fallbacks predicted, llama-quantize made 48 (44 Q5_0, 4 Q8_0)", base, fallbacks)
		}
		t.Logf("%s: %d tensor bytes, %d fallbacks", base, bytes, fallbacks)
	}
}

type ggufRow struct {
	typ      string
	ne0, ne1 int64
	bytes    int64
}

func readGGUFTable(t *testing.T, path string) map[string]ggufRow {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]ggufRow{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		c := strings.Split(line, "\t")
		if len(c) != 5 {
			t.Fatalf("%s:%d: %d fields, want 5", path, n, len(c))
		}
		num := func(s string) int64 {
			v, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				t.Fatalf("%s:%d: %v", path, n, err)
			}
			return v
		}
		out[c[0]] = ggufRow{c[1], num(c[2]), num(c[3]), num(c[4])}
	}
	return out
}
