package corpus

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"
)

// TestDecodeIndexed_EveryDefaultRecord: every record of the default corpus,
// as EncodeDocuments writes it, takes the fast path and decodes as
// json.Unmarshal decodes it.
func TestDecodeIndexed_EveryDefaultRecord(t *testing.T) {
	c, err := LoadDefault()
	if err != nil {
		t.Fatal(err)
	}
	docs := append(c.Documents, sampleDocs()...)
	for _, d := range docs {
		line, err := EncodeDocuments([]Document{d})
		if err != nil {
			t.Fatal(err)
		}
		line = line[:len(line)-1] // the "\n"
		var got, want Document
		if !decodeIndexed(line, &got) {
			t.Fatalf("%s: the fast path refused its record %.80q", d.ID, line)
		}
		if err := json.Unmarshal(line, &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: decoded %+v, json.Unmarshal %+v", d.ID, got, want)
		}
	}
}

// FuzzDecodeIndexed holds the fast path to json.Unmarshal: whatever it
// accepts, json.Unmarshal accepts and decodes to the same Document.
func FuzzDecodeIndexed(f *testing.F) {
	for _, d := range sampleDocs() {
		line, _ := EncodeDocuments([]Document{d})
		f.Add(line)
	}
	for _, s := range []string{
		`{"id":"a","text":"x\ny \u00e9 \ud83d\ude00","length_class":"short","expected":{"date":null,"amount":"1","category":"rent"}}`,
		`{"id":"a","ID":"b","text":"x","length_class":"short","expected":{}}`,
		`{"id":"a","id":"b"}`,
		`{"id":"a","text":"\/\b\f\r\t\"\\","expected":{"date":"2024-01-01","amount":null}} `,
		`{"id":"a","text":"` + "\xff" + `"}`,
		`{"expected":{"Date":"x"}}`,
		`{"id":null}`,
		`{}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, rec []byte) {
		var got Document
		if !decodeIndexed(rec, &got) {
			return
		}
		var want Document
		if err := json.Unmarshal(rec, &want); err != nil {
			t.Fatalf("fast path accepted %q, json.Unmarshal: %v", rec, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: fast path %+v, json.Unmarshal %+v", rec, got, want)
		}
	})
}

// TestResolve_Allocations bounds what reading a document back allocates:
// its line and its text, once each (encoding/json's unquoting copied the
// text twice more).
func TestResolve_Allocations(t *testing.T) {
	c, err := LoadDefault()
	if err != nil {
		t.Fatal(err)
	}
	var longest Document
	for _, d := range c.Documents {
		if len(d.Text) > len(longest.Text) {
			longest = d
		}
	}
	data, err := EncodeDocuments([]Document{longest})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "c.jsonl")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	opened, err := openByReference(file)
	if err != nil {
		t.Fatal(err)
	}
	d := opened.Doc(0)
	const runs = 20
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		full, err := opened.Resolve(d)
		if err != nil || full.Text != longest.Text {
			t.Fatalf("resolve: %v", err)
		}
	}
	runtime.ReadMemStats(&after)
	perCall := float64(after.TotalAlloc-before.TotalAlloc) / runs
	if limit := 2.5 * float64(len(data)); perCall > limit {
		t.Errorf("Resolve of a %d-byte record allocates %.0f bytes, want at most %.0f (the line and the text)", len(data), perCall, limit)
	}
}

// BenchmarkResolve reads back every document of the default corpus, held
// by reference, as a run's dispatcher does before each request; held, as
// Open holds a corpus of at most MaxHeldBytes. cpu-µs/op is the process's
// CPU (user + system) per document.
func BenchmarkResolve(b *testing.B) {
	c, err := LoadDefault()
	if err != nil {
		b.Fatal(err)
	}
	data, err := EncodeDocuments(c.Documents)
	if err != nil {
		b.Fatal(err)
	}
	file := filepath.Join(b.TempDir(), "c.jsonl")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		b.Fatal(err)
	}
	for _, held := range []bool{false, true} {
		b.Run(map[bool]string{false: "by_reference", true: "held"}[held], func(b *testing.B) {
			limit := int64(0)
			if held {
				limit = MaxHeldBytes
			}
			opened, err := open(file, nil, limit)
			if err != nil {
				b.Fatal(err)
			}
			defer opened.Close()
			b.ReportAllocs()
			i := 0
			c0 := processCPU()
			for b.Loop() {
				if _, err := opened.Resolve(opened.Doc(i % opened.Len())); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64((processCPU()-c0).Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}
