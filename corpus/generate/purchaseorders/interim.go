package purchaseorders

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/extractbench/extractbench/corpus"
)

// INTERIM until the fcorp branch lands corpus.ExpectedObject and
// corpus.WriteDirFields: the same shapes, written here.

// expectedObject encodes values as compact JSON, keys in names' order.
func expectedObject(names []string, values map[string]any) (string, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, n := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(n)
		b.Write(k)
		b.WriteByte(':')
		v, err := marshalNoEscape(values[n])
		if err != nil {
			return "", err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.String(), nil
}

func marshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// record is one line of documents.jsonl.
type record struct {
	ID          string             `json:"id"`
	Text        string             `json:"text"`
	LengthClass corpus.LengthClass `json:"length_class"`
	Expected    json.RawMessage    `json:"expected"`
	Lang        string             `json:"lang"`
}

// writeDirFields writes documents.jsonl (no manifest until fcorp lands).
func writeDirFields(dir string, docs []Document) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var b bytes.Buffer
	for _, d := range docs {
		line, err := marshalNoEscape(record{d.ID, d.Text, d.LengthClass, json.RawMessage(d.Expected), d.Lang})
		if err != nil {
			return fmt.Errorf("encode %s: %w", d.ID, err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return os.WriteFile(filepath.Join(dir, corpus.DocumentsFile), b.Bytes(), 0o644)
}

// Document is corpus.Document with its declared expectations, until
// corpus.Document has them.
type Document struct {
	ID          string
	Text        string
	LengthClass corpus.LengthClass
	Expected    string
	Lang        string
}
